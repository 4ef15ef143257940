/* xp_inflight.h: counting recorded calls in flight, so that exit can wait for
 * them or cut them off instead of tearing the journal down under them. */
#ifndef XP_INFLIGHT_H
#define XP_INFLIGHT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp_tls.h"

/* Hook side (xp_scope_*).  A recorded call is counted from its entry
 * (xp_inflight_enter: NULL when exit has closed the gate; the call is then
 * not recorded and counted as lost) through the real call, to its writing
 * (xp_inflight_returned: false when exit cut it off while the real call ran;
 * it must then write nothing: it was counted as lost), to its end
 * (xp_inflight_leave, after its records are committed).  Each thread counts
 * its calls in a slot of its own, written with plain stores: no locked
 * instruction on the hot path (issue 15; xp_inflight.c says why that is
 * enough).  Entering returns the thread's slot, which the call hands to the
 * other two. */
typedef struct xp_inflight_slot {
    /* Written by its thread only (and signal handlers on it, whose calls
     * end before the code they interrupted goes on, leaving it as found). */
    _Atomic uint64_t word;
    /* Exit's: how many of the slot's calls it counted as lost when it cut
     * them off, given back one by one as they return (xp_inflight.c). */
    _Atomic uint64_t verdict;
} xp_inflight_slot;

/* The bits of a slot's word: calls inside the real call (entered, not yet
 * returned), and calls writing their records (returned, not yet left). */
#define XP_INCALL_ONE 1ull
#define XP_INCALL_MASK 0xffffffffull
#define XP_WRITER_ONE (1ull << 32)

/* What exit has done, read by every call (0: nothing, the common case).
 * CLOSED: entering calls are not recorded; CUT: calls still inside the real
 * call were counted as lost; FENCED: no membarrier(2) here, so the hot path
 * takes the out-of-line way, which fences itself (xp_inflight.c). */
#define XP_GATE_CLOSED 1u
#define XP_GATE_CUT 2u
#define XP_GATE_FENCED 4u
/* VFORK: a vfork child exited in the process's memory (xp_engine.c): calls
 * take the out-of-line way, which runs xp_inflight_vfork_hook (the
 * engine's, set at load); one test on the hot path for two (issue 15). */
#define XP_GATE_VFORK 8u
extern void (*xp_inflight_vfork_hook)(void) __attribute__((visibility("hidden")));
extern _Atomic unsigned xp_inflight_gate __attribute__((visibility("hidden")));

/* The calling thread's slot (in its xp_thread block), NULL until the
 * thread's first recorded call. */
#define xp_inflight_self (xp_tls.inflight)

/* xp_inflight_enter past its common case (out of line): s NULL, the thread
 * has no slot yet; else the call's count is in s and the gate is not 0. */
xp_inflight_slot *xp_inflight_enter_slow(xp_inflight_slot *s) __attribute__((visibility("hidden")));
/* xp_inflight_returned when the gate is not 0 (out of line).  level: the
 * calls inside the real call in the slot, this one included, before it
 * returned. */
bool xp_inflight_returned_slow(xp_inflight_slot *s, uint64_t level)
    __attribute__((visibility("hidden")));

static inline xp_inflight_slot *xp_inflight_enter(void)
{
    xp_inflight_slot *s = xp_inflight_self;
    if (__builtin_expect(s == NULL, 0))
        return xp_inflight_enter_slow(NULL);
    uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
    atomic_store_explicit(&s->word, w + XP_INCALL_ONE, memory_order_relaxed);
    /* The count, then the gate: only the compiler is kept from swapping
     * them; exit's membarrier orders them on the CPU (xp_inflight.c). */
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(atomic_load_explicit(&xp_inflight_gate, memory_order_relaxed) != 0, 0))
        return xp_inflight_enter_slow(s);
    return s;
}

static inline bool xp_inflight_returned(xp_inflight_slot *s)
{
    uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
    atomic_store_explicit(&s->word, w - XP_INCALL_ONE + XP_WRITER_ONE, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (__builtin_expect(atomic_load_explicit(&xp_inflight_gate, memory_order_relaxed) != 0, 0))
        return xp_inflight_returned_slow(s, w & XP_INCALL_MASK);
    return true;
}

static inline void xp_inflight_leave(xp_inflight_slot *s)
{
    /* Release: the records this call committed are visible to exit's reader
     * once it sees the count drop. */
    uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
    atomic_store_explicit(&s->word, w - XP_WRITER_ONE, memory_order_release);
}

/* A call not recorded because the session is stopping: counted as lost
 * (until xp_inflight_cut_off has taken its count). */
void xp_inflight_refused(void);

/* Calls not recorded because their thread could get no slot (no memory). */
uint64_t xp_inflight_unslotted(void);

/* At the session's start, before any call is counted: whether the hot path
 * can leave its ordering to exit (membarrier registered), else FENCED. */
void xp_inflight_start(void);

/* Exit side, from the destructor, in this order.  Closes the gate: no call
 * entering from now on is recorded. */
void xp_inflight_close(void);

/* Waits up to wait_ns for the calls in flight to finish (the calling
 * thread's own calls, when exit is called from inside one, never will and
 * are not waited for).  Then cuts off the calls still inside the real call
 * and waits (bounded as well) for those already writing their records.
 * Returns the calls cut off plus the calls refused so far: lost, in flight
 * at exit. */
uint64_t xp_inflight_cut_off(uint64_t wait_ns);

/* In a fork child: only the calling thread exists; its own calls, if any,
 * are all that is in flight. */
void xp_inflight_after_fork(void);

/* A thread's slot at its exit (xp_thread.c): whether a call of it is still
 * counted (the thread ended inside one: its block is then never reused, so
 * that exit counts the call). */
static inline bool xp_inflight_busy(const xp_inflight_slot *s)
{
    return atomic_load_explicit(&s->word, memory_order_relaxed) != 0;
}

#endif
