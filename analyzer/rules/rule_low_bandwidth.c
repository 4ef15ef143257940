/* rule_low_bandwidth.c: large blocking copies that ran far below the bandwidth
 * the same kind of copy reached elsewhere in the run. */
#include <stdlib.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "a large copy that is slow compared with the others of its kind is usually waiting: a synchronous "
    "cudaMemcpy first waits for the kernels queued before it, a pageable buffer is staged through a "
    "bounce buffer, or the link is shared; use pinned memory and cudaMemcpyAsync on its own stream, "
    "and check the link (nvidia-smi -q: PCIe generation and width)";
static const char xp_fix_pytorch[] =
    "pin the host tensor (.pin_memory()) and use .to(device, non_blocking=True); a slow .cpu() often "
    "includes the kernels still queued before it, so call torch.cuda.synchronize() before timing it";

/* The reference is the 90th percentile of the class's per-copy bandwidth. */
#define XP_REFERENCE_QUANTILE 0.9
#define XP_NCLASS (XP_DIR_COUNT * XP_HM_COUNT)

static bool xp_measurable(const struct xp_copy *c, uint64_t min_bytes)
{
    return c->status == 0 && c->dur_ns > 0 && c->bytes >= min_bytes && c->bytes > 0 &&
           (c->blocking == XP_BL_SYNC || c->blocking == XP_BL_ASYNC_PAGEABLE);
}

static size_t xp_class(const struct xp_copy *c)
{
    size_t d = c->direction < XP_DIR_COUNT ? c->direction : 0;
    size_t h = c->host_mem < XP_HM_COUNT ? c->host_mem : 0;
    return d * XP_HM_COUNT + h;
}

/* Bytes per nanosecond is GB/s. */
static double xp_gbps(uint64_t bytes, int64_t ns)
{
    return ns > 0 ? (double)bytes / (double)ns : 0;
}

/* The reference bandwidth of each class; classes without copies get 0. */
static int xp_references(const struct xp_process *p, uint64_t min_bytes, double ref[XP_NCLASS])
{
    size_t start[XP_NCLASS + 1] = {0}, fill[XP_NCLASS];
    for (size_t i = 0; i < p->n_copies; i++)
        if (xp_measurable(&p->copies[i], min_bytes))
            start[xp_class(&p->copies[i]) + 1]++;
    for (size_t k = 0; k < XP_NCLASS; k++) {
        start[k + 1] += start[k];
        fill[k] = start[k];
        ref[k] = 0;
    }
    if (!start[XP_NCLASS])
        return 0;
    double *bw = malloc(start[XP_NCLASS] * sizeof *bw);
    if (!bw)
        return -1;
    for (size_t i = 0; i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        if (xp_measurable(c, min_bytes))
            bw[fill[xp_class(c)]++] = xp_gbps(c->bytes, c->dur_ns);
    }
    for (size_t k = 0; k < XP_NCLASS; k++) {
        size_t n = start[k + 1] - start[k];
        if (!n)
            continue;
        xp_sort(bw + start[k], n, sizeof *bw, xp_cmp_double);
        ref[k] = xp_percentile_sorted(bw + start[k], n, XP_REFERENCE_QUANTILE);
    }
    free(bw);
    return 0;
}

static void xp_low_bandwidth_process(struct xp_report *r, const struct xp_process *p)
{
    double ref[XP_NCLASS];
    uint64_t min_bytes = r->th.low_bandwidth_min_bytes;
    if (xp_references(p, min_bytes, ref) != 0)
        return;
    struct xp_sites sites;
    xp_sites_init(&sites);
    for (size_t i = 0; i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        if (!xp_measurable(c, min_bytes))
            continue;
        size_t k = xp_class(c);
        if (!(xp_gbps(c->bytes, c->dur_ns) < r->th.low_bandwidth_fraction * ref[k]))
            continue;
        struct xp_site_sum *s = xp_sites_add(&sites, c->stack_id, c->bytes, c->dur_ns);
        /* The class of the site's first slow copy, + 1 so 0 is "none yet". */
        if (s && !s->aux)
            s->aux = k + 1;
    }
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        size_t cls = (size_t)s->aux - 1;
        const char *dir = xp_dir_name((xp_direction)(cls / XP_HM_COUNT));
        const char *hm = xp_hostmem_name((enum xp_hostmem)(cls % XP_HM_COUNT));
        double gbps = xp_gbps(s->bytes, s->time_ns);
        struct xp_finding *f = xp_report_add(
            r, "low-bandwidth", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns, xp_fix,
            xp_fix_pytorch,
            "%llu copies of at least %s ran at %.2f GB/s, under %.0f%% of this run's %.2f GB/s for %s %s "
            "copies (%s, %s)",
            (unsigned long long)s->count, xp_bytes_str(min_bytes).s, gbps,
            r->th.low_bandwidth_fraction * 100, ref[cls], dir, hm, xp_bytes_str(s->bytes).s,
            xp_ns_str(s->time_ns).s);
        xp_finding_text(f, "gbps", "%.3f", gbps);
        xp_finding_text(f, "reference_gbps", "%.3f", ref[cls]);
        xp_finding_text(f, "direction", "%s", dir);
        xp_finding_text(f, "host_mem", "%s", hm);
    }
    xp_sites_free(&sites);
}

void xp_rule_low_bandwidth(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_low_bandwidth_process(r, &r->procs[i]);
}
