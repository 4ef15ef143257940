/* xp_driver_hooks.h: the driver entry points libxferprof hands out
 * (xp_driver_hooks.def), shared by the wrappers (xp_driver_hooks.c) and the
 * lookups that substitute them (xp_lookup_hooks.c). */
#ifndef XP_DRIVER_HOOKS_H
#define XP_DRIVER_HOOKS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

/* Code that may run before a sanitizer's runtime is ready: ASan and TSan
 * resolve their interceptors with dlsym at start-up, i.e. through ours.  It
 * must not call libc either (interceptors), hence the string helpers. */
#define XP_NO_SANITIZE __attribute__((no_sanitize("address", "thread", "undefined")))

XP_NO_SANITIZE static inline bool xp_str_eq(const char *a, const char *b)
{
    while (*a != '\0' && *a == *b) {
        a++;
        b++;
    }
    return *a == *b;
}

XP_NO_SANITIZE static inline bool xp_str_prefix(const char *s, const char *prefix)
{
    while (*prefix != '\0' && *s == *prefix) {
        s++;
        prefix++;
    }
    return *prefix == '\0';
}

/* One index per exported variant, in table order. */
enum xp_drv_index {
#define XP_DRV_EACH(name, ...) XP_DRV_##name,
#include "xp_driver_each.h"
    XP_DRV_COUNT
};

typedef struct xp_drv_entry {
    const char *name;         /* the exported variant: "cuMemcpyHtoD_v2_ptds" */
    void *wrapper;            /* ours */
} xp_drv_entry;

/* In .def order (xp_driver_hooks.c). */
extern const xp_drv_entry xp_drv_entries[XP_DRV_COUNT];

/* What each wrapper forwards to: filled once, by whichever comes first of an
 * exact-name lookup after libxferprof (a call through the interposed symbol)
 * and the real lookup that returned this variant when ours was handed out in
 * its place.  Written with compare-and-swap from NULL only, so a wrapper
 * never changes its target once it has one. */
extern _Atomic(void *) xp_drv_slots[XP_DRV_COUNT];

/* Resolves an empty slot by name (slow path of xp_drv_real); NULL if no
 * libcuda defines it. */
void *xp_drv_resolve(unsigned i);

static inline void *xp_drv_real(unsigned i)
{
    void *fn = atomic_load_explicit(&xp_drv_slots[i], memory_order_acquire);
    return fn != NULL ? fn : xp_drv_resolve(i);
}

/* Offers fn as slot i's target; true when the slot now holds fn (it was
 * empty, or already fn), so that handing out wrapper i is the same as
 * handing out fn. */
bool xp_drv_offer(unsigned i, void *fn);

/* Index of the variant called exactly `name`, or -1 (XP_NO_SANITIZE). */
int xp_drv_find(const char *name);

/* ---- from xp_lookup_hooks.c ---------------------------------------------- */

/* The real dlsym, called from libxferprof (RTLD_NEXT searches after it). */
void *xp_real_dlsym(void *handle, const char *name);

/* The address the loaded libcuda.so.1 itself defines for variant i (cached;
 * NULL while no libcuda is loaded or when it lacks the variant). */
void *xp_libcuda_export(unsigned i);

/* After a real lookup of `symbol` returned *pfn: if that is the real variant
 * of one of ours, *pfn becomes our wrapper.  errno is kept. */
void xp_drv_substitute(const char *symbol, void **pfn);

/* Exports xp_drv_<name> unversioned as <name>, the driver's own name: a
 * hidden function plus a default-visibility alias whose assembler name is
 * the real one (the C name differs, so cuda.h's prototypes and macros never
 * collide with it). */
#define XP_DRV_EXPORT(name)                                                         \
    extern __typeof__(xp_drv_##name) xp_export_##name __asm__(#name)                \
        __attribute__((alias("xp_drv_" #name), visibility("default")));

#endif
