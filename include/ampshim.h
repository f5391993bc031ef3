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

/* The library's version, "MAJOR.MINOR.PATCH". */
const char *ampshim_version(void);

#ifdef __cplusplus
}
#endif

#endif
