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

/* Every runtime hook (name, version) is also a row of the section
 * xp_rt_hooks, for the lookups that hand them out (xp_lookup_hooks.c). */
typedef struct xp_rt_hook {
    const char *name;
    unsigned version;             /* XP_RT_V* */
    void (*fn)(void);             /* the hook */
    _Atomic(void *) *real;        /* its real function, once resolved */
} xp_rt_hook;

/* The hook of `name` at `version` (an XP_RT_V* index), or NULL. */
const xp_rt_hook *xp_rt_hook_find(const char *name, unsigned version);

/* The row of hook `fn` (defined just before, its real function in
 * fn##_real).  The linker gathers the rows of every file into one array
 * (__start_xp_rt_hooks .. __stop_xp_rt_hooks). */
#define XP_RT_HOOK_ROW(fn, version, name)                                               \
    __attribute__((section("xp_rt_hooks"), used)) static const xp_rt_hook fn##_row = {  \
        #name, (version), (void (*)(void))fn, &fn##_real};

/* The versions an entry of a hook table is defined at, as (13, 12, 11)
 * flags: a symbol whose signature differs between versions has one entry
 * per signature (xp_runtime_hooks.def says which).  hooks/xp_hook_table.py
 * reads the same names (keep the two in step). */
#define XP_ALL_VERSIONS (1, 1, 1)
#define XP_V13 (1, 0, 0)
#define XP_V12_V11 (0, 1, 1)
#define XP_V12 (0, 1, 0)
#define XP_V11 (0, 0, 1)
#define XP_V13_V12 (1, 1, 0)
/* At libcudart.so.12 from CUDA 12.8 (12.5) on: older 12.x headers do not
 * declare it, which the ABI check knows. */
#define XP_V12_8 (0, 1, 0)
#define XP_V13_V12_5 (1, 1, 0)
#define XP_V13_V12_3 (1, 1, 0)   /* at libcudart.so.12 from CUDA 12.3 */

/* Defines a hook at each version of `vers`, with def(function, version
 * index, name, ...), and exports them as name@@libcudart.so.13,
 * name@libcudart.so.12 and name@libcudart.so.11.0 (the generated version
 * script lists the default names).  One function each, not aliases: a
 * process may load two runtimes (a library built against CUDA 12 in a
 * CUDA 13 program), and each caller must reach its own, whose state (the
 * last error, streams, modules) is its own. */
#define XP_RUNTIME_VERSIONS_AT(vers, def, prefix, name, ...)                            \
    XP_RV_CALL(XP_RV_AT, XP_RV_UNPAREN vers, def, prefix, name, __VA_ARGS__)
/* An entry of a hook table at some versions only: XP_ONLY(XP_V13, XP_FORM,
 * name, ...) is XP_FORM(name, ...) defined and exported at 13 only (each
 * form XP_FORM has its XP_FORM_AT(vers, name, ...)). */
#define XP_ONLY(vers, form, ...) form##_AT(vers, __VA_ARGS__)
#define XP_RUNTIME_VERSIONS(def, prefix, name, ...)                                     \
    XP_RUNTIME_VERSIONS_AT(XP_ALL_VERSIONS, def, prefix, name, __VA_ARGS__)

/* The machinery: vers (a flag triple) becomes XP_RV_AT's first three
 * arguments, and each flag pastes into XP_RV_WHEN_0 (nothing) or _1. */
#define XP_RV_UNPAREN(...) __VA_ARGS__
#define XP_RV_CALL(m, ...) m(__VA_ARGS__)
#define XP_RV_WHEN_0(...)
#define XP_RV_WHEN_1(...) __VA_ARGS__
#define XP_RV_AT(v13, v12, v11, def, prefix, name, ...)                                 \
    XP_RV_WHEN_##v13(def(prefix##name, XP_RT_V13, name, __VA_ARGS__)                    \
                     __asm__(".symver " #prefix #name ", " #name "@@libcudart.so.13");) \
    XP_RV_WHEN_##v12(def(prefix##v12_##name, XP_RT_V12, name, __VA_ARGS__)              \
                     __asm__(".symver " #prefix "v12_" #name ", " #name                  \
                             "@libcudart.so.12");)                                      \
    XP_RV_WHEN_##v11(def(prefix##v11_##name, XP_RT_V11, name, __VA_ARGS__)              \
                     __asm__(".symver " #prefix "v11_" #name ", " #name                  \
                             "@libcudart.so.11.0");)

#endif
