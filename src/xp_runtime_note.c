/* xp_runtime_note.c: which CUDA runtime a program that calls the driver
 * uses, shared or linked statically, noted in meta at its first recorded
 * driver call. */
#include "xp_engine.h"
#include "xp_engine_int.h"

#include <link.h>
#include <stdatomic.h>
#include <string.h>

/* Whether the first recorded driver call has been looked at
 * (xp_note_driver_call); per session, so reset in a forked child. */
static _Atomic bool driver_call_noted;

static int is_libcudart(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    return strncmp(base, "libcudart.so", 12) == 0;
}

/* Set once a runtime hook found the real function it forwards to. */
static _Atomic bool runtime_resolved;

void xp_note_runtime_resolved(void)
{
    atomic_store_explicit(&runtime_resolved, true, memory_order_relaxed);
}

void xp_note_driver_call(void)
{
    if (atomic_load_explicit(&driver_call_noted, memory_order_relaxed) ||
        atomic_exchange(&driver_call_noted, true))
        return;
    /* A runtime whose entry points the program has called is a shared one
     * whatever its file is called (the simulator's CUDA 12 stand-in, which
     * `xferprof run --sim` preloads for PyTorch, is not libcudart.so*). */
    bool shared = atomic_load_explicit(&runtime_resolved, memory_order_relaxed) ||
                  dl_iterate_phdr(is_libcudart, NULL) != 0;
    if (!shared) {
        xp_session_put_meta("runtime", "static");
        xp_session_put_meta("runtime_note",
                            "no libcudart.so was loaded at the first driver call: the CUDA "
                            "runtime, if any, is linked statically, and its copies are seen at "
                            "the driver layer only");
    }
}

void xp_runtime_note_after_fork(void)
{
    atomic_store(&driver_call_noted, false);
}
