/* xp_inflight.c: counting recorded calls in flight (xp_inflight.h). */
#include "xp_inflight.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "xp_engine.h"
#include "xp_thread.h"

/*
 * Each thread counts its own calls in its slot (its xp_thread block; the
 * list of blocks is never unlinked, so exit walks it without a lock): a
 * call costs three plain stores and two loads of the gate, no locked
 * instruction (issue 15: three locked read-modify-writes were ~20 ns each
 * on the hot path).  A slot's word holds, in its thread's calls:
 *   bits  0..31  calls inside the real call (entered, not yet returned)
 *   bits 32..63  calls writing their records (returned, not yet left)
 * Only its thread writes it.  A signal handler's call on the thread comes
 * and goes between two of the thread's instructions and leaves the word as
 * it found it, so a load and a store are as good as an atomic add there.
 *
 * Exit needs each call on exactly one side of the close (recorded, or
 * refused and counted) and of the cut (written, or counted as lost, never
 * both, never neither).  Both are Dekker's pattern: a call stores its count
 * then loads the gate; exit stores the gate then loads the counts.  That
 * needs a store-load barrier on both sides, which on the hot path would be
 * a locked instruction again; instead exit calls membarrier(2)
 * (MEMBARRIER_CMD_PRIVATE_EXPEDITED: every running thread of the process
 * executes a full barrier, and one not running had one at its context
 * switch) between storing the gate and loading the counts, which orders
 * each thread's store before its load as far as exit can tell, and the hot
 * path only keeps the compiler from swapping them.  Then, for the close: a
 * call that saw the gate open is in the counts exit reads after it; for
 * the cut: a call that returned and saw no cut is counted as writing, and
 * exit waits for it.  Where membarrier is not available (kernels before
 * 4.14, seccomp), the gate says FENCED and every call takes the
 * out-of-line way, which fences itself.
 *
 * The cut.  Both sides may also see the other's store: a call that
 * returned and sees the cut cannot tell whether exit counted it inside the
 * real call (lost: write nothing) or saw it writing (exit waits: write).
 * Exit writes down, per slot, the calls it counted inside the real call
 * (the verdict) and then says so (published); such a call waits for that
 * and decides by its level, its place in the slot's stack of calls inside
 * the real call: calls on a thread nest (a signal handler's call ends
 * before the call it interrupted goes on), so the counted ones were levels
 * 1..verdict and return from the top down, each taking its level off the
 * verdict.  A call seeing the cut at its entry (exit may have counted its
 * count, put in and taken back out, the same way) decides the same way,
 * else counts itself refused.  A call entering after the close never puts
 * its count in: the session's state said stopping before the gate closed
 * (xp_engine_enter, xp_scope_enter_deeper), so no level is taken twice.
 */

_Atomic unsigned xp_inflight_gate;
void (*xp_inflight_vfork_hook)(void);
/* Calls refused while stopping (xp_inflight_refused). */
static _Atomic uint64_t refused;
/* Calls not recorded for want of a slot. */
static _Atomic uint64_t unslotted;
/* Set once exit has written every slot's verdict (the cut). */
static _Atomic bool published;

void xp_inflight_refused(void)
{
    atomic_fetch_add_explicit(&refused, 1, memory_order_relaxed);
}

uint64_t xp_inflight_unslotted(void)
{
    return atomic_load_explicit(&unslotted, memory_order_relaxed);
}

/* Whether exit counted the call at `level` of slot s as lost when it cut
 * (the gate says cut): waits for the verdicts, and takes its own. */
static bool counted_at_cut(xp_inflight_slot *s, uint64_t level)
{
    /* Exit publishes right after one pass over the slots, waiting on
     * nothing. */
    while (!atomic_load_explicit(&published, memory_order_acquire))
        sched_yield();
    uint64_t expected = level;
    return atomic_compare_exchange_strong_explicit(&s->verdict, &expected, level - 1,
                                                   memory_order_relaxed, memory_order_relaxed);
}

xp_inflight_slot *xp_inflight_enter_slow(xp_inflight_slot *s)
{
    if (s == NULL) {
        /* The thread's first call: its block (mapped before the real call,
         * which must see the program's errno). */
        int saved = errno;
        xp_thread *t = xp_thread_get();
        errno = saved;
        if (t == NULL) {
            atomic_fetch_add_explicit(&unslotted, 1, memory_order_relaxed);
            return NULL;
        }
        xp_inflight_self = &t->inflight;
        return xp_inflight_enter();
    }
    if ((atomic_load_explicit(&xp_inflight_gate, memory_order_relaxed) & XP_GATE_VFORK) &&
        xp_inflight_vfork_hook != NULL)
        xp_inflight_vfork_hook();
    /* The store-load order membarrier gives elsewhere (FENCED). */
    atomic_thread_fence(memory_order_seq_cst);
    if (!(atomic_load_explicit(&xp_inflight_gate, memory_order_relaxed) & XP_GATE_CLOSED))
        return s;
    /* Closed: taken back out, and counted refused unless the cut counted it. */
    uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
    atomic_store_explicit(&s->word, w - XP_INCALL_ONE, memory_order_relaxed);
    atomic_thread_fence(memory_order_seq_cst);
    if (!(atomic_load_explicit(&xp_inflight_gate, memory_order_relaxed) & XP_GATE_CUT) ||
        !counted_at_cut(s, w & XP_INCALL_MASK))
        xp_inflight_refused();
    return NULL;
}

bool xp_inflight_returned_slow(xp_inflight_slot *s, uint64_t level)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (!(atomic_load_explicit(&xp_inflight_gate, memory_order_relaxed) & XP_GATE_CUT) ||
        !counted_at_cut(s, level))
        return true;   /* exit saw it writing, and waits for it */
    /* Counted as lost by the cut: write nothing, leave nothing. */
    uint64_t w = atomic_load_explicit(&s->word, memory_order_relaxed);
    atomic_store_explicit(&s->word, w - XP_WRITER_ONE, memory_order_relaxed);
    return false;
}

void xp_inflight_start(void)
{
    int saved = errno;
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0)
        atomic_fetch_or_explicit(&xp_inflight_gate, XP_GATE_FENCED, memory_order_relaxed);
    errno = saved;
}

/* After storing the gate, before reading the slots: every thread's count
 * stored before its load of the gate (above). */
static void barrier_all(void)
{
    if (atomic_load_explicit(&xp_inflight_gate, memory_order_relaxed) & XP_GATE_FENCED)
        return;   /* the calls fence themselves */
    int saved = errno;
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
    errno = saved;
}

void xp_inflight_close(void)
{
    atomic_fetch_or_explicit(&xp_inflight_gate, XP_GATE_CLOSED, memory_order_seq_cst);
    barrier_all();
}

/* Calls in flight of one kind (in_call: inside the real call, else
 * writing), not counting the calling thread's own, which wait for it. */
static uint64_t others(bool in_call)
{
    uint64_t n = 0;
    for (xp_thread *t = xp_thread_blocks(); t; t = t->next) {
        if (&t->inflight == xp_inflight_self)
            continue;
        uint64_t v = atomic_load_explicit(&t->inflight.word, memory_order_acquire);
        n += in_call ? v & XP_INCALL_MASK : v >> 32;
    }
    return n;
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
    atomic_fetch_or_explicit(&xp_inflight_gate, XP_GATE_CUT, memory_order_seq_cst);
    barrier_all();
    /* The calling thread's own calls inside the real call too: they never
     * return (exit does not). */
    uint64_t cut = 0;
    for (xp_thread *t = xp_thread_blocks(); t; t = t->next) {
        uint64_t v = atomic_load_explicit(&t->inflight.word, memory_order_acquire) & XP_INCALL_MASK;
        atomic_store_explicit(&t->inflight.verdict, v, memory_order_relaxed);
        cut += v;
    }
    atomic_store_explicit(&published, true, memory_order_release);
    /* Writers were past their real call: a record or two each, no waiting
     * on the device.  Bounded all the same. */
    wait_for(true, xp_now_ns() + wait_ns);
    return cut + atomic_load_explicit(&refused, memory_order_relaxed);
}

void xp_inflight_after_fork(void)
{
    for (xp_thread *t = xp_thread_blocks(); t; t = t->next) {
        if (&t->inflight != xp_inflight_self)
            atomic_store_explicit(&t->inflight.word, 0, memory_order_relaxed);
        atomic_store_explicit(&t->inflight.verdict, 0, memory_order_relaxed);
    }
    atomic_store_explicit(&refused, 0, memory_order_relaxed);
    atomic_store_explicit(&unslotted, 0, memory_order_relaxed);
    atomic_store_explicit(&published, false, memory_order_relaxed);
    atomic_store_explicit(&xp_inflight_gate, 0, memory_order_relaxed);
    /* The registration is the process's (the child's is inherited on the
     * kernels tried; asked again, at the cost of one call per fork). */
    xp_inflight_start();
}
