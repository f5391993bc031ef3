/* Who makes a hooked call, from its return address: its names (the calling
 * object and function), whether AMPSHIM_CALLERS selects that code
 * (object-basename and symbol globs), which call-site policy entry applies,
 * and whether it is a numerical library calling itself (its calls are the
 * library's business: forwarded untouched). The answers are cached by
 * return address in small lock-free tables (a call site's answer never
 * changes while its object is loaded), so a decided call pays one load;
 * when the loader unloads an object, the answers for addresses it held are
 * forgotten (a library loaded later at the same address is another
 * caller). */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/callers.h"

#include "loader/loader.h"
#include "runtime/addr_cache.h"
#include "runtime/threads.h"

__thread void *amp_tls_caller __attribute__((tls_model("initial-exec")));
__thread void *amp_tls_library_site __attribute__((tls_model("initial-exec")));
__thread uint8_t amp_tls_library_answer __attribute__((tls_model("initial-exec")));

enum { CACHE_SIZE = 1024 };

/* The answers (0 to 3) by return address (runtime/addr_cache.h). */
AMP_ADDR_CACHE(selected_cache, CACHE_SIZE, 2);
AMP_ADDR_CACHE(library_cache, CACHE_SIZE, 2);
AMP_ADDR_CACHE(onednn_caller_cache, CACHE_SIZE, 2);

/* The cached answer for addr, or -1. */
static int cached(const struct amp_addr_cache *c, void *return_address)
{
    return (int)amp_addr_cache_get(c, return_address);
}

static int remember(const struct amp_addr_cache *c, void *return_address, int answer)
{
    return (int)amp_addr_cache_put(c, return_address, (uint64_t)answer);
}

void amp_caller_name(void *return_address, struct amp_caller *c)
{
    Dl_info info;
    if (dladdr(return_address, &info) && info.dli_fname) {
        c->object = info.dli_fname;
        c->function = info.dli_sname;
        c->base = (uintptr_t)info.dli_fbase;
    } else {
        c->object = AMP_CALLER_UNNAMED;
        c->function = NULL;
        c->base = 0;
    }
}

int amp_caller_selected(void *return_address)
{
    /* Calls are decided from their caller for call-site policy entries
     * too (t->caller_filter): without AMPSHIM_CALLERS every caller is. */
    if (!amp_rt.cfg.callers[0])
        return 1;
    int answer = cached(&selected_cache, return_address);
    if (answer >= 0)
        return answer;
    struct amp_caller c;
    amp_caller_name(return_address, &c);
    return remember(&selected_cache, return_address,
                    amp_config_selects_caller(&amp_rt.cfg, c.object, c.function));
}

/* ---- call-site policy entries (NAME@CALLER=CATEGORY) ---- */

/* One answer: the category the call-site entries give calls of `hook` from
 * `site`, [accumulates], AMP_CAT_UNSET where none matches. Published once
 * and never changed, so a reader that loads the pointer sees a whole record;
 * records are never freed (the pool bounds them). */
struct site_answer {
    void *site;
    uint16_t hook;
    uint8_t category[2];
};

enum { SITE_CACHE = 1024, SITE_POOL = 4096 };
static struct site_answer *_Atomic site_cache[SITE_CACHE];
static struct site_answer site_pool[SITE_POOL];
static unsigned site_pool_used;
static pthread_mutex_t site_lock = PTHREAD_MUTEX_INITIALIZER;

int amp_caller_site_category(void *return_address, enum amp_device dev, enum amp_hook_id hook,
                             int accumulates)
{
    uint64_t addr = (uint64_t)(uintptr_t)return_address;
    size_t slot = (size_t)(((addr >> 2) ^ (uint64_t)hook * 0x9e37u) * 0x9e3779b97f4a7c15ull >> 54) %
                  SITE_CACHE;
    struct site_answer *a = atomic_load_explicit(&site_cache[slot], memory_order_acquire);
    if (a && a->site == return_address && a->hook == hook)
        return a->category[accumulates != 0];
    /* Asked outside any lock of ours (dladdr takes the loader's). */
    struct amp_caller c;
    amp_caller_name(return_address, &c);
    struct site_answer fresh = {return_address, (uint16_t)hook, {0, 0}};
    for (int acc = 0; acc < 2; acc++)
        fresh.category[acc] = (uint8_t)amp_policy_site_category(&amp_rt.cfg.policy, dev, hook, acc,
                                                                c.object, c.function);
    struct amp_quiet quiet;
    amp_lock_quietly(&site_lock, &quiet);
    if (site_pool_used < SITE_POOL) {
        struct site_answer *r = &site_pool[site_pool_used++];
        *r = fresh;
        atomic_store_explicit(&site_cache[slot], r, memory_order_release);
    }
    amp_unlock_quietly(&site_lock, &quiet);
    return fresh.category[accumulates != 0];
}

/* ---- numerical libraries ---- */

static int is_main_program(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    /* The first object is the program itself (its name is empty). */
    *(uintptr_t *)data = info->dlpi_addr;
    return 1;
}

/* Whether a Python extension module (by its file name) imports a BLAS
 * wrapper of blas_wrappers.txt: the wrapper's module name, as a C string,
 * is in the object (Cython names the module it takes functions from).
 * Read once per object; objects over 256 MiB are not read. */
static int imports_blas_wrapper(const char *path, const char *file)
{
    if (!strstr(file, ".cpython-") && !strstr(file, ".abi3.so") && !strstr(file, ".pypy"))
        return 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return 0;
    void *map = MAP_FAILED;
    if (fstat(fd, &st) == 0 && st.st_size > 0 && st.st_size <= (off_t)256 << 20)
        map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED)
        return 0;
    int found = 0;
    for (int i = 0; i < AMP_BLAS_WRAPPER_COUNT && !found; i++) {
        /* with its terminating NUL: the name itself, not a longer one */
        const char *name = amp_blas_wrapper_module[i];
        found = memmem(map, (size_t)st.st_size, name, strlen(name) + 1) != NULL;
    }
    munmap(map, (size_t)st.st_size);
    return found;
}

/* Whether the object at `base` (file `path`) is a numerical library (enum
 * amp_library): a library of a hooked family by its file name (CUDA's,
 * libdnnl), a shared object that defines, in its own symbol table, a BLAS
 * or LAPACK entry point ampshim hooks (libopenblas, libblas and its CBLAS,
 * liblapack, ...), one libraries.txt lists, or an extension module that
 * imports a BLAS wrapper of blas_wrappers.txt. The program itself never
 * is, nor a framework embedded_blas.txt lists (its BLAS linked in, its own
 * calls to it the program's). */
static int object_is_library(const char *path, void *base)
{
    uintptr_t main_base = 0;
    amp_walk_objects(is_main_program, &main_base);
    if (!path || !*path || (uintptr_t)base == main_base)
        return 0;
    const char *slash = strrchr(path, '/');
    const char *file = slash ? slash + 1 : path;
    for (int f = 0; f < AMP_FAMILY_COUNT; f++)
        if (amp_family_prefix[f][0] &&
            strncmp(file, amp_family_prefix[f], strlen(amp_family_prefix[f])) == 0)
            return AMP_LIBRARY_ITSELF;
    if (amp_embedded_blas_listed(file) >= 0)
        return AMP_NOT_LIBRARY;
    void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    int library = AMP_NOT_LIBRARY;
    /* By its symbols: the families known by file name (CUDA, oneDNN) are
     * left out, so a program that bundles oneDNN and exports its functions
     * (a framework's own library) is not taken for a BLAS. */
    for (int i = 0; h && i < AMP_HOOK_COUNT && !library; i++)
        if (!amp_family_prefix[amp_hook_family[i]][0] && amp_own_symbol(h, amp_hook_names[i]))
            library = AMP_LIBRARY_ITSELF;
    if (h)
        dlclose(h);
    if (!library && (amp_listed_library(file) >= 0 || imports_blas_wrapper(path, file)))
        library = AMP_LIBRARY_LISTED;
    return library;
}

static pthread_mutex_t objects_lock = PTHREAD_MUTEX_INITIALIZER;

/* One verdict per object, kept while the object is loaded: objects are
 * few, call sites many. Under objects_lock. */
static struct {
    void *base;
    int library;
} objects[64];

void amp_callers_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&objects_lock, phase);
    amp_lock_atfork(&site_lock, phase);
}

int amp_caller_is_library(void *return_address)
{
    struct amp_quiet quiet;
    int answer = cached(&library_cache, return_address);
    if (answer >= 0)
        return answer;
    Dl_info info;
    if (!dladdr(return_address, &info))
        return remember(&library_cache, return_address, 0);
    /* The lock is not held while the loader is asked (object_is_library
     * opens objects): a constructor running inside another thread's dlopen
     * may be classifying its own call site. */
    amp_lock_quietly(&objects_lock, &quiet);
    int library = -1;
    for (size_t i = 0; i < sizeof objects / sizeof *objects && objects[i].base; i++)
        if (objects[i].base == info.dli_fbase)
            library = objects[i].library;
    amp_unlock_quietly(&objects_lock, &quiet);
    if (library < 0) {
        library = object_is_library(info.dli_fname, info.dli_fbase);
        amp_lock_quietly(&objects_lock, &quiet);
        for (size_t i = 0; i < sizeof objects / sizeof *objects; i++)
            if (!objects[i].base || objects[i].base == info.dli_fbase) {
                objects[i].base = info.dli_fbase;
                objects[i].library = library;
                break;
            }
        amp_unlock_quietly(&objects_lock, &quiet);
    }
    return remember(&library_cache, return_address, library);
}

int amp_caller_is_onednn_caller(void *return_address)
{
    int answer = cached(&onednn_caller_cache, return_address);
    if (answer >= 0)
        return answer;
    Dl_info info;
    return remember(&onednn_caller_cache, return_address,
                    return_address && dladdr(return_address, &info) &&
                        amp_onednn_caller_listed(info.dli_fname) >= 0);
}

/* ---- forgetting what the loader unloaded ---- */

void amp_callers_forget_unloaded(void)
{
    amp_addr_cache_forget_unloaded(&selected_cache);
    amp_addr_cache_forget_unloaded(&library_cache);
    amp_addr_cache_forget_unloaded(&onednn_caller_cache);
    /* Site records stay in the pool (a reader may hold one); the cache
     * stops leading to them, and a later call of that address is asked
     * anew. */
    for (size_t i = 0; i < SITE_CACHE; i++) {
        struct site_answer *a = atomic_load_explicit(&site_cache[i], memory_order_acquire);
        if (a && !amp_address_loaded(a->site))
            atomic_compare_exchange_strong_explicit(&site_cache[i], &a, NULL, memory_order_relaxed,
                                                    memory_order_relaxed);
    }
    /* An object's verdict goes with it: checked outside the lock, removed
     * under it only if the slot still holds what was checked. */
    for (size_t i = 0; i < sizeof objects / sizeof *objects; i++) {
        struct amp_quiet quiet;
        amp_lock_quietly(&objects_lock, &quiet);
        void *base = objects[i].base;
        amp_unlock_quietly(&objects_lock, &quiet);
        if (!base)
            break;
        Dl_info info;
        if (dladdr(base, &info) && info.dli_fbase == base)
            continue;
        amp_lock_quietly(&objects_lock, &quiet);
        if (objects[i].base == base) {
            size_t n = sizeof objects / sizeof *objects;
            memmove(&objects[i], &objects[i + 1], (n - i - 1) * sizeof *objects);
            objects[n - 1].base = NULL;
            i--;
        }
        amp_unlock_quietly(&objects_lock, &quiet);
    }
    /* Every thread's own last-site answer (amp_call_from_library) is
     * dropped when it applies this generation. */
    amp_ctl_bump();
}
