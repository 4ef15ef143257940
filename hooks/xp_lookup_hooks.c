/* xp_lookup_hooks.c: the lookups that hand out driver entry points (dlsym and
 * dlvsym, cuGetProcAddress(_v2), cudaGetDriverEntryPoint(ByVersion)(_ptsz)),
 * interposed so that they hand out xferprof's wrappers instead of the real
 * variants they found.  How and why: docs/interposition.md. */
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xp_driver_hooks.h"
#include "xp_engine.h"
#include "xp_runtime_export.h"

#undef cuGetProcAddress
#undef cuMemPrefetchAsync
#undef cuStreamBeginCapture
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
#undef cuIpcOpenMemHandle

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

static void say(const char *what)
{
    char line[256];
    int n = snprintf(line, sizeof line, "xferprof: %s\n", what);
    if (n > 0)
        xp_write_stderr(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

/* ---- the real dlsym and dlvsym ------------------------------------------
 *
 * Our own calls to dlsym/dlvsym bind to our exports (a preload comes before
 * libc in every lookup), so the first real one is found without them: the
 * default version of dlvsym read from the dynamic symbol table of libc
 * (libdl before glibc 2.34).  With it, dlvsym(RTLD_NEXT, "dlsym",
 * "GLIBC_2.34") gives the next versioned dlsym after libxferprof (versioned
 * lookups skip unversioned interposers, ours included).
 *
 * Everything on the way from the trampolines to glibc runs before any
 * sanitizer runtime is ready (ASan and TSan resolve their interceptors with
 * dlsym at start-up, which is ours): XP_NO_SANITIZE, and no libc calls. */

XP_NO_SANITIZE static size_t gnu_hash_symbols(const uint32_t *h)
{
    uint32_t nbuckets = h[0], symoffset = h[1], bloom_words = h[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(h + 4) + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (buckets[b] > last)
            last = buckets[b];
    if (last < symoffset)
        return symoffset;
    while ((chain[last - symoffset] & 1u) == 0)
        last++;
    return (size_t)last + 1;
}

/* The address a dynamic entry of lm points to: ld.so relocates these in
 * place on most targets, not on all (an unrelocated one is an offset below
 * the load address). */
XP_NO_SANITIZE static ElfW(Addr) dyn_addr(const struct link_map *lm, const ElfW(Dyn) *d)
{
    return d->d_un.d_ptr < lm->l_addr ? d->d_un.d_ptr + lm->l_addr : d->d_un.d_ptr;
}

/* The default version of the function `name` defined in lm, or NULL. */
XP_NO_SANITIZE static void *elf_default_function(const struct link_map *lm, const char *name)
{
    const ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    const ElfW(Half) *versym = NULL;
    const uint32_t *gnu_hash = NULL;
    const ElfW(Word) *sysv_hash = NULL;
    ElfW(Addr) base = lm->l_addr;
    for (const ElfW(Dyn) *d = lm->l_ld; d != NULL && d->d_tag != DT_NULL; d++) {
        ElfW(Addr) p = dyn_addr(lm, d);
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const ElfW(Sym) *)p; break;
        case DT_STRTAB: strtab = (const char *)p; break;
        case DT_VERSYM: versym = (const ElfW(Half) *)p; break;
        case DT_GNU_HASH: gnu_hash = (const uint32_t *)p; break;
        case DT_HASH: sysv_hash = (const ElfW(Word) *)p; break;
        default: break;
        }
    }
    if (symtab == NULL || strtab == NULL)
        return NULL;
    size_t n = sysv_hash ? sysv_hash[1] : gnu_hash ? gnu_hash_symbols(gnu_hash) : 0;
    for (size_t i = 1; i < n; i++) {
        const ElfW(Sym) *s = &symtab[i];
        if (s->st_shndx == SHN_UNDEF || (s->st_info & 0xf) != STT_FUNC)
            continue;
        if (versym != NULL && (versym[i] & 0x8000))
            continue;   /* a non-default version (name@VERSION) */
        if (xp_str_eq(strtab + s->st_name, name))
            return (void *)(base + s->st_value);
    }
    return NULL;
}

/* libc.so.6 or libdl.so.2, by the file name of a loaded object. */
XP_NO_SANITIZE static bool is_libc_or_libdl(const char *path)
{
    const char *base = path;
    for (const char *p = path; *p; p++)
        if (*p == '/')
            base = p + 1;
    return xp_str_prefix(base, "libc.so.") || xp_str_prefix(base, "libdl.so.");
}

/* Written once (idempotently, by whichever thread gets there first). */
static _Atomic(dlsym_fn) real_dlsym;
static _Atomic(dlvsym_fn) real_dlvsym;

XP_NO_SANITIZE static void find_real_dl(void)
{
    dlvsym_fn boot_v = NULL;
    dlsym_fn boot = NULL;
    for (const struct link_map *lm = _r_debug.r_map; lm != NULL && (!boot_v || !boot);
         lm = lm->l_next) {
        if (lm->l_name == NULL || !is_libc_or_libdl(lm->l_name))
            continue;
        if (boot_v == NULL)
            boot_v = (dlvsym_fn)elf_default_function(lm, "dlvsym");
        if (boot == NULL)
            boot = (dlsym_fn)elf_default_function(lm, "dlsym");
    }
    if (boot_v == NULL || boot == NULL)
        return;
    static const char *const versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
    dlsym_fn s = NULL;
    dlvsym_fn v = NULL;
    for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
        if (s == NULL)
            s = (dlsym_fn)boot_v(RTLD_NEXT, "dlsym", versions[i]);
        if (v == NULL)
            v = (dlvsym_fn)boot_v(RTLD_NEXT, "dlvsym", versions[i]);
    }
    atomic_store_explicit(&real_dlvsym, v ? v : boot_v, memory_order_release);
    atomic_store_explicit(&real_dlsym, s ? s : boot, memory_order_release);
}

XP_NO_SANITIZE static dlsym_fn get_real_dlsym(void)
{
    dlsym_fn f = atomic_load_explicit(&real_dlsym, memory_order_acquire);
    if (f == NULL) {
        int saved = errno;
        find_real_dl();
        errno = saved;
        f = atomic_load_explicit(&real_dlsym, memory_order_acquire);
        if (f == NULL)
            say("cannot find the real dlsym; symbol lookups will fail");
    }
    return f;
}

XP_NO_SANITIZE static dlvsym_fn get_real_dlvsym(void)
{
    if (atomic_load_explicit(&real_dlvsym, memory_order_acquire) == NULL)
        get_real_dlsym();
    return atomic_load_explicit(&real_dlvsym, memory_order_acquire);
}

void *xp_real_dlsym(void *handle, const char *name)
{
    dlsym_fn f = get_real_dlsym();
    return f ? f(handle, name) : NULL;
}

/* ---- libcuda's own definitions ------------------------------------------ */

/* Per variant: what the loaded libcuda.so.1 defines, NULL while unknown,
 * ABSENT when it has no such export.  libcuda is never unloaded in practice
 * (NVIDIA's and the simulator's are nodelete), so an answer stays true. */
#define ABSENT ((void *)1)
static _Atomic(void *) cuda_exports[XP_DRV_COUNT];

void *xp_libcuda_export(unsigned i)
{
    void *fn = atomic_load_explicit(&cuda_exports[i], memory_order_acquire);
    if (fn != NULL)
        return fn == ABSENT ? NULL : fn;
    /* Never loads a libcuda: only asks the one the process has. */
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    fn = xp_real_dlsym(h, xp_drv_entries[i].name);
    dlclose(h);
    atomic_store_explicit(&cuda_exports[i], fn ? fn : ABSENT, memory_order_release);
    return fn;
}

/* The variant whose libcuda definition is fn, among the entries named
 * symbol or symbol_... (symbol NULL: among all); XP_DRV_COUNT if none. */
static unsigned variant_at(const char *symbol, const void *fn)
{
    size_t n = symbol ? strlen(symbol) : 0;
    for (unsigned i = 0; i < XP_DRV_COUNT; i++) {
        const char *e = xp_drv_entries[i].name;
        if (symbol && (strncmp(e, symbol, n) != 0 || (e[n] != '\0' && e[n] != '_')))
            continue;
        if (xp_libcuda_export(i) == fn)
            return i;
    }
    return XP_DRV_COUNT;
}

/* The real lookup returned *pfn for `symbol` (a base name such as
 * "cuMemcpyHtoD", which the version and flags turned into one variant): the
 * candidates are the variants named symbol or symbol_...; the one whose
 * libcuda definition is *pfn is the variant it chose.  Some base names
 * stand, from a version on, for a function of another name (cuda.h's
 * `#define cuGraphInstantiate cuGraphInstantiateWithFlags` from 12.0): when
 * no variant of the name matches, the wrapper is the one of whichever
 * export *pfn is, so the program always gets the wrapper of the signature
 * it was handed. */
void xp_drv_substitute(const char *symbol, void **pfn)
{
    if (symbol == NULL || pfn == NULL || *pfn == NULL)
        return;
    int saved = errno;
    unsigned i = variant_at(symbol, *pfn);
    if (i == XP_DRV_COUNT)
        i = variant_at(NULL, *pfn);
    if (i < XP_DRV_COUNT && xp_drv_offer(i, *pfn))
        *pfn = xp_drv_entries[i].wrapper;
    errno = saved;
}

/* ---- dlsym and dlvsym ----------------------------------------------------
 *
 * glibc's dlsym finds its caller from its own return address (RTLD_NEXT
 * searches the objects after the caller's).  A C wrapper that calls it
 * would make libxferprof the caller, so the exported dlsym and dlvsym are
 * small assembler trampolines: they ask xp_dl_entry what to do, and either
 * return its answer or jump (not call) to the real function with the
 * arguments and the return address exactly as they came. */

typedef struct xp_dl_answer {
    void *value;              /* the result, when forward is NULL */
    void *forward;            /* else: jump to this, the real dlsym or dlvsym */
} xp_dl_answer;

xp_dl_answer xp_dl_entry(void *handle, const char *name, const char *version, void *caller,
                         long is_dlvsym);

static bool from_libxferprof(void *caller)
{
    static _Atomic(void *) own_base;
    void *base = atomic_load_explicit(&own_base, memory_order_relaxed);
    Dl_info info;
    if (base == NULL) {
        if (dladdr((void *)&from_libxferprof, &info) == 0)
            return false;
        base = info.dli_fbase;
        atomic_store_explicit(&own_base, base, memory_order_relaxed);
    }
    return dladdr(caller, &info) != 0 && info.dli_fbase == base;
}

/* Sanitizers are off only on the way to glibc (names that are not ours):
 * the rest is in functions of their own. */
static xp_dl_answer dl_ours(void *handle, const char *name, const char *version, void *caller,
                            long is_dlvsym, void *real, int i);
static xp_dl_answer dl_runtime(void *handle, const char *name, const char *version,
                               void *caller, long is_dlvsym, void *real);

XP_NO_SANITIZE __attribute__((used)) xp_dl_answer xp_dl_entry(void *handle, const char *name,
                                                              const char *version,
                                                              void *caller, long is_dlvsym)
{
    void *real = is_dlvsym ? (void *)get_real_dlvsym() : (void *)get_real_dlsym();
    xp_dl_answer pass = {NULL, real};
    /* A global lookup finds our export anyway, and one by RTLD_NEXT is left
     * to glibc for the runtime (as for the driver, below, when in doubt). */
    if (real == NULL || handle == RTLD_DEFAULT || name == NULL)
        return pass;
    if (xp_str_prefix(name, "cuda") && handle != RTLD_NEXT)
        return dl_runtime(handle, name, version, caller, is_dlvsym, real);
    int i = xp_drv_find(name);
    /* Not ours: glibc answers, as if we were not there. */
    if (i < 0)
        return pass;
    return dl_ours(handle, name, version, caller, is_dlvsym, real, i);
}

/* glibc resets the dlerror state at every dl* call, so the lookups made here
 * leave no trace: each answer ends with a successful one, or with glibc's
 * own lookup (pass). */
static xp_dl_answer dl_ours(void *handle, const char *name, const char *version, void *caller,
                            long is_dlvsym, void *real, int i)
{
    xp_dl_answer pass = {NULL, real};
    int saved = errno;
    if (from_libxferprof(caller)) {
        errno = saved;
        return pass;
    }
    xp_dl_answer ours = {xp_drv_entries[i].wrapper, NULL};
    void *cuda = xp_libcuda_export((unsigned)i);
    if (handle == RTLD_NEXT) {
        /* When the next definition after libxferprof is libcuda's own
         * (libcuda loaded globally, no other definition between), the next
         * one after a caller between us and libcuda is libcuda's too, and
         * our wrapper forwarding to it stands for it.  Otherwise (libcuda
         * loaded RTLD_LOCAL, another interposer after us) glibc answers: a
         * caller before us gets our export, one after it what it would get
         * without us. */
        bool same = cuda != NULL && xp_real_dlsym(RTLD_NEXT, name) == cuda &&
                    xp_drv_real((unsigned)i) == cuda;
        errno = saved;
        return same ? ours : pass;
    }
    void *r;
    if (is_dlvsym)
        r = ((dlvsym_fn)real)(handle, name, version);
    else
        r = ((dlsym_fn)real)(handle, name);
    if (r == NULL || r != cuda || !xp_drv_offer((unsigned)i, r))
        ours.value = r;
    errno = saved;
    return ours;
}

/* The runtime version (XP_RT_V*) of the libcudart that defines addr, from its
 * SONAME (libcudart.so.12, whatever its file is called: the simulator's
 * CUDA 12 runtime is libxpsim_cudart12.so); false if addr is not in one. */
static bool runtime_version_of(void *addr, unsigned *version)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP) == 0 || lm == NULL)
        return false;
    const char *strtab = NULL;
    ElfW(Addr) soname = 0;
    bool has_soname = false;
    for (const ElfW(Dyn) *d = lm->l_ld; d != NULL && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_STRTAB)
            strtab = (const char *)dyn_addr(lm, d);
        else if (d->d_tag == DT_SONAME) {
            soname = d->d_un.d_val;
            has_soname = true;
        }
    }
    if (strtab == NULL || !has_soname)
        return false;
    static const struct { const char *soname; unsigned version; } known[] = {
        {"libcudart.so.13", XP_RT_V13}, {"libcudart.so.12", XP_RT_V12},
        {"libcudart.so.11.0", XP_RT_V11}};
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
        if (strcmp(strtab + soname, known[k].soname) == 0) {
            *version = known[k].version;
            return true;
        }
    return false;
}

/* A runtime function looked up in a handle (ctypes, TensorFlow's stream
 * executor, CuPy dlopen() libcudart and dlsym() its functions, which no
 * link-time binding brings to our exports): the hook of the version of the
 * runtime that defines what glibc found, when that hook forwards to exactly
 * that function; else what glibc found.  The lookup is always made (then
 * repeated, if resolving the hook made lookups of its own, so that the
 * dlerror state is the caller's own lookup's). */
static xp_dl_answer dl_runtime(void *handle, const char *name, const char *version,
                               void *caller, long is_dlvsym, void *real)
{
    xp_dl_answer pass = {NULL, real};
    int saved = errno;
    if (from_libxferprof(caller)) {
        errno = saved;
        return pass;
    }
    void *r = is_dlvsym ? ((dlvsym_fn)real)(handle, name, version)
                        : ((dlsym_fn)real)(handle, name);
    xp_dl_answer ours = {r, NULL};
    unsigned v;
    const xp_rt_hook *h = NULL;
    if (r != NULL && runtime_version_of(r, &v))
        h = xp_rt_hook_find(name, v);
    if (h != NULL) {
        bool resolved = atomic_load_explicit(h->real, memory_order_acquire) != NULL;
        if (lookup_runtime(h->real, name, v) == r)
            ours.value = (void *)h->fn;
        if (!resolved)
            (void)(is_dlvsym ? ((dlvsym_fn)real)(handle, name, version)
                             : ((dlsym_fn)real)(handle, name));
    }
    errno = saved;
    return ours;
}

#if defined(__x86_64__)
/* rdi handle, rsi name, rdx version: saved (three pushes also align the
 * stack for the call), xp_dl_entry(handle, name, version, return address,
 * is_dlvsym) answers in rax (value) and rdx (forward). */
#define XP_DL_TRAMPOLINE(sym, setup)                                           \
    ".globl " sym "\n"                                                         \
    ".type " sym ", @function\n"                                               \
    ".p2align 4\n"                                                             \
    sym ":\n"                                                                  \
    "    .cfi_startproc\n"                                                     \
    "    endbr64\n"                                                            \
    "    pushq %rdi\n"                                                         \
    "    .cfi_adjust_cfa_offset 8\n"                                           \
    "    pushq %rsi\n"                                                         \
    "    .cfi_adjust_cfa_offset 8\n"                                           \
    "    pushq %rdx\n"                                                         \
    "    .cfi_adjust_cfa_offset 8\n"                                           \
    "    movq 24(%rsp), %rcx\n"                                                \
    setup                                                                      \
    "    call xp_dl_entry\n"                                                   \
    "    movq %rdx, %r11\n"                                                    \
    "    popq %rdx\n"                                                          \
    "    .cfi_adjust_cfa_offset -8\n"                                          \
    "    popq %rsi\n"                                                          \
    "    .cfi_adjust_cfa_offset -8\n"                                          \
    "    popq %rdi\n"                                                          \
    "    .cfi_adjust_cfa_offset -8\n"                                          \
    "    testq %r11, %r11\n"                                                   \
    "    jnz 1f\n"                                                             \
    "    ret\n"                                                                \
    "1:  jmp *%r11\n"                                                          \
    "    .cfi_endproc\n"                                                       \
    ".size " sym ", .-" sym "\n"
__asm__(".pushsection .text\n"
        XP_DL_TRAMPOLINE("dlsym", "    xorl %edx, %edx\n    xorl %r8d, %r8d\n")
        XP_DL_TRAMPOLINE("dlvsym", "    movl $1, %r8d\n")
        ".popsection\n");
#elif defined(__aarch64__)
/* x0 handle, x1 name, x2 version saved in the frame; x30 (the return
 * address) is the caller; the answer comes back in x0 (value) and x1
 * (forward), reached through x16 (a valid BTI target for "bti c"). */
#define XP_DL_TRAMPOLINE(sym, setup)                                           \
    ".globl " sym "\n"                                                         \
    ".type " sym ", %function\n"                                               \
    ".p2align 4\n"                                                             \
    sym ":\n"                                                                  \
    "    .cfi_startproc\n"                                                     \
    "    hint 34\n"                                                            \
    "    stp x29, x30, [sp, #-48]!\n"                                          \
    "    .cfi_def_cfa_offset 48\n"                                             \
    "    .cfi_offset 29, -48\n"                                                \
    "    .cfi_offset 30, -40\n"                                                \
    "    mov x29, sp\n"                                                        \
    "    stp x0, x1, [sp, #16]\n"                                              \
    "    str x2, [sp, #32]\n"                                                  \
    "    mov x3, x30\n"                                                        \
    setup                                                                      \
    "    bl xp_dl_entry\n"                                                     \
    "    cbnz x1, 1f\n"                                                        \
    "    .cfi_remember_state\n"                                                \
    "    ldp x29, x30, [sp], #48\n"                                            \
    "    .cfi_restore 29\n"                                                    \
    "    .cfi_restore 30\n"                                                    \
    "    .cfi_def_cfa_offset 0\n"                                              \
    "    ret\n"                                                                \
    "1:  .cfi_restore_state\n"                                                 \
    "    mov x16, x1\n"                                                        \
    "    ldp x0, x1, [sp, #16]\n"                                              \
    "    ldr x2, [sp, #32]\n"                                                  \
    "    ldp x29, x30, [sp], #48\n"                                            \
    "    .cfi_restore 29\n"                                                    \
    "    .cfi_restore 30\n"                                                    \
    "    .cfi_def_cfa_offset 0\n"                                              \
    "    br x16\n"                                                             \
    "    .cfi_endproc\n"                                                       \
    ".size " sym ", .-" sym "\n"
__asm__(".pushsection .text\n"
        XP_DL_TRAMPOLINE("dlsym", "    mov x2, xzr\n    mov x4, #0\n")
        XP_DL_TRAMPOLINE("dlvsym", "    mov x4, #1\n")
        ".popsection\n");
#else
/* No trampoline for this architecture: dlsym and dlvsym are not interposed,
 * so driver functions looked up with dlsym on a libcuda handle (and
 * cuGetProcAddress obtained that way) are not recorded here. */
#endif

/* ---- cuGetProcAddress(_v2) ----------------------------------------------- */

/* Not recorded: the real lookup, then the substitution. */
#define XP_PROCADDRESS(name, params, args, symbol, pfn)                                 \
    CUresult xp_drv_##name params;                                                      \
    CUresult xp_drv_##name params                                                       \
    {                                                                                   \
        CUresult (*real) params = (CUresult (*) params)xp_drv_real(XP_DRV_##name);      \
        if (real == NULL)                                                               \
            return CUDA_ERROR_UNKNOWN;                                                  \
        CUresult rc = real args;                                                        \
        if (rc == CUDA_SUCCESS)                                                         \
            xp_drv_substitute((symbol), (pfn));                                         \
        return rc;                                                                      \
    }                                                                                   \
    XP_DRV_EXPORT(name)
#define XP_DRV_EACH(...)   /* the recorded calls: xp_driver_hooks.c */
#include "xp_driver_each.h"

/* ---- cudaGetDriverEntryPoint(ByVersion)(_ptsz) ----------------------------- */

/* The runtime may initialize itself and the driver inside: one level deeper,
 * so nothing it does there is recorded as the program's driver calls. */
#define XP_EP_FN(fn, version, name, params, args, symbol, pfn)                          \
    static _Atomic(void *) fn##_real;                                                   \
    __attribute__((visibility("default"))) cudaError_t fn params;                       \
    __attribute__((visibility("default"))) cudaError_t fn params                        \
    {                                                                                   \
        cudaError_t (*real) params =                                                    \
            (cudaError_t (*) params)resolve_runtime(&fn##_real, #name, (version));      \
        if (real == NULL)                                                               \
            return cudaErrorUnknown;                                                    \
        xp_guard guard = xp_guard_enter((uintptr_t)real);                               \
        cudaError_t rc = real args;                                                     \
        xp_guard_leave(guard);                                                          \
        if (rc == cudaSuccess)                                                          \
            xp_drv_substitute((symbol), (pfn));                                         \
        return rc;                                                                      \
    }                                                                                   \
    XP_RT_HOOK_ROW(fn, version, name)
#define XP_ENTRY_POINT_AT(vers, name, params, args, symbol, pfn)                        \
    XP_RUNTIME_VERSIONS_AT(vers, XP_EP_FN, xp_ep_, name, params, args, symbol, pfn)
#define XP_ENTRY_POINT(...) XP_ENTRY_POINT_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#include "xp_lookup_hooks.def"
#undef XP_ENTRY_POINT
#undef XP_ENTRY_POINT_AT
