/* rule_round_trip.c: uploads of content that was downloaded from the device
 * earlier in the process: the data went to the host and came back unchanged,
 * two transfers where none were needed. */
#include <stdlib.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "keep the data on the device: it was there before the device-to-host copy, so reuse that device "
    "buffer (or a cudaMemcpy DeviceToDevice) instead of copying it to the host and back";
static const char xp_fix_pytorch[] =
    "avoid tensor.cpu()/.numpy() followed by torch.tensor(...).to(device) of the same data: keep the "
    "tensor on the GPU and do the operation there";

/* The earliest download of a's content (keys sorted by content, then time),
 * or NULL. */
static const struct xp_key *xp_first_download(const struct xp_key *d2h, size_t n, const struct xp_key *a)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        struct xp_key probe = d2h[mid];
        probe.t = INT64_MIN; /* compare the content only: find its first entry */
        probe.idx = 0;
        struct xp_key want = *a;
        want.t = INT64_MIN;
        want.idx = 0;
        if (xp_cmp_key(&probe, &want) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && xp_same_content(&d2h[lo], a) ? &d2h[lo] : NULL;
}

static void xp_round_trip_process(struct xp_report *r, const struct xp_process *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_copies; i++)
        n += xp_fingerprinted(&p->copies[i], XP_DIR_D2H);
    if (!n)
        return;
    struct xp_key *d2h = malloc(n * sizeof *d2h);
    struct xp_sites sites;
    xp_sites_init(&sites);
    if (!d2h)
        goto out;
    for (size_t i = 0, j = 0; i < p->n_copies; i++)
        if (xp_fingerprinted(&p->copies[i], XP_DIR_D2H))
            d2h[j++] = xp_content_key(&p->copies[i], i, 0);
    qsort(d2h, n, sizeof *d2h, xp_cmp_key);
    for (size_t i = 0; i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        if (!xp_fingerprinted(c, XP_DIR_H2D))
            continue;
        struct xp_key key = xp_content_key(c, i, 0);
        const struct xp_key *down = xp_first_download(d2h, n, &key);
        if (!down || down->t >= c->start_ns)
            continue;
        struct xp_site *s = xp_sites_add(&sites, c->stack_id, c->bytes, c->dur_ns);
        /* The download site of the site's first round trip, + 1 so 0 is "none yet". */
        if (s && !s->aux)
            s->aux = (uint64_t)p->copies[down->idx].stack_id + 1;
    }
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site *s = &sites.v[k];
        struct xp_finding *f = xp_report_add(
            r, "round-trip", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns, xp_fix,
            xp_fix_pytorch, "%llu uploads sent back content that had been copied from the device (%s, %s)",
            (unsigned long long)s->count, xp_bytes_str(s->bytes).s, xp_ns_str(s->time_ns).s);
        xp_finding_num(f, "d2h_stack_id", (int64_t)s->aux - 1);
    }
out:
    free(d2h);
    xp_sites_free(&sites);
}

void xp_rule_round_trip(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_round_trip_process(r, &r->procs[i]);
}
