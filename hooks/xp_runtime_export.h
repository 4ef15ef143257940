/* xp_runtime_export.h: what every interposed runtime entry point shares: how
 * its real function is found, and how it is defined and exported at each of
 * the runtime's symbol versions. */
#ifndef XP_RUNTIME_EXPORT_H
#define XP_RUNTIME_EXPORT_H

#include <stdatomic.h>
#include <stdbool.h>

/* The runtime versions hooks are exported at, newest first: a hook's
 * version index says which one its callers were linked against. */
#define XP_RT_V13 0u
#define XP_RT_V12 1u
#define XP_RT_V11 2u

/* The first lookup of a runtime function (the version `prefer` first, then
 * the newest loaded, then by plain name), stored in *slot; `say`: its
 * absence is said on stderr (a hook's real function: the program called it,
 * and the hook fails the call). */
void *xp_find_runtime(_Atomic(void *) *slot, const char *name, unsigned prefer, bool say);

/* A hook's real function (NULL after saying so): its callers' runtime. */
static inline void *resolve_runtime(_Atomic(void *) *slot, const char *name, unsigned prefer)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    return fn != NULL ? fn : xp_find_runtime(slot, name, prefer, true);
}

/* A runtime function the preload calls itself (in the runtime `prefer`):
 * NULL, silently, if absent. */
static inline void *lookup_runtime(_Atomic(void *) *slot, const char *name, unsigned prefer)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    return fn != NULL ? fn : xp_find_runtime(slot, name, prefer, false);
}

/* Defines a hook once per runtime version, with def(function, version
 * index, name, ...), and exports them as name@@libcudart.so.13,
 * name@libcudart.so.12 and name@libcudart.so.11 (the generated version
 * script lists the default names).  One function each, not aliases: a
 * process may load two runtimes (a library built against CUDA 12 in a
 * CUDA 13 program), and each caller must reach its own, whose state (the
 * last error, streams, modules) is its own. */
#define XP_RUNTIME_VERSIONS(def, prefix, name, ...)                                     \
    def(prefix##name, XP_RT_V13, name, __VA_ARGS__)                                     \
    def(prefix##v12_##name, XP_RT_V12, name, __VA_ARGS__)                               \
    def(prefix##v11_##name, XP_RT_V11, name, __VA_ARGS__)                               \
    __asm__(".symver " #prefix #name ", " #name "@@libcudart.so.13");                   \
    __asm__(".symver " #prefix "v12_" #name ", " #name "@libcudart.so.12");             \
    __asm__(".symver " #prefix "v11_" #name ", " #name "@libcudart.so.11");

#endif
