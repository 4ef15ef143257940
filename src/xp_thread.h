/* xp_thread.h: the preload's per-thread state, one block per thread reached
 * through a single thread-local pointer.
 *
 * Why not thread-locals: glibc carves the static TLS block out of every
 * thread's stack, whether or not the thread ever calls CUDA, so kilobytes of
 * initial-exec TLS took that much from each 16 KiB (PTHREAD_STACK_MIN)
 * stack.  A block is mapped on a thread's first use (the first recorded call
 * or NVTX range), and given back when the thread exits, to be reused by the
 * next thread that needs one: memory follows the threads alive at once, and
 * steady state allocates nothing. */
#ifndef XP_THREAD_H
#define XP_THREAD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp_engine.h"
#include "xp_nvtx.h"
#include "xp_stack.h"
#include "xp_tls.h"

/* xp_classify's memory of what the driver said about a page (xp_classify.c). */
#define XP_WHERE_MEMO 64
typedef struct xp_where_memo {
    uint64_t page, generation;
    xp_where where;
    bool valid;
} xp_where_memo;

/* xp_classify's memory of the registry's last answers: a loop copies
 * between the same two buffers call after call, and a hit here costs a
 * compare where the registry's search under its sequence lock costs a
 * hundred instructions.  Good while the registry's generation is. */
#define XP_RANGE_MEMO 2
typedef struct xp_range_memo {
    uint64_t base, size, generation;
    xp_where where;
    bool valid;
} xp_range_memo;

/* xp_classify_copy's memory of the last copy's two sides, the ranges that
 * held them and what they are (xp_classify.h): the next call of a copy loop
 * is answered by one compare of each address (issue 15).  src_size 0:
 * none.  Good while the registry's generation is. */
typedef struct xp_pair_memo {
    uint64_t generation, src_base, src_size, dst_base, dst_size;
    xp_where ws, wd;
    /* xp_record.c's: what a plain 1D copy between these sides is, worked
     * out once for the kind and nature it had (facts_key, 0: not yet), so
     * that the next call of a copy loop reads its record's facts instead of
     * deriving them again (issue 15): its direction, host_mem, blocking and
     * kind bytes as the record lays them out, its device, and that
     * device's count of kernel launches (NULL: none, or the device is the
     * thread's current one, which may change); device_asked: a copy on
     * that device succeeded since, so its UUID is in meta (xp_devices.h;
     * forgotten with the memo in a forked child, whose meta starts empty). */
    uint64_t facts_key;
    uint32_t facts;
    int32_t facts_device;
    const _Atomic uint64_t *launch_count;
    bool device_asked;
} xp_pair_memo;

/* The calling thread's last recorded call, when it was a copy that left
 * work queued (anything but SYNC): if the next recorded call on the thread
 * synchronizes that copy's stream or device, the two are one blocking copy
 * in effect (xp_rec_sync.copy_start_ns).  Any other recorded call in
 * between (a launch, an event record, an allocation) breaks the pair.
 * xp_record.c's; the copy's description is kept only when the sync can
 * fingerprint its destination (a D2H copy into readable host memory). */
typedef struct xp_last_copy {
    bool valid, d2h;
    int device;
    uint64_t start_ns, stream;
    xp_copy_call call;
    xp_where wd;
} xp_last_copy;

typedef struct xp_thread {
    /* xp_thread.c's: the list of every block, and whether a thread holds it. */
    struct xp_thread *next;
    atomic_bool in_use;
    /* xp_inflight.c's: the thread's calls in flight (not cleared: zero
     * whenever the block is handed back). */
    xp_inflight_slot inflight;
    /* The holding thread's errno (set when a thread gets the block): a
     * recorded copy keeps the program's errno without calling
     * __errno_location (issue 15). */
    int *errno_at;
    /* Each module's part; zero when a thread gets the block. */
    xp_where_memo where[XP_WHERE_MEMO];
    xp_range_memo ranges[XP_RANGE_MEMO];
    unsigned next_range;
    xp_pair_memo pair;
    xp_nvtx_thread nvtx;
    xp_stack_thread stack;
    /* Kept here rather than in a thread-local of its own: a recorded call
     * reaches the block through its in-flight slot (xp_scope_thread), so
     * the hottest records reach it without another load (issue 15). */
    xp_last_copy last_copy;
    /* xp_scope.c's: what a call from a signal handler that interrupted a
     * hook's real call set aside of the thread's state (its last copy, for
     * pairing with a sync), given back when it ends; one level (a second
     * handler inside that call leaves it alone).  held: in use. */
    struct {
        bool held;
        xp_last_copy last_copy;
    } aside;
} xp_thread;

/* The calling thread's block, NULL until its first use (and again once it
 * has exited).  Initial-exec: the preload is loaded at start-up. */
#define xp_self (xp_tls.self)

/* Gives the calling thread a block: a free one, else a new mapping.  NULL
 * only if none could be mapped (callers then go without their caches).
 * Async-signal-safe but for glibc's pthread_setspecific, which allocates
 * only for keys past the first 32 (the preload's is created at load, before
 * the program's). */
xp_thread *xp_thread_attach(void);

/* Every block ever mapped (newest first, linked by next): blocks are never
 * unmapped nor unlinked, so the list is walked without a lock. */
xp_thread *xp_thread_blocks(void);

/* A recorded call's block: the one its in-flight slot lies in (the calling
 * thread's, which a recorded call always has: xp_inflight_enter). */
static inline xp_thread *xp_scope_thread(const xp_scope *s)
{
    return (xp_thread *)(void *)((char *)s->slot - offsetof(xp_thread, inflight));
}

static inline xp_thread *xp_thread_get(void)
{
    xp_thread *t = xp_self;
    return __builtin_expect(t != NULL, 1) ? t : xp_thread_attach();
}

#endif
