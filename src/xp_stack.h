/* xp_stack.h: call stacks as raw return addresses, interned by hash. */
#ifndef XP_STACK_H
#define XP_STACK_H

#include <stdint.h>

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

/* Captures the caller's stack (at most depth frames, frames inside the
 * preload skipped) and returns its id, writing an XP_REC_STACK record to j
 * the first time this process sees it.  0 when depth is 0 or nothing was
 * captured.  No malloc, no locks.  When the thread runs CPython, its Python
 * frames (xp_python.h) are part of the stack: of its id, of the record, and
 * of the cache key below.
 *
 * A call from the same site with the same stack pointer as one of the
 * thread's last few is answered from a cache, after checking that every
 * return address of the cached stack is still in its slot on the stack
 * (then the call chain is the same one); anything else is unwound. */
uint64_t xp_stack_capture(xp_journal *j, int depth, const xp_call_site *site);

/* Forgets which stacks were written (a forked child starts a new journal). */
void xp_stack_reset(void);

#endif
