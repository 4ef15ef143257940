/* xt_sites.h: call sites for the copies tests build by hand (struct
 * xp_copy.cs), each copy its own so that a test may change one copy's site. */
#ifndef XT_SITES_H
#define XT_SITES_H

#include <stddef.h>

#include "xp_report.h"

/* A ring far larger than the copies of one test: a test's copies keep their
 * sites while it runs; the next tests reuse the slots. */
#define XT_SITES (1u << 18)

static inline struct xp_call_site *xt_new_site(struct xp_call_site init)
{
    static struct xp_call_site ring[XT_SITES];
    static size_t next;
    struct xp_call_site *s = &ring[next++ % XT_SITES];
    *s = init;
    return s;
}

/* The site of a hand-built copy, to change it. */
static inline struct xp_call_site *xt_site_of(const struct xp_copy *c)
{
    return (struct xp_call_site *)c->cs;
}

#endif
