/* xp_inflight.c: counting recorded calls in flight (xp_inflight.h). */
#include "xp_inflight.h"

#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "xp_engine.h"

/*
 * One word per stripe, a cache line each, a thread's stripe chosen by the
 * address of its thread-local block: threads rarely share a line, so a call
 * costs three uncontended atomic operations and no shared line moves between
 * cores.  A word holds:
 *   bits  0..30  calls inside the real call (entered, not yet returned)
 *   bits 31..61  calls writing their records (returned, not yet left)
 *   bit  62      CLOSED: exit has begun; entering calls are not recorded
 *   bit  63      CUT: exit gave up waiting; calls still inside the real call
 *                were counted as lost and must write nothing
 * Entering, returning and closing or cutting are atomic operations on the
 * same word, so each call is on exactly one side of the close and of the cut:
 * recorded, or counted as lost, never both and never neither.
 */

/* Owned by this file; written by every recorded call (xp_inflight.h). */
struct xp_stripe_line xp_stripes[XP_STRIPES];
/* Calls refused while stopping (xp_inflight_refused). */
static _Atomic uint64_t refused;
/* The calling thread's own counted call (xp_inflight.h): exit called from
 * inside a hook must not wait for itself. */
__thread uint8_t xp_inflight_own_phase __attribute__((tls_model("initial-exec")));

xp_stripe *xp_inflight_enter_closed(xp_stripe *w)
{
    atomic_fetch_sub_explicit(w, XP_INCALL_ONE, memory_order_relaxed);
    xp_inflight_refused();
    return NULL;
}

uint8_t xp_inflight_phase(void)
{
    return xp_inflight_own_phase;
}

void xp_inflight_set_phase(uint8_t phase)
{
    xp_inflight_own_phase = phase;
}

void xp_inflight_refused(void)
{
    atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
}

void xp_inflight_close(void)
{
    for (int i = 0; i < XP_STRIPES; i++)
        atomic_fetch_or_explicit(&xp_stripes[i].word, XP_CLOSED, memory_order_seq_cst);
}

/* Calls in flight of one kind (in_call: inside the real call, else writing),
 * not counting the calling thread's own. */
static uint64_t others(bool in_call)
{
    uint64_t n = 0;
    for (int i = 0; i < XP_STRIPES; i++) {
        uint64_t v = atomic_load_explicit(&xp_stripes[i].word, memory_order_acquire);
        n += in_call ? v & XP_COUNT_MASK : (v >> 31) & XP_COUNT_MASK;
    }
    return n - (xp_inflight_own_phase == (in_call ? 1 : 2));
}

/* Waits until there are no others (both kinds, or writers only), or until
 * deadline (CLOCK_MONOTONIC ns). */
static void wait_for(bool writers_only, uint64_t deadline)
{
    while ((writers_only ? 0 : others(true)) + others(false) > 0 && xp_now_ns() < deadline) {
        struct timespec ts = {0, 200 * 1000};
        nanosleep(&ts, NULL);
    }
}

uint64_t xp_inflight_cut_off(uint64_t wait_ns)
{
    wait_for(false, xp_now_ns() + wait_ns);
    uint64_t cut = 0;
    for (int i = 0; i < XP_STRIPES; i++)
        cut += atomic_fetch_or_explicit(&xp_stripes[i].word, XP_CUT, memory_order_seq_cst) &
               XP_COUNT_MASK;
    /* Writers were past their real call: a record or two each, no waiting
     * on the device.  Bounded all the same. */
    wait_for(true, xp_now_ns() + wait_ns);
    return cut + atomic_load_explicit(&refused, memory_order_relaxed);
}

void xp_inflight_after_fork(void)
{
    for (int i = 0; i < XP_STRIPES; i++)
        atomic_store_explicit(&xp_stripes[i].word, 0, memory_order_relaxed);
    atomic_store_explicit(&refused, 0, memory_order_relaxed);
    if (xp_inflight_own_phase)
        atomic_store_explicit(xp_inflight_stripe(), xp_inflight_own_phase == 1 ? XP_INCALL_ONE : XP_WRITER_ONE,
                              memory_order_relaxed);
}
