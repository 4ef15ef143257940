/* xp_stack.h: call stacks as raw return addresses, interned by hash. */
#ifndef XP_STACK_H
#define XP_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "xp_format.h"
#include "xp_journal.h"

/* Sets up libunwind's per-thread caching and notes the preload's own code
 * range, whose frames are left out of every stack. */
void xp_stack_init(void);

/* Where a hooked call came from: the hook's return address into the
 * program, and the address of a local of the hook (a stand-in for the
 * caller's stack pointer: the hook's frame has a fixed size). */
typedef struct xp_call_site {
    uintptr_t ret;
    uintptr_t sp;
} xp_call_site;

/* A stack the thread walked recently: slot[i] is where frame[i] (a return
 * address) was found on the stack; frame[0] is the site's own return
 * address, checked through the key.  The cache holds XP_STACK_CACHE_SETS
 * sets of XP_STACK_CACHE_WAYS, a site's set chosen by a hash of its key: a
 * training loop calls from dozens of sites in turn, and with 4 entries every
 * call missed and was unwound (34,000 instructions and 74 system calls a
 * copy with 64 sites in turn: libunwind looks each frame up; with 2 ways a
 * set, the sets that drew 3 of the 64 sites still missed every time).
 * Stacks deeper than XP_STACK_CACHE_FRAMES (the default depth) are walked
 * every time.  About 600 bytes an entry, in the thread's mmap'ed block,
 * touched only as used (docs/performance.md). */
#define XP_STACK_CACHE_SETS 64
#define XP_STACK_CACHE_WAYS 4
#define XP_STACK_CACHE_FRAMES 32
typedef struct xp_cached_stack {
    uintptr_t ret, sp;
    uint64_t id;
    uint64_t generation;
    int depth;                /* the depth asked for */
    int n;
    uint64_t py;              /* hash of the Python frames (0: none) */
    uintptr_t slot[XP_STACK_CACHE_FRAMES];
    uint64_t frame[XP_STACK_CACHE_FRAMES];
} xp_cached_stack;

/* Room for libunwind's context and cursor (xp_stack.c checks it). */
#define XP_STACK_UNW_BYTES 2048

/* A thread's part of its xp_thread.h block. */
typedef struct xp_stack_thread {
    xp_cached_stack cache[XP_STACK_CACHE_SETS][XP_STACK_CACHE_WAYS];
    uint8_t cache_next[XP_STACK_CACHE_SETS];   /* the way a set fills next */
    /* The entry the thread's last capture hit or filled: a loop's next call
     * from the same site tries it before hashing its key (NULL: none). */
    const xp_cached_stack *last;
    /* The thread's own stack [lo, hi), looked up once (bounds_known; lo 0:
     * no limit known), and the alternate signal stack [alt_lo, alt_hi) it
     * was last seen running on. */
    bool bounds_known;
    uintptr_t lo, hi, alt_lo, alt_hi;
    /* A walk's work space, here rather than on the caller's stack (4 KiB
     * of frames and slots, 2 KiB of libunwind state). */
    uint64_t frames[XP_MAX_FRAMES];
    uintptr_t slots[XP_MAX_FRAMES];
    xp_pyframe py[XP_PY_MAX_FRAMES];   /* the Python frames (2 KiB) */
    _Alignas(64) unsigned char unw[XP_STACK_UNW_BYTES];
} xp_stack_thread;

/* Captures the caller's stack (at most depth frames, frames inside the
 * preload skipped) and returns its id, writing an XP_REC_STACK record to j
 * the first time this process sees it.  0 when depth is 0 or nothing was
 * captured.  No malloc, no locks.  When the thread runs CPython, its Python
 * frames (xp_python.h) are part of the stack: of its id, of the record, and
 * of the cache key below.
 *
 * A call from the same site with the same stack pointer as one the thread
 * made recently is answered from a cache, after checking that every
 * return address of the cached stack is still in its slot on the stack
 * (then the call chain is the same one); anything else is unwound, if the
 * stack it runs on (the thread's, or the alternate signal stack) has room
 * for the unwinder: otherwise 0, counted in xp_stack_skipped. */
uint64_t xp_stack_capture(xp_journal *j, int depth, const xp_call_site *site);

/* Stacks left out since start (or the last xp_stack_reset) for want of
 * stack to walk them on: meta stacks_skipped_small_stack. */
uint64_t xp_stack_skipped(void);

/* Forgets which stacks were written and the count of those skipped (a
 * forked child starts a new journal). */
void xp_stack_reset(void);

#endif
