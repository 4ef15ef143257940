/* xp_scope.c: hooks entered while the thread is already inside one: calls
 * really nested in a CUDA call, told from calls made by a signal handler
 * that interrupted one (recorded, or counted as lost). */
#include <dlfcn.h>
#include <stdint.h>

#include "xp_engine.h"
#include "xp_inflight.h"
#include "xp_thread.h"

/*
 * A hook entered with xp_depth > 0 is either
 * - nested: called by the CUDA function the thread is inside of (the
 *   runtime calling the driver through the pointers cuGetProcAddress gave
 *   it, which are our wrappers), or by the preload itself; not the
 *   program's call, not recorded;
 * - foreign: called by code that interrupted the thread without returning
 *   first, i.e. a signal handler (the only such code on one thread).  It is
 *   the program's call: recorded, or counted as lost.
 * The caller of a nested call lies in the module of the function the thread
 * is inside of (xp_callee): the runtime's own code calls the driver.  A
 * signal handler lies in the program (or a library of its), never inside
 * libcudart or libcuda.  _dl_find_object answers which module an address
 * is in without a lock (glibc keeps a lock-free copy of the module map for
 * it, for unwinders in signal handlers); about 20 ns, and only hooks
 * entered at depth > 0 ask.
 *
 * A foreign call is recorded only when the thread was inside the real call
 * of a hook (xp_callee_clean): then none of our per-thread state is half
 * written (the journal's reservation pointer, the stack walk's work space,
 * the classification memo: all touched only before and after the real
 * call), the thread holds none of our locks, and what recording uses is
 * safe in a handler: the journal's reservation (a bump of the thread's own
 * pointer, or a new chunk under locks the interrupted code does not hold),
 * no malloc, and libunwind's local unwinding, which libunwind documents as
 * safe in signal handlers (its stack shows the handler, then the code it
 * interrupted).  The state the thread keeps between calls (its last copy, for
 * pairing with a sync) is set aside and given back, so that the interrupted call goes on as if nothing
 * had run (its count in flight is the thread's slot's, which the handler's
 * call leaves as it found it, xp_inflight.c).  Interrupting anything else of ours (writing a record, a stack
 * walk, our own driver queries, start-up), the call is not recorded and is
 * counted in records_lost ("call(s) from signal handlers not recorded").
 */

/* Whether code at `caller` lies in the module of `callee`. */
static bool same_module(uintptr_t caller, uintptr_t callee)
{
    struct dl_find_object o;
    /* Not in any module (generated code): leave it nested, as before. */
    if (_dl_find_object((void *)callee, &o) != 0)
        return true;
    return caller >= (uintptr_t)o.dlfo_map_start && caller < (uintptr_t)o.dlfo_map_end;
}

bool xp_scope_enter_deeper(xp_scope *s)
{
    uintptr_t callee = s->callee_before;
    if (callee == XP_CALLEE_OURS || (callee != 0 && same_module(s->site.ret, callee)))
        return false;
    s->foreign = true;
    s->set_aside = false;
    switch (xp_engine_session()) {
    case XP_SESSION_ON:
        break;
    case XP_SESSION_STARTING:
        /* This thread may be the one starting it: no waiting. */
        xp_engine_signal_call_lost();
        return false;
    case XP_SESSION_STOPPING:
        xp_inflight_refused();
        return false;
    default:
        return false;   /* nothing is recorded: nothing to count */
    }
    /* Counted in flight like any recorded call, so that exit either waits
     * for its record (or its count) or counts it as in flight. */
    s->slot = xp_inflight_enter();
    if (s->slot == NULL)
        return false;   /* refused: counted */
    if (!s->clean_before) {
        if (xp_inflight_returned(s->slot)) {
            xp_engine_signal_call_lost();
            xp_inflight_leave(s->slot);
        }
        return false;
    }
    /* One level: a handler inside a handler's call leaves the aside to the
     * outer one, which gives the interrupted call its state back. */
    xp_thread *t = xp_thread_get();
    s->set_aside = t != NULL && !t->aside.held;
    if (s->set_aside) {
        t->aside.held = true;
        t->aside.last_copy = t->last_copy;
    }
    return true;
}

void xp_scope_leave_foreign(const xp_scope *s)
{
    if (s->set_aside) {
        xp_thread *t = xp_self;
        t->last_copy = t->aside.last_copy;
        t->aside.held = false;
    }
}
