/* xp_classify.h: a copy's two sides classified, inline from the thread's
 * memory of its last copy (issue 15: the hottest lookup); xp_classify.c
 * does the rest. */
#ifndef XP_CLASSIFY_H
#define XP_CLASSIFY_H

#include "xp_engine.h"
#include "xp_registry.h"
#include "xp_thread.h"

/* xp_classify_copy past the pair memo (t may be NULL: no block, no memory). */
void xp_classify_copy_slow(xp_thread *t, uint64_t gen, uint64_t src, uint64_t dst, xp_where *ws,
                           xp_where *wd) __attribute__((visibility("hidden")));

/* The thread's memory of its last copy's sides (t: xp_self) when it holds
 * src and dst for registry generation gen, else NULL. */
static inline xp_pair_memo *xp_pair_hit(xp_thread *t, uint64_t gen, uint64_t src, uint64_t dst)
{
    if (__builtin_expect(t != NULL, 1)) {
        xp_pair_memo *p = &t->pair;
        if (p->generation == gen && src - p->src_base < p->src_size &&
            dst - p->dst_base < p->dst_size)
            return p;
    }
    return NULL;
}

/* xp_classify of a copy's source (into *ws) and destination (into *wd). */
static inline void xp_classify_copy(uint64_t src, uint64_t dst, xp_where *ws, xp_where *wd)
{
    /* Read before any lookup: a change made during one makes the memo stale. */
    uint64_t gen = xp_registry_generation();
    xp_thread *t = xp_self;
    const xp_pair_memo *p = xp_pair_hit(t, gen, src, dst);
    if (__builtin_expect(p != NULL, 1)) {
        *ws = p->ws;
        *wd = p->wd;
        return;
    }
    xp_classify_copy_slow(t, gen, src, dst, ws, wd);
}

#endif
