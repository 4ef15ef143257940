/* xp_runtime_hooks.c: the interposed CUDA runtime entry points, generated
 * from xp_runtime_hooks.def.  Each resolves the real function once, calls
 * it, and hands what it saw to the engine; the program gets the real
 * function's return value and errno untouched. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "xp_engine.h"

/* Versions the runtime's symbols carry (libcudart.so.13 exports
 * cudaMalloc@@libcudart.so.13, and so on); the newest loaded one wins, and
 * a runtime without versions is found by plain name. */
static const char *const runtime_versions[] = {"libcudart.so.13", "libcudart.so.12",
                                               "libcudart.so.11"};

static void *resolve_runtime(_Atomic(void *) *slot, const char *name)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    if (fn != NULL)
        return fn;
    for (size_t i = 0; fn == NULL && i < sizeof runtime_versions / sizeof runtime_versions[0]; i++)
        fn = dlvsym(RTLD_NEXT, name, runtime_versions[i]);
    if (fn == NULL)
        fn = dlsym(RTLD_NEXT, name);
    if (fn == NULL) {
        char line[256];
        int n = snprintf(line, sizeof line, "xferprof: %s: no CUDA runtime to forward to\n", name);
        if (n > 0) {
            ssize_t w = write(STDERR_FILENO, line, (size_t)n);
            (void)w;
        }
        return NULL;
    }
    atomic_store_explicit(slot, fn, memory_order_release);
    return fn;
}

/* The exported name is name@@libcudart.so.13 (default) plus aliases at
 * libcudart.so.12 and .11, so programs linked against any of the three bind
 * to the hook; libxferprof.map lists the default names. */
#define XP_EXPORTS(name)                                                                \
    __asm__(".symver xp_hook_" #name ", " #name "@@libcudart.so.13");                   \
    extern __typeof__(xp_hook_##name) xp_v12_##name                                     \
        __attribute__((alias("xp_hook_" #name), visibility("default")));                \
    __asm__(".symver xp_v12_" #name ", " #name "@libcudart.so.12");                     \
    extern __typeof__(xp_hook_##name) xp_v11_##name                                     \
        __attribute__((alias("xp_hook_" #name), visibility("default")));                \
    __asm__(".symver xp_v11_" #name ", " #name "@libcudart.so.11");

/* The common frame of every hook: `always` runs after the real call (with
 * `rc` its result) whether or not the call is recorded, `record` only when
 * it is; errno is saved around both. */
#define XP_HOOK_BODY(name, params, args, always, record)                                \
    __attribute__((visibility("default"))) cudaError_t xp_hook_##name params;           \
    __attribute__((visibility("default"))) cudaError_t xp_hook_##name params            \
    {                                                                                   \
        static _Atomic(void *) real_slot;                                               \
        cudaError_t (*real) params =                                                    \
            (cudaError_t (*) params)resolve_runtime(&real_slot, #name);                 \
        if (real == NULL)                                                               \
            return cudaErrorUnknown;                                                    \
        xp_scope scope;                                                                 \
        xp_scope_enter(&scope);                                                         \
        scope.site.ret = (uintptr_t)__builtin_return_address(0);                        \
        scope.site.sp = (uintptr_t)&scope;                                              \
        cudaError_t rc = real args;                                                     \
        int saved_errno = errno;                                                        \
        always;                                                                         \
        if (scope.recording)                                                            \
            record;                                                                     \
        errno = saved_errno;                                                            \
        xp_scope_leave();                                                               \
        return rc;                                                                      \
    }                                                                                   \
    XP_EXPORTS(name)

/* What each kind of hook hands the engine (functions, so the macros below
 * pass plain argument lists). */
static inline void hook_copy(const xp_scope *s, xp_api api, const void *dst, const void *src,
                             size_t count, int kind, cudaStream_t stream, bool async,
                             cudaError_t rc)
{
    xp_copy_call c = {.api = api, .dst = (uint64_t)(uintptr_t)dst,
                      .src = (uint64_t)(uintptr_t)src, .bytes = count,
                      .stream = (uint64_t)(uintptr_t)stream, .kind = kind, .async = async};
    xp_record_copy(s, &c, (int)rc);
}

static inline uint64_t result_ptr(cudaError_t rc, const void *p)
{
    return rc == cudaSuccess ? (uint64_t)(uintptr_t)p : 0;
}

#define XP_COPY(name, is_async, params, args, dst, src, count, kind, stream)            \
    XP_HOOK_BODY(name, params, args, (void)0,                                           \
                 hook_copy(&scope, XP_API_##name, (dst), (src), (count), (int)(kind),   \
                           (stream), (is_async), rc))

#define XP_ALLOC(name, params, args, alloc_kind, ptr, bytes)                            \
    XP_HOOK_BODY(name, params, args, (void)0,                                           \
                 xp_record_alloc(&scope, XP_API_##name, (alloc_kind), result_ptr(rc, (ptr)), \
                                 (bytes), (int)rc))

#define XP_REGISTER(name, params, args, ptr, bytes)                                     \
    XP_HOOK_BODY(name, params, args, (void)0,                                           \
                 xp_record_alloc(&scope, XP_API_##name, XP_ALLOC_REGISTERED,            \
                                 (uint64_t)(uintptr_t)(ptr), (bytes), (int)rc))

#define XP_FREE(name, params, args, kinds, ptr)                                         \
    XP_HOOK_BODY(name, params, args, (void)0,                                           \
                 xp_record_free(&scope, XP_API_##name, (kinds), (uint64_t)(uintptr_t)(ptr), \
                                (int)rc))

#define XP_SYNC(name, params, args, handle)                                             \
    XP_HOOK_BODY(name, params, args, (void)0,                                           \
                 xp_record_sync(&scope, XP_API_##name, (uint64_t)(uintptr_t)(handle), (int)rc))

/* `after` keeps the engine's view of the thread right (the current
 * device), so it runs whether or not the call is recorded. */
#define XP_CALL(name, params, args, arg0, after)                                        \
    XP_HOOK_BODY(name, params, args, if (rc == cudaSuccess) after,                      \
                 xp_record_call(&scope, XP_API_##name, (arg0), (int)rc))

#include "xp_runtime_hooks.def"
