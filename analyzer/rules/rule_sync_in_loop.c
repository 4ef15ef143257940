/* rule_sync_in_loop.c: a call site that issues many blocking copies, the mark
 * of a copy (or a read of a result) inside a loop that stalls every iteration. */
#include <stdlib.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "issue the copies with cudaMemcpyAsync from pinned memory on a stream and synchronize once after "
    "the loop (cudaStreamSynchronize or an event), or gather the data and copy it in one call";
static const char xp_fix_pytorch[] =
    "avoid .item(), .cpu(), .tolist() or printing CUDA tensors inside the loop: keep values on the GPU "
    "(accumulate into a tensor) and read them once after the loop; upload pinned tensors with "
    ".to(device, non_blocking=True)";

/* For a site whose blocking copies are reads of results: an async copy that
 * the next call synchronized (cudaMemcpyAsync + cudaStreamSynchronize, what
 * .item() and .cpu() do).  Pinning changes nothing: the host waits for the
 * value because it asked for it. */
static const char xp_fix_readback[] =
    "keep the value on the device: accumulate it there (a running sum, a device-side check) and "
    "copy it to the host every N steps or once after the loop, instead of copying and "
    "synchronizing every iteration";
static const char xp_fix_readback_pytorch[] =
    "avoid .item(), .cpu() or .tolist() every step: accumulate in a CUDA tensor (loss_sum += "
    "loss.detach()) and read it every N steps or after the loop";

/* For a site whose blocking copies are uploads the next call synchronized
 * (PyTorch's .to(device) without non_blocking: cudaMemcpyAsync then a
 * stream sync): the host waits for data it sends, which pinned memory and a
 * non-blocking copy let it stop doing. */
static const char xp_fix_upload[] =
    "upload from pinned (page-locked) memory with cudaMemcpyAsync and do not synchronize right "
    "after it: let the stream order the copy before the kernels that use it, and synchronize "
    "once per step at most; if the data does not change between steps, upload it once";
static const char xp_fix_upload_pytorch[] =
    "pin the batch (DataLoader(pin_memory=True) or .pin_memory()) and use .to(device, "
    "non_blocking=True) so the upload overlaps with compute; move tensors that do not change "
    "(weights, lookup tables) to the GPU once, before the loop";

/* A copy that held the host: a synchronous one, or an async one completed
 * at once by a sync (paired).  An async copy held only to stage pageable
 * memory is async-pageable's, not this rule's (one finding per copy). */
static bool xp_blocking_copy(const struct xp_copy *c, const struct xp_thresholds *th)
{
    return c->status == 0 && (c->blocking == XP_BL_SYNC || c->paired);
}

/* The median of a site's copy sizes (the lower middle one for an even count). */
static uint64_t xp_median_bytes(const struct xp_process *p, const size_t *items, size_t n, uint64_t *tmp)
{
    for (size_t i = 0; i < n; i++)
        tmp[i] = p->copies[items[i]].bytes;
    xp_sort(tmp, n, sizeof *tmp, xp_cmp_u64);
    return tmp[(n - 1) / 2];
}

static void xp_sync_in_loop_process(struct xp_report *r, const struct xp_process *p)
{
    uint64_t min = r->th.sync_in_loop_min_count ? r->th.sync_in_loop_min_count : 1;
    struct xp_sites sites;
    xp_sites_init(&sites);
    size_t *site_of = malloc((p->n_copies ? p->n_copies : 1) * sizeof *site_of);
    size_t *start = NULL, *order = NULL;
    uint64_t *tmp = NULL;
    if (!site_of)
        goto out;
    if (xp_sites_of_copies(&sites, p, true, xp_blocking_copy, &r->th, site_of) != 0)
        goto out;
    /* Leave out the sites below the threshold before grouping, so only the
     * flagged sites' copies are sorted for their median. */
    size_t most = 0;
    for (size_t i = 0; i < p->n_copies; i++)
        if (site_of[i] != XP_NO_SITE && sites.v[site_of[i]].count < min)
            site_of[i] = XP_NO_SITE;
    for (size_t k = 0; k < sites.n; k++)
        if (sites.v[k].count >= min && sites.v[k].count > most)
            most = sites.v[k].count;
    if (!most || xp_sites_bucket(sites.n, site_of, p->n_copies, &start, &order) != 0)
        goto out;
    tmp = malloc(most * sizeof *tmp);
    if (!tmp)
        goto out;
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        if (s->count < min)
            continue;
        uint64_t median = xp_median_bytes(p, order + start[k], start[k + 1] - start[k], tmp);
        size_t paired = 0, paired_up = 0, n = start[k + 1] - start[k];
        for (size_t j = start[k]; j < start[k + 1]; j++) {
            const struct xp_copy *c = &p->copies[order[j]];
            paired += c->paired;
            paired_up += c->paired && c->direction == XP_DIR_H2D;
        }
        /* Most copies completed by a sync: reads of results, or uploads. */
        bool upload = paired_up * 2 > n;
        bool readback = !upload && paired * 2 > n;
        const char *fix = upload ? xp_fix_upload : readback ? xp_fix_readback : xp_fix;
        const char *fix_pt = upload     ? xp_fix_upload_pytorch
                             : readback ? xp_fix_readback_pytorch
                                        : xp_fix_pytorch;
        struct xp_finding *f = xp_report_add(
            r, "sync-in-loop", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns,
            fix, fix_pt,
            "%llu blocking copies from one call site held the host %s (%s, median %s each)",
            (unsigned long long)s->count, xp_ns_str(s->time_ns).s, xp_bytes_str(s->bytes).s,
            xp_bytes_str(median).s);
        xp_finding_text(f, "direction", "%s", xp_dir_mask_name(s->aux));
        xp_finding_num(f, "median_bytes", (int64_t)median);
        xp_finding_num(f, "per_copy_ns", s->time_ns / (int64_t)s->count);
        xp_finding_num(f, "copy_then_sync", (int64_t)paired);
    }
out:
    free(tmp);
    free(start);
    free(order);
    free(site_of);
    xp_sites_free(&sites);
}

void xp_rule_sync_in_loop(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_sync_in_loop_process(r, &r->procs[i]);
}
