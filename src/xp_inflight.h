/* xp_inflight.h: counting recorded calls in flight, so that exit can wait for
 * them or cut them off instead of tearing the journal down under them. */
#ifndef XP_INFLIGHT_H
#define XP_INFLIGHT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Hook side (xp_scope_*).  A recorded call is counted from its entry
 * (xp_inflight_enter: NULL when exit has closed the gate; the call is then
 * not recorded and counted as lost) through the real call, to its writing
 * (xp_inflight_returned: false when exit cut it off while the real call ran;
 * it must then write nothing: it was counted as lost), to its end
 * (xp_inflight_leave, after its records are committed).  Entering returns
 * the thread's stripe, which the call hands to the other two: the stripe is
 * found once per call, and they inline (issue 15: the hook's cost). */
typedef _Atomic uint64_t xp_stripe;

/* The bits of a stripe's word (xp_inflight.c says what they count). */
#define XP_INCALL_ONE 1ull
#define XP_WRITER_ONE (1ull << 31)
#define XP_COUNT_MASK ((1ull << 31) - 1)
#define XP_CLOSED (1ull << 62)
#define XP_CUT (1ull << 63)

/* The calling thread's own counted call: 0 none, 1 inside the real call, 2
 * writing (xp_inflight.c's; here for the inline functions below). */
extern __thread uint8_t xp_inflight_own_phase
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* One word per stripe, a cache line each (xp_inflight.c says why). */
#define XP_STRIPES 64
extern struct xp_stripe_line {
    _Alignas(64) xp_stripe word;
} xp_stripes[XP_STRIPES] __attribute__((visibility("hidden")));

/* xp_inflight_enter when exit has closed the gate (out of line). */
xp_stripe *xp_inflight_enter_closed(xp_stripe *w) __attribute__((visibility("hidden")));

/* The calling thread's stripe. */
static inline xp_stripe *xp_inflight_stripe(void)
{
    /* Thread blocks lie a stack apart: hash the address, keep the top bits. */
    uintptr_t a = (uintptr_t)&xp_inflight_own_phase;
    return &xp_stripes[(uint64_t)a * 0x9E3779B97F4A7C15ull >> 58].word;
}

static inline xp_stripe *xp_inflight_enter(void)
{
    xp_stripe *w = xp_inflight_stripe();
    uint64_t v = atomic_fetch_add_explicit(w, XP_INCALL_ONE, memory_order_acq_rel);
    if (__builtin_expect(v & XP_CLOSED, 0))
        return xp_inflight_enter_closed(w);
    xp_inflight_own_phase = 1;
    return w;
}

static inline bool xp_inflight_returned(xp_stripe *w)
{
    uint64_t v = atomic_fetch_add_explicit(w, XP_WRITER_ONE - XP_INCALL_ONE,
                                           memory_order_acq_rel);
    if (__builtin_expect(v & XP_CUT, 0)) {
        /* Counted as lost by the cut: undo, write nothing, leave nothing. */
        atomic_fetch_sub_explicit(w, XP_WRITER_ONE - XP_INCALL_ONE, memory_order_relaxed);
        xp_inflight_own_phase = 0;
        return false;
    }
    xp_inflight_own_phase = 2;
    return true;
}

static inline void xp_inflight_leave(xp_stripe *w)
{
    xp_inflight_own_phase = 0;
    /* Release: the records this call committed are visible to exit's reader
     * once it sees the count drop. */
    atomic_fetch_sub_explicit(w, XP_WRITER_ONE, memory_order_release);
}

/* The calling thread's own counted call's phase, for a call from a signal
 * handler that interrupts one: saved before it is counted, and set back
 * after, so that the interrupted call is still known as the thread's own. */
uint8_t xp_inflight_phase(void);
void xp_inflight_set_phase(uint8_t phase);

/* A call not recorded because the session is stopping: counted as lost
 * (until xp_inflight_cut_off has taken its count). */
void xp_inflight_refused(void);

/* Exit side, from the destructor, in this order.  Closes the gate: no call
 * entering from now on is recorded. */
void xp_inflight_close(void);

/* Waits up to wait_ns for the calls in flight to finish (the calling thread's
 * own call, when exit is called from inside one, never will and is not
 * waited for).  Then cuts off the calls still inside the real call and waits
 * (bounded as well) for those already writing their records.  Returns the
 * calls cut off plus the calls refused so far: lost, in flight at exit. */
uint64_t xp_inflight_cut_off(uint64_t wait_ns);

/* In a fork child: only the calling thread exists; its own call, if any,
 * is all that is in flight. */
void xp_inflight_after_fork(void);

#endif
