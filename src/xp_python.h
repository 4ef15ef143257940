/* xp_python.h: the calling thread's CPython frames, read in place, for the stack records. */
#ifndef XP_PYTHON_H
#define XP_PYTHON_H

#include <stdatomic.h>

#include "xp_journal.h"

/* Looks for a CPython interpreter in the process (the executable or a loaded
 * libpython exporting _PyRuntime) and, the first time one is found, picks
 * its layout and writes meta python_version and python_module to j, or
 * python_note when its version is not supported.  Cheap once decided:
 * called with every module scan (session start, every second, exit), so an
 * interpreter loaded later is found too.  Never calls the interpreter
 * (except Py_GetVersion, which only formats a static string, on 3.9/3.10
 * when Py_Version is absent). */
void xp_python_scan(xp_journal *j);

/* The calling thread's Python frames, innermost first, into out (at most
 * max): code keys, instruction offsets and XP_PYFRAME_ENTRY flags.  Writes
 * an XP_REC_PYCODE record to j for each code object not seen before.
 * Returns how many (0: no interpreter, no Python state on this thread, or
 * the interpreter is being torn down by another thread).  Reads only the
 * thread's own frames, never takes the GIL, never allocates; every pointer
 * followed is checked (alignment, range, object type) and the walk is
 * bounded.  *hash (OUT): a hash of the frames, 0 when there are none.
 * Inline: a process without an interpreter pays a load (every native stack
 * captured asks, issue 15). */
int xp_python_capture_found(xp_journal *j, xp_pyframe *out, int max, uint64_t *hash)
    __attribute__((visibility("hidden")));

/* The interpreter found (xp_python.c's; NULL: none). */
extern _Atomic(const struct py_state *) xp_python_active __attribute__((visibility("hidden")));

static inline int xp_python_capture(xp_journal *j, xp_pyframe *out, int max, uint64_t *hash)
{
    if (atomic_load_explicit(&xp_python_active, memory_order_relaxed) == NULL) {
        *hash = 0;
        return 0;
    }
    return xp_python_capture_found(j, out, max, hash);
}

/* A forked child: code objects and meta are written again to its journal. */
void xp_python_reset(void);

#endif
