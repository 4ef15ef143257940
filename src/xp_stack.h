/* xp_stack.h: call stacks as raw return addresses, interned by hash. */
#ifndef XP_STACK_H
#define XP_STACK_H

#include <stdint.h>

#include "xp_journal.h"

/* Sets up libunwind's per-thread caching and notes the preload's own code
 * range, whose frames are left out of every stack. */
void xp_stack_init(void);

/* Captures the caller's stack (at most depth frames, frames inside the
 * preload skipped) and returns its id, writing an XP_REC_STACK record to j
 * the first time this process sees it.  0 when depth is 0 or nothing was
 * captured.  No malloc, no locks. */
uint64_t xp_stack_capture(xp_journal *j, int depth);

/* Forgets which stacks were written (a forked child starts a new journal). */
void xp_stack_reset(void);

#endif
