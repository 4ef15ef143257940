/* xp_runtime_export.h: what every interposed runtime entry point shares: how
 * its real function is found, and how it is exported at the runtime's
 * symbol versions. */
#ifndef XP_RUNTIME_EXPORT_H
#define XP_RUNTIME_EXPORT_H

#include <stdatomic.h>
#include <stdbool.h>

/* The first lookup of a runtime function (newest symbol version first, then
 * by plain name), stored in *slot; `say`: its absence is said on stderr (a
 * hook's real function: the program called it, and the hook fails the call). */
void *xp_find_runtime(_Atomic(void *) *slot, const char *name, bool say);

/* A hook's real function (NULL after saying so). */
static inline void *resolve_runtime(_Atomic(void *) *slot, const char *name)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    return fn != NULL ? fn : xp_find_runtime(slot, name, true);
}

/* A runtime function the preload calls itself: NULL, silently, if absent. */
static inline void *lookup_runtime(_Atomic(void *) *slot, const char *name)
{
    void *fn = atomic_load_explicit(slot, memory_order_acquire);
    return fn != NULL ? fn : xp_find_runtime(slot, name, false);
}

/* Exports the function `prefix ## name` as name@@libcudart.so.13 (default)
 * plus aliases at libcudart.so.12 and .11, so programs linked against any of
 * the three bind to it; the generated version script lists the default
 * names. */
#define XP_RUNTIME_EXPORTS(prefix, name)                                                \
    __asm__(".symver " #prefix #name ", " #name "@@libcudart.so.13");                   \
    extern __typeof__(prefix##name) prefix##v12_##name                                  \
        __attribute__((alias(#prefix #name), visibility("default")));                   \
    __asm__(".symver " #prefix "v12_" #name ", " #name "@libcudart.so.12");             \
    extern __typeof__(prefix##name) prefix##v11_##name                                  \
        __attribute__((alias(#prefix #name), visibility("default")));                   \
    __asm__(".symver " #prefix "v11_" #name ", " #name "@libcudart.so.11");

#endif
