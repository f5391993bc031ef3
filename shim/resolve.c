/* Real-symbol resolution: a hook forwards to the definition its caller would
 * have bound to without the shim. When one loaded library defines a hooked
 * name (the common case) that is every caller's: it is found once, stored in
 * the hook's slot, and the fast path jumps to it. When several do (an LP64
 * and an ILP64 OpenBLAS under plain names, cuBLAS 12 beside cuBLAS 13), the
 * slot stays empty and each call is resolved for its caller, once per call
 * site: the global scope first (honouring the symbol version the caller's
 * object asks for), then the caller's own dlopen group (its dependencies, as
 * an RTLD_LOCAL object sees them), then any loaded object. A result inside
 * ampshim itself is never accepted. Objects loaded later are noticed after
 * each dlopen (its hook bumps the generation every hook compares). */
#include "shim/resolve.h"

#include "shim/width.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "loader/loader.h"
#include "runtime/control.h"
#include "runtime/log.h"

__thread uint8_t amp_tls_real_ilp64 __attribute__((tls_model("initial-exec")));
__thread uint8_t amp_tls_real_guessed __attribute__((tls_model("initial-exec")));

static pthread_mutex_t resolve_lock = PTHREAD_MUTEX_INITIALIZER;

/* Lock order: resolve_lock is never held while the shim calls into the
 * loader (dlopen, dlclose, dladdr, dlsym take the loader's lock): a library
 * constructor running inside another thread's dlopen, with the loader's
 * lock held, may make a BLAS call that needs resolve_lock. Look-ups are made
 * unlocked (they are queries; two threads may make the same one) and the
 * lock only guards publishing their results. */
static void lock_resolve(struct amp_quiet *quiet)
{
    amp_lock_quietly(&resolve_lock, quiet);
}

static void unlock_resolve(const struct amp_quiet *quiet)
{
    amp_unlock_quietly(&resolve_lock, quiet);
}

void amp_resolve_atfork(enum amp_fork_phase phase)
{
    amp_lock_atfork(&resolve_lock, phase);
}

enum { MAX_OBJECTS = 1024 };

struct object_list {
    char *names[MAX_OBJECTS];
    int count;
    const char *want; /* only objects that may define it (loader/loader.h) */
    uint32_t want_hash;
};

/* An object that can define a hooked name: the main program has an empty
 * name, and the vDSO defines no BLAS. */
static int named_object(const struct dl_phdr_info *info)
{
    return info->dlpi_name && info->dlpi_name[0] && !strstr(info->dlpi_name, "linux-vdso");
}

static int collect_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct object_list *list = data;
    if (!named_object(info) ||
        (list->want && !amp_object_may_define_hashed(info, list->want, list->want_hash)))
        return 0;
    if (list->count < MAX_OBJECTS)
        list->names[list->count++] = strdup(info->dlpi_name);
    return 0;
}

/* Every loaded object's own definition of name, in load order (at most
 * max); returns how many there are. Names are collected first: calling
 * dlopen inside dl_iterate_phdr's callback could deadlock against another
 * thread's dlopen. */
static int definitions(const char *name, void **found, int max)
{
    struct object_list *list = calloc(1, sizeof *list);
    if (!list)
        return 0;
    list->want = name;
    list->want_hash = amp_gnu_hash(name);
    amp_walk_objects(collect_object, list);
    int n = 0;
    for (int i = 0; i < list->count; i++) {
        void *p = n < max ? amp_own_definition(list->names[i], name) : NULL;
        int again = 0;
        for (int j = 0; j < n && p; j++)
            again |= found[j] == p; /* one object under two names */
        if (p && !again)
            found[n++] = p;
        free(list->names[i]);
    }
    free(list);
    return n;
}

/* ---- one library in several files ---- */

/* A file name's stem ("libcudnn_cnn" of ".../libcudnn_cnn.so.9.19.0") and
 * major ("9"): 0 when it has no ".so.N". */
static int split_soname(const char *path, const char **stem, size_t *stem_len, const char **major,
                        size_t *major_len)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *so = strstr(base, ".so.");
    if (!so || so[4] < '0' || so[4] > '9')
        return 0;
    *stem = base;
    *stem_len = (size_t)(so - base);
    *major = so + 4;
    *major_len = strspn(so + 4, "0123456789");
    return 1;
}

/* Whether two loaded files are one library: the same folder (after
 * symbolic links), the same major, and one's stem the other's or the other's
 * followed by "_" (cuDNN 9's dispatcher libcudnn.so.9 and its sub-libraries
 * libcudnn_graph, _ops, _cnn, _adv, which export the dispatcher's names).
 * Two copies of one library in two folders, or two majors, are not. */
static int same_library(const char *a, const char *b)
{
    const char *sa, *sb, *ma, *mb;
    size_t la, lb, na, nb;
    if (!a || !b || !split_soname(a, &sa, &la, &ma, &na) || !split_soname(b, &sb, &lb, &mb, &nb))
        return 0;
    if (na != nb || memcmp(ma, mb, na) != 0)
        return 0;
    size_t shorter = la < lb ? la : lb;
    const char *longer = la < lb ? sb : sa;
    if (memcmp(sa, sb, shorter) != 0 || (la != lb && longer[shorter] != '_'))
        return 0;
    char *da = realpath(a, NULL), *db = realpath(b, NULL);
    int same = 0;
    if (da && db) {
        char *ea = strrchr(da, '/'), *eb = strrchr(db, '/');
        same = ea && eb && ea - da == eb - db && memcmp(da, db, (size_t)(ea - da)) == 0;
    }
    free(da);
    free(db);
    return same;
}

static const char *file_of(void *p)
{
    Dl_info info;
    return dladdr(p, &info) && info.dli_fname ? info.dli_fname : "?";
}

/* The length of a file's stem, for choosing a dispatcher over its parts. */
static size_t stem_length(const char *path)
{
    const char *stem, *major;
    size_t len, major_len;
    return split_soname(path, &stem, &len, &major, &major_len) ? len : (size_t)-1;
}

/* Folds definitions of one library (a dispatcher and its sub-libraries)
 * into one, in place: of each such group, the dispatcher's (the shortest
 * stem: what programs link) is kept, at its first member's position.
 * Returns how many different libraries define the name. */
static int distinct_libraries(void **found, int n)
{
    int kept = 0;
    for (int i = 0; i < n; i++) {
        const char *file = file_of(found[i]);
        int j = 0;
        while (j < kept && !same_library(file_of(found[j]), file))
            j++;
        if (j == kept)
            found[kept++] = found[i];
        else if (stem_length(file) < stem_length(file_of(found[j])))
            found[j] = found[i];
    }
    return kept;
}

/* The first definition, for names the shim uses on its own account. */
static void *find_real(const char *name)
{
    void *p = dlsym(RTLD_NEXT, name);
    if (p && !amp_in_self(p) && !amp_in_other_copy(p))
        return p;
    void *found[1];
    return definitions(name, found, 1) ? found[0] : NULL;
}

void *amp_resolve_name(const char *name)
{
    return find_real(name);
}

/* Optional functions found missing once (the library that defines their
 * siblings lacks them): not looked for again. */
static _Atomic uint64_t absent_at[AMP_HOOK_COUNT]; /* the control generation + 1 then */
static _Atomic uint8_t absent_said[AMP_HOOK_COUNT];

/* Every dlopen bumps the generation (shim/dlopen_hook.c): a function
 * found missing is looked for again after one. */
static int known_absent(enum amp_hook_id hook)
{
    uint64_t at = atomic_load_explicit(&absent_at[hook], memory_order_relaxed);
    return at && at == atomic_load_explicit(amp_ctl_generation, memory_order_acquire) + 1;
}

/* ---- the version a caller's object asks for ---- */

static uintptr_t dyn_addr(const struct link_map *m, ElfW(Addr) value)
{
    return value < m->l_addr ? m->l_addr + value : value;
}

/* The version (e.g. "libcublas.so.13") the object m requires of its
 * undefined symbol name, or NULL when it names none. */
static const char *required_version(const struct link_map *m, const char *name)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Half) *versym = NULL;
    const ElfW(Verneed) *verneed = NULL;
    const uint32_t *gnu = NULL, *sysv = NULL;
    for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB:
            symtab = (const ElfW(Sym) *)dyn_addr(m, d->d_un.d_ptr);
            break;
        case DT_STRTAB:
            strtab = (const char *)dyn_addr(m, d->d_un.d_ptr);
            break;
        case DT_VERSYM:
            versym = (const ElfW(Half) *)dyn_addr(m, d->d_un.d_ptr);
            break;
        case DT_VERNEED:
            verneed = (const ElfW(Verneed) *)dyn_addr(m, d->d_un.d_ptr);
            break;
        case DT_GNU_HASH:
            gnu = (const uint32_t *)dyn_addr(m, d->d_un.d_ptr);
            break;
        case DT_HASH:
            sysv = (const uint32_t *)dyn_addr(m, d->d_un.d_ptr);
            break;
        }
    }
    if (!symtab || !strtab || !versym || !verneed || (!gnu && !sysv))
        return NULL;
    /* Undefined symbols come before the GNU hash table's first hashed one. */
    uint32_t count = sysv ? sysv[1] : gnu[1];
    for (uint32_t i = 1; i < count && i < 1u << 20; i++) {
        const ElfW(Sym) *sym = &symtab[i];
        if (sym->st_shndx != SHN_UNDEF || strcmp(strtab + sym->st_name, name) != 0)
            continue;
        ElfW(Half) index = versym[i] & 0x7fff;
        if (index < 2)
            return NULL;
        for (const ElfW(Verneed) *vn = verneed;;
             vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next)) {
            const ElfW(Vernaux) *aux = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
            for (unsigned k = 0; k < vn->vn_cnt; k++) {
                if (aux->vna_other == index)
                    return strtab + aux->vna_name;
                aux = (const ElfW(Vernaux) *)((const char *)aux + aux->vna_next);
            }
            if (!vn->vn_next)
                return NULL;
        }
    }
    return NULL;
}

/* ---- per-caller bindings, for names several loaded libraries define ---- */

struct binding {
    void *caller; /* a return address */
    enum amp_hook_id hook;
    void *real;
    uint8_t ilp64;
    uint8_t guessed; /* neither the global scope nor the caller's own group defines it */
};

enum { BINDINGS = 4096, BINDING_POOL = 16384 };
static struct binding *_Atomic binding_table[BINDINGS];
static struct binding binding_pool[BINDING_POOL];
static _Atomic int bindings_used;

static size_t binding_slot(void *caller, enum amp_hook_id hook)
{
    uint64_t k = ((uint64_t)(uintptr_t)caller >> 2) ^ ((uint64_t)hook << 40);
    return (size_t)(k * 0x9e3779b97f4a7c15ull >> 52) % BINDINGS;
}

/* What the code at `caller` would have bound `name` to: see the top.
 * *guessed: it could not be told (neither the global scope nor the
 * caller's own group defines it, and several loaded libraries do: the
 * first of them is taken). */
static void *bind_for_caller(enum amp_hook_id hook, void *caller, int *guessed)
{
    *guessed = 0;
    const char *name = amp_hook_names[hook];
    Dl_info info;
    struct link_map *object = NULL;
    const char *version = NULL;
    if (caller && dladdr1(caller, &info, (void **)&object, RTLD_DL_LINKMAP) && object)
        version = required_version(object, name);
    void *p = version ? dlvsym(RTLD_NEXT, name, version) : dlsym(RTLD_NEXT, name);
    if (p && !amp_in_self(p) && !amp_in_other_copy(p))
        return p;
    if (object && info.dli_fname) {
        amp_loader_own_call++;
        void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = version ? dlvsym(h, name, version) : dlsym(h, name);
            dlclose(h);
        }
        amp_loader_own_call--;
        if (h) {
            if (p && !amp_in_self(p) && !amp_in_other_copy(p))
                return p;
        }
    }
    void *found[8];
    int n = definitions(name, found, 8);
    *guessed = distinct_libraries(found, n) > 1;
    return n ? found[0] : NULL;
}

/* Which copies define a name the caller could not be told for: said once
 * per hook (a CUDA call so bound runs as made: runtime/decide.h). */
static void say_guessed(enum amp_hook_id hook, void *caller)
{
    static _Atomic uint8_t said[AMP_HOOK_COUNT];
    if (atomic_exchange_explicit(&said[hook], 1, memory_order_relaxed))
        return;
    void *found[8];
    int n = distinct_libraries(found, definitions(amp_hook_names[hook], found, 8));
    char copies[512] = "";
    size_t used = 0;
    for (int i = 0; i < n && used < sizeof copies; i++)
        used += (size_t)snprintf(copies + used, sizeof copies - used, "%s%s", i ? ", " : "",
                                 file_of(found[i]));
    Dl_info info;
    amp_log(AMP_LOG_INFO,
            "%s: its caller (%s) links none of the %d loaded libraries that define it (%s): "
            "its calls go to the first and, on CUDA, run as made",
            amp_hook_names[hook],
            caller && dladdr(caller, &info) && info.dli_fname ? info.dli_fname : "?", n, copies);
}

static void *resolve_for_caller(enum amp_hook_id hook, int required)
{
    struct amp_quiet quiet;
    void *caller = amp_tls_caller;
    size_t slot = binding_slot(caller, hook);
    struct binding *b = atomic_load_explicit(&binding_table[slot], memory_order_acquire);
    if (b && b->caller == caller && b->hook == hook) {
        amp_tls_real_ilp64 = b->ilp64;
        amp_tls_real_guessed = b->guessed;
        return b->real;
    }
    int guessed;
    void *real = bind_for_caller(hook, caller, &guessed);
    int ilp64 = real ? amp_width_ilp64(hook, real) : 0;
    if (real && guessed)
        say_guessed(hook, caller);
    lock_resolve(&quiet);
    if (real) {
        int i = atomic_fetch_add_explicit(&bindings_used, 1, memory_order_relaxed);
        if (i < BINDING_POOL) {
            binding_pool[i] =
                (struct binding){caller, hook, real, (uint8_t)ilp64, (uint8_t)guessed};
            atomic_store_explicit(&binding_table[slot], &binding_pool[i], memory_order_release);
        }
    }
    unlock_resolve(&quiet);
    amp_tls_real_ilp64 = (uint8_t)ilp64;
    amp_tls_real_guessed = (uint8_t)guessed;
    if (!real && required) {
        amp_log(AMP_LOG_ERROR,
                "%s: no loaded library defines it (symbol lookup error); exiting "
                "with status 127",
                amp_hook_names[hook]);
        _exit(127);
    }
    return real;
}

/* With resolve_lock held; library: a definer's file name, found before. */
static void mark_several(enum amp_hook_id hook, const char *library, int n)
{
    amp_log(AMP_LOG_INFO,
            "%s is defined by %d loaded libraries (%s, ...); each call goes to its "
            "caller's own",
            amp_hook_names[hook], n, library);
    atomic_store_explicit(&amp_slot_of[hook]->several, 1, memory_order_relaxed);
    atomic_store_explicit(&amp_slot_of[hook]->real, NULL, memory_order_release);
}

/* ---- libraries loaded later ---- */

_Atomic uint64_t amp_dlopen_calls;
static void *known_objects[MAX_OBJECTS];
static int n_known_objects;
static _Atomic unsigned long long seen_adds;

static int count_adds(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

struct new_objects {
    void *base[64];
    char *name[64];
    /* the resolved hooks each may define (loader/loader.h), asked while the
     * loader's list holds it */
    uint64_t may[64][(AMP_HOOK_COUNT + 63) / 64];
    int count;
};

/* The GNU hashes of the hooks' names, made once. */
static const uint32_t *hook_hashes(void)
{
    static uint32_t hash[AMP_HOOK_COUNT];
    static _Atomic int made;
    if (!atomic_load_explicit(&made, memory_order_acquire)) {
        for (int h = 0; h < AMP_HOOK_COUNT; h++)
            hash[h] = amp_gnu_hash(amp_hook_names[h]);
        atomic_store_explicit(&made, 1, memory_order_release);
    }
    return hash;
}

static int collect_new(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct new_objects *n = data;
    if (!named_object(info))
        return 0;
    for (int i = 0; i < n_known_objects; i++)
        if (known_objects[i] == (void *)info->dlpi_addr)
            return 0;
    if (n_known_objects < MAX_OBJECTS)
        known_objects[n_known_objects++] = (void *)info->dlpi_addr;
    if (n->count < 64) {
        const uint32_t *hash = hook_hashes();
        for (int h = 0; h < AMP_HOOK_COUNT; h++)
            if (atomic_load_explicit(&amp_slot_of[h]->real, memory_order_relaxed) &&
                amp_object_may_define_hashed(info, amp_hook_names[h], hash[h]))
                n->may[n->count][h / 64] |= (uint64_t)1 << (h % 64);
        n->base[n->count] = (void *)info->dlpi_addr;
        n->name[n->count++] = strdup(info->dlpi_name);
    }
    return 0;
}

void amp_resolve_notice_new_objects(void)
{
    /* Objects are added only by dlopen, whose hook counts its calls: with
     * no dlopen since the last look the loader is asked nothing (a new
     * thread's first call, or a forked child's, does not walk the object
     * list, whose lock a fork can leave held in the child). */
    static _Atomic uint64_t looked_at = UINT64_MAX;
    uint64_t dlopens = atomic_load_explicit(&amp_dlopen_calls, memory_order_acquire);
    if (atomic_exchange_explicit(&looked_at, dlopens, memory_order_acq_rel) == dlopens)
        return;
    struct amp_quiet quiet;
    unsigned long long adds = 0;
    amp_walk_objects(count_adds, &adds);
    if (adds == atomic_load_explicit(&seen_adds, memory_order_relaxed))
        return;
    struct new_objects *fresh = calloc(1, sizeof *fresh);
    if (!fresh)
        return;
    /* dl_iterate_phdr takes only the loader's list lock, which a dlopen
     * running constructors does not hold. */
    lock_resolve(&quiet);
    int first_look = n_known_objects == 0;
    amp_walk_objects(collect_new, fresh);
    unlock_resolve(&quiet);
    /* A hook resolved to one library becomes per-caller when a newly
     * loaded object defines its name too. */
    for (int i = 0; i < fresh->count && !first_look; i++)
        for (int h = 0; h < AMP_HOOK_COUNT; h++) {
            void *real = atomic_load_explicit(&amp_slot_of[h]->real, memory_order_relaxed);
            if (!real || amp_slot_of[h]->several || !(fresh->may[i][h / 64] >> (h % 64) & 1))
                continue;
            void *p = amp_own_definition(fresh->name[i], amp_hook_names[h]);
            const char *library = p && p != real ? file_of(real) : NULL;
            if (library && !same_library(library, fresh->name[i])) {
                lock_resolve(&quiet);
                if (atomic_load_explicit(&amp_slot_of[h]->real, memory_order_relaxed) == real)
                    mark_several((enum amp_hook_id)h, library, 2);
                unlock_resolve(&quiet);
            }
        }
    for (int i = 0; i < fresh->count; i++)
        free(fresh->name[i]);
    free(fresh);
    atomic_store_explicit(&seen_adds, adds, memory_order_relaxed);
}

static void (*_Atomic inside_look)(int late);

void amp_resolve_set_inside_look(void (*look)(int late))
{
    atomic_store_explicit(&inside_look, look, memory_order_release);
}

void amp_resolve_look_inside(int late)
{
    void (*look)(int) = atomic_load_explicit(&inside_look, memory_order_acquire);
    if (look)
        look(late);
}

static _Atomic amp_inside_onednn_taker inside_onednn_taker;

void amp_resolve_set_inside_onednn_taker(amp_inside_onednn_taker take)
{
    atomic_store_explicit(&inside_onednn_taker, take, memory_order_release);
}

void amp_resolve_offer_inside_onednn(const char *path, uintptr_t base, void *execute)
{
    amp_inside_onednn_taker take = atomic_load_explicit(&inside_onednn_taker, memory_order_acquire);
    if (take)
        take(path, base, execute);
}

/* ---- libraries unloaded ---- */

static _Atomic unsigned long long seen_subs;

static int count_subs(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_subs;
    return 1;
}

static int loaded(void *p)
{
    return p && amp_address_loaded(p);
}

int amp_resolve_notice_unloads(void)
{
    if (amp_loader_own_call)
        return 0;
    unsigned long long subs = 0;
    amp_walk_objects(count_subs, &subs);
    if (subs == atomic_load_explicit(&seen_subs, memory_order_relaxed))
        return 0;
    /* A hook whose function was in the unloaded object resolves again at
     * its next call (to a library loaded since, or not at all). The checks
     * ask the loader, so no lock is held; a slot is cleared only if it
     * still holds what was checked. */
    for (int h = 0; h < AMP_HOOK_COUNT; h++) {
        void *real = atomic_load_explicit(&amp_slot_of[h]->real, memory_order_acquire);
        if (real && !loaded(real) &&
            atomic_compare_exchange_strong_explicit(&amp_slot_of[h]->real, &real, NULL,
                                                    memory_order_acq_rel, memory_order_relaxed))
            amp_log(AMP_LOG_INFO,
                    "%s: its library was unloaded; it resolves again at its next call",
                    amp_hook_names[h]);
    }
    for (int i = 0; i < BINDINGS; i++) {
        struct binding *b = atomic_load_explicit(&binding_table[i], memory_order_acquire);
        if (b && (!loaded(b->real) || !loaded(b->caller)))
            atomic_compare_exchange_strong_explicit(&binding_table[i], &b, NULL,
                                                    memory_order_acq_rel, memory_order_relaxed);
    }
    /* An object loaded again (perhaps at the same address) is new. */
    struct new_objects *all = calloc(1, sizeof *all);
    if (all) {
        struct amp_quiet quiet;
        lock_resolve(&quiet);
        n_known_objects = 0;
        amp_walk_objects(collect_new, all);
        unlock_resolve(&quiet);
        for (int i = 0; i < all->count; i++)
            free(all->name[i]);
        free(all);
    }
    atomic_store_explicit(&seen_subs, subs, memory_order_relaxed);
    return 1;
}

/* Whether p is one of this library's hook entry points whose name no
 * loaded library defines: then dlsym answers NULL, as it would without the
 * shim, so a program probing for an optional function takes its fallback
 * instead of calling a hook with nothing behind it. */
int amp_resolve_hides(void *p, const char *name, void *caller)
{
    /* The shim's own lookups (shim/resolve.c) see everything. */
    if (!p || !name || !amp_in_self(p) || amp_in_self(caller))
        return 0;
    int hook = amp_hook_from_name(name);
    return hook >= 0 && amp_real_optional((enum amp_hook_id)hook) == NULL;
}

static void *resolve(enum amp_hook_id hook, int required)
{
    if (atomic_load_explicit(&amp_slot_of[hook]->several, memory_order_relaxed))
        return resolve_for_caller(hook, required);
    void *real = atomic_load_explicit(&amp_slot_of[hook]->real, memory_order_acquire);
    if (real)
        return real;
    struct amp_quiet quiet;
    const char *name = amp_hook_names[hook];
    void *found[8];
    int n = distinct_libraries(found, definitions(name, found, 8));
    if (n > 1) {
        const char *library = file_of(found[0]);
        lock_resolve(&quiet);
        if (!atomic_load_explicit(&amp_slot_of[hook]->several, memory_order_relaxed))
            mark_several(hook, library, n);
        unlock_resolve(&quiet);
        return resolve_for_caller(hook, required);
    }
    /* One definer is every caller's; with none found among the loaded
     * objects, the global scope is asked once more. */
    real = n == 1 ? found[0] : find_real(name);
    if (!real && !required) {
        atomic_store_explicit(&absent_at[hook],
                              atomic_load_explicit(amp_ctl_generation, memory_order_acquire) + 1,
                              memory_order_relaxed);
        if (!atomic_exchange_explicit(&absent_said[hook], 1, memory_order_relaxed))
            amp_log(AMP_LOG_INFO,
                    "%s: no loaded library defines it; calls that would go through it run as made",
                    name);
        return NULL;
    }
    if (!real) {
        /* Without ampshim the loader would have stopped here with
         * "undefined symbol"; do the same rather than run garbage. */
        amp_log(AMP_LOG_ERROR,
                "%s: no loaded library defines it (symbol lookup error); exiting with status 127",
                name);
        _exit(127);
    }
    int ilp64 = amp_width_ilp64(hook, real);
    const char *libname = file_of(real);
    /* Published once, by the first thread here; the others take its answer. */
    lock_resolve(&quiet);
    if (atomic_load_explicit(&amp_slot_of[hook]->several, memory_order_relaxed)) {
        unlock_resolve(&quiet);
        return resolve_for_caller(hook, required);
    }
    void *now = atomic_load_explicit(&amp_slot_of[hook]->real, memory_order_acquire);
    if (now) {
        unlock_resolve(&quiet);
        return now;
    }
    amp_slot_of[hook]->ilp64 = (uint8_t)ilp64;
    amp_log(AMP_LOG_INFO, "%s -> %s (%s integers)", name, libname, ilp64 ? "64-bit" : "32-bit");
    atomic_store_explicit(&amp_slot_of[hook]->real, real, memory_order_release);
    unlock_resolve(&quiet);
    return real;
}

void *amp_resolve(enum amp_hook_id hook)
{
    /* A per-caller hook's binding is a lock-free cache hit once per call site. */
    if (atomic_load_explicit(&amp_slot_of[hook]->several, memory_order_relaxed))
        return resolve_for_caller(hook, 1);
    return resolve(hook, 1);
}

void *amp_real_optional(enum amp_hook_id hook)
{
    void *p = atomic_load_explicit(&amp_slot_of[hook]->real, memory_order_acquire);
    if (p || known_absent(hook))
        return p;
    if (atomic_load_explicit(&amp_slot_of[hook]->several, memory_order_relaxed))
        return resolve_for_caller(hook, 0);
    return resolve(hook, 0);
}

/* The thread's last answer of amp_real_beside for a "several" hook: a hot
 * loop lowers one call site, and the loader is asked once for it. */
static __thread const void *beside_real __attribute__((tls_model("initial-exec")));
static __thread void *beside_bound __attribute__((tls_model("initial-exec")));
static __thread void *beside_answer __attribute__((tls_model("initial-exec")));

void *amp_real_beside(enum amp_hook_id hook, const void *real)
{
    void *p = amp_real_optional(hook);
    if (!p || !atomic_load_explicit(&amp_slot_of[hook]->several, memory_order_relaxed))
        return p;
    /* Several libraries define it: the caller's binding is usually in real's
     * own library already; else real's library is asked. */
    if (real == beside_real && p == beside_bound)
        return beside_answer;
    Dl_info mine, theirs;
    void *answer = dladdr(p, &mine) && dladdr(real, &theirs) && mine.dli_fbase == theirs.dli_fbase
                       ? p
                       : amp_sibling_symbol(real, amp_hook_names[hook]);
    beside_real = real;
    beside_bound = p;
    beside_answer = answer;
    return answer;
}
