/* rule_round_trip.c: uploads of content that was downloaded from the device
 * earlier in the process: the data went to the host and came back unchanged,
 * two transfers where none were needed. */
#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "keep the data on the device: it was there before the device-to-host copy, so reuse that device "
    "buffer (or a cudaMemcpy DeviceToDevice) instead of copying it to the host and back";
static const char xp_fix_pytorch[] =
    "avoid tensor.cpu()/.numpy() followed by torch.tensor(...).to(device) of the same data: keep the "
    "tensor on the GPU and do the operation there";

static void xp_round_trip_process(struct xp_report *r, const struct xp_process *p)
{
    /* (fingerprint, bytes, kind) -> v0: index + 1 of its earliest download */
    struct xp_map down;
    xp_map_init(&down);
    struct xp_sites sites;
    xp_sites_init(&sites);
    for (size_t i = 0; i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        if (!xp_fingerprinted(c, XP_DIR_D2H))
            continue;
        bool added;
        struct xp_map_entry *e = xp_map_get(&down, c->fingerprint, c->bytes, c->fp_kind, 0, &added);
        if (!e)
            goto out;
        if (added || c->start_ns < p->copies[e->v0 - 1].start_ns)
            e->v0 = i + 1;
    }
    for (size_t i = 0; down.n && i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        if (!xp_fingerprinted(c, XP_DIR_H2D) || c->claimed)
            continue;
        const struct xp_map_entry *e = xp_map_lookup(&down, c->fingerprint, c->bytes, c->fp_kind, 0);
        if (!e || p->copies[e->v0 - 1].start_ns >= c->start_ns)
            continue;
        struct xp_site_sum *s = xp_sites_add(&sites, c->cs->stack_id, c->bytes, c->dur_ns);
        if (!s)
            goto out;
        xp_claim(r, p, i);
        /* The download site of the site's first round trip, + 1 so 0 is "none yet". */
        if (!s->aux)
            s->aux = (uint64_t)p->copies[e->v0 - 1].cs->stack_id + 1;
    }
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        struct xp_finding *f = xp_report_add(
            r, "round-trip", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns, xp_fix,
            xp_fix_pytorch, "%llu uploads sent back content that had been copied from the device (%s, %s)",
            (unsigned long long)s->count, xp_bytes_str(s->bytes).s, xp_ns_str(s->time_ns).s);
        xp_finding_num(f, "d2h_stack_id", (int64_t)s->aux - 1);
    }
out:
    xp_map_free(&down);
    xp_sites_free(&sites);
}

void xp_rule_round_trip(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_round_trip_process(r, &r->procs[i]);
}
