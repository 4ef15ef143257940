/* rule_async_pageable.c: async copies whose pageable host side made the runtime
 * stage them synchronously, holding the caller (blocking = async_pageable). */
#include <stdlib.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "allocate the host buffer with cudaMallocHost/cudaHostAlloc or register it with cudaHostRegister "
    "so cudaMemcpyAsync can return at once and the copy overlaps other work";
static const char xp_fix_pytorch[] =
    "call .pin_memory() on the tensor (or DataLoader(pin_memory=True)) before "
    ".to(device, non_blocking=True)";

/* A failed copy moved nothing: it is an error, not a slow transfer. */
static bool xp_async_pageable_copy(const struct xp_copy *c, const struct xp_thresholds *th)
{
    /* One completed at once by a sync is blocking whatever the memory: pinning
     * would not let it overlap anything (sync-in-loop reports it). */
    return c->cs->blocking == XP_BL_ASYNC_PAGEABLE && c->cs->status == 0 && !c->paired && !c->claimed;
}

static void xp_async_pageable_process(struct xp_report *r, const struct xp_process *p)
{
    struct xp_sites sites;
    xp_sites_init(&sites);
    size_t *site_of = malloc((p->n_copies ? p->n_copies : 1) * sizeof *site_of);
    if (!site_of || xp_sites_of_copies(&sites, p, true, xp_async_pageable_copy, &r->th, site_of) != 0)
        goto out;
    xp_claim_sites(r, p, site_of, NULL);   /* every site gets its finding */
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        struct xp_finding *f = xp_report_add(
            r, "async-pageable", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns, xp_fix,
            xp_fix_pytorch, "%llu async copies from pageable memory held the host %s (%s)",
            (unsigned long long)s->count, xp_ns_str(s->time_ns).s, xp_bytes_str(s->bytes).s);
        xp_finding_text(f, "direction", "%s", xp_dir_mask_name(s->aux));
        xp_finding_num(f, "mean_bytes", (int64_t)(s->bytes / s->count));
    }
out:
    free(site_of);
    xp_sites_free(&sites);
}

void xp_rule_async_pageable(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_async_pageable_process(r, &r->procs[i]);
}
