/* ampshim: automatic mixed precision for unmodified BLAS programs.
 * Public interface of libampshim.so. A program that must also run without the
 * shim looks these up with dlsym(RTLD_DEFAULT, ...) instead of linking. */
#ifndef AMPSHIM_H
#define AMPSHIM_H

#ifdef __cplusplus
extern "C" {
#endif

#define AMPSHIM_VERSION_MAJOR 0
#define AMPSHIM_VERSION_MINOR 1
#define AMPSHIM_VERSION_PATCH 0

#include <stddef.h>

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *ampshim_version(void);

/* Regions: the calling thread's hooked calls between a push and its pop run
 * autocast (in dtype) or in fp32, whatever AMPSHIM_THREADS or ampctl say;
 * regions nest, and an fp32 region wins over autocast regions inside it.
 * Each returns 0, or -1 with errno EINVAL (bad dtype, or a pop that does not
 * match the innermost push) or EOVERFLOW (more than 32 deep). When the shim
 * is disabled (AMPSHIM_ENABLE=0) they do nothing and return 0. */
enum ampshim_dtype { AMPSHIM_DEFAULT = 0, AMPSHIM_BF16 = 1, AMPSHIM_FP16 = 2, AMPSHIM_TF32 = 3 };
int ampshim_autocast_push(int dtype);
int ampshim_autocast_pop(void);
int ampshim_fp32_push(void);
int ampshim_fp32_pop(void);

/* The names of release 0.1: aliases of the four above, to be removed in 0.2.
 * Every public name of libampshim.so is now ampshim_*. */
int amp_autocast_push(int dtype) __attribute__((deprecated("use ampshim_autocast_push")));
int amp_autocast_pop(void) __attribute__((deprecated("use ampshim_autocast_pop")));
int amp_fp32_push(void) __attribute__((deprecated("use ampshim_fp32_push")));
int amp_fp32_pop(void) __attribute__((deprecated("use ampshim_fp32_pop")));

/* Reads and/or writes a control name (see ampctl(1) for the list; in the
 * process, "thread.self." stands for the calling thread's "thread.<tid>.").
 * Values are typed by name: int (-1 default, 0, 1) for *.enabled and
 * *.active; uint64_t for counters, process.pid, process.generation and
 * opt.audit_sample (the only one of them that can be written); text for the
 * rest, read into the buffer oldp of *oldlenp bytes (on return
 * *oldlenp is the length with the terminating NUL) and written from newp of
 * newlen bytes. Pass NULL to skip reading or writing. Returns 0 or an errno
 * value: ENOENT unknown name, EPERM read-only, EINVAL bad size or value,
 * ENOTSUP when the shim is disabled. */
int ampshim_ctl(const char *name, void *oldp, size_t *oldlenp, const void *newp, size_t newlen);

#ifdef __cplusplus
}
#endif

#endif
