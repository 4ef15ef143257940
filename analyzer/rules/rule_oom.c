/* rule_oom.c: allocations that failed for lack of device memory, one finding
 * each, with what held the memory at that moment: the live device bytes, the
 * largest live allocations and the sites holding the most, and whether the
 * device reported enough free memory (then no contiguous block was left:
 * fragmentation). */
#include <stdlib.h>
#include <string.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "free or reuse buffers before the large allocation, allocate big long-lived buffers first, make "
    "the working set smaller (smaller batches or tiles), or take memory from a pool "
    "(cudaMallocAsync/cudaMemPool) that can reuse freed blocks";
static const char xp_fix_pytorch[] =
    "lower the batch size, free references (del tensor) and call torch.cuda.empty_cache(); against "
    "fragmentation set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True; torch.cuda.memory_summary() "
    "shows what holds memory";

/* cudaErrorMemoryAllocation and CUDA_ERROR_OUT_OF_MEMORY are both 2. */
#define XP_STATUS_OOM 2
#define XP_TOP 3

struct xp_top {
    uint64_t bytes, count, ptr;
    uint32_t stack_id;
    bool set;
};

/* Keeps top[] (XP_TOP entries, largest first) with v if it belongs there. */
static void xp_top_offer(struct xp_top *top, struct xp_top v)
{
    for (size_t i = 0; i < XP_TOP; i++)
        if (!top[i].set || v.bytes > top[i].bytes) {
            memmove(top + i + 1, top + i, (XP_TOP - 1 - i) * sizeof *top);
            top[i] = v;
            top[i].set = true;
            return;
        }
}

static bool xp_is_oom(const struct xp_error *e)
{
    return e->status == XP_STATUS_OOM && strcmp(e->record, "alloc") == 0;
}

static bool xp_on_device(const struct xp_alloc *a, int32_t device)
{
    return xp_alloc_is_device(a) && (device < 0 || a->device == device);
}

static void xp_oom_details(struct xp_finding *f, const struct xp_top *allocs, const struct xp_top *sites)
{
    static const char *const keys[XP_TOP][3] = {{"top1_bytes", "top1_stack_id", "top1_ptr"},
                                                {"top2_bytes", "top2_stack_id", "top2_ptr"},
                                                {"top3_bytes", "top3_stack_id", "top3_ptr"}};
    static const char *const site_keys[XP_TOP][3] = {
        {"site1_bytes", "site1_stack_id", "site1_count"},
        {"site2_bytes", "site2_stack_id", "site2_count"},
        {"site3_bytes", "site3_stack_id", "site3_count"}};
    for (size_t i = 0; i < XP_TOP && allocs[i].set; i++) {
        xp_finding_num(f, keys[i][0], (int64_t)allocs[i].bytes);
        xp_finding_num(f, keys[i][1], allocs[i].stack_id);
        xp_finding_text(f, keys[i][2], "0x%llx", (unsigned long long)allocs[i].ptr);
    }
    for (size_t i = 0; i < XP_TOP && sites[i].set; i++) {
        xp_finding_num(f, site_keys[i][0], (int64_t)sites[i].bytes);
        xp_finding_num(f, site_keys[i][1], sites[i].stack_id);
        xp_finding_num(f, site_keys[i][2], (int64_t)sites[i].count);
    }
}

/* One failure: replays the allocations up to its time (O(allocations)). */
static void xp_oom_one(struct xp_report *r, const struct xp_process *p, const struct xp_error *e,
                       struct xp_sites *sites)
{
    struct xp_top top[XP_TOP] = {{0}}, top_sites[XP_TOP] = {{0}};
    uint64_t live = 0, live_count = 0;
    xp_sites_clear(sites);
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        if (!xp_on_device(a, e->device) || !xp_alloc_live_at(a, e->start_ns))
            continue;
        live += a->bytes;
        live_count++;
        xp_top_offer(top, (struct xp_top){.bytes = a->bytes, .count = 1, .ptr = a->ptr, .stack_id = a->alloc_stack});
        xp_sites_add(sites, a->alloc_stack, a->bytes, 0);
    }
    for (size_t k = 0; k < sites->n; k++)
        xp_top_offer(top_sites, (struct xp_top){.bytes = sites->v[k].bytes, .count = sites->v[k].count,
                                                .stack_id = sites->v[k].stack_id});
    bool fragmented = e->dev_free >= 0 && e->requested <= (uint64_t)e->dev_free;
    const char *api = xp_api_name(p, e->api);
    struct xp_finding *f;
    if (e->dev_free >= 0 && e->dev_total >= 0)
        f = xp_report_add(r, "oom", XP_SEV_ERROR, p, e->stack_id, 1, e->requested, 0, xp_fix, xp_fix_pytorch,
                          "%s of %s failed for lack of device memory with %s live on device %d; the device "
                          "reported %s free of %s%s",
                          api, xp_bytes_str(e->requested).s, xp_bytes_str(live).s, (int)e->device,
                          xp_bytes_str((uint64_t)e->dev_free).s, xp_bytes_str((uint64_t)e->dev_total).s,
                          fragmented ? ", so no free block was large enough (fragmentation)" : "");
    else
        f = xp_report_add(r, "oom", XP_SEV_ERROR, p, e->stack_id, 1, e->requested, 0, xp_fix, xp_fix_pytorch,
                          "%s of %s failed for lack of device memory with %s live on device %d", api,
                          xp_bytes_str(e->requested).s, xp_bytes_str(live).s, (int)e->device);
    xp_finding_num(f, "requested_bytes", (int64_t)e->requested);
    xp_finding_num(f, "live_bytes", (int64_t)live);
    xp_finding_num(f, "live_count", (int64_t)live_count);
    xp_finding_num(f, "device", e->device);
    if (e->dev_free >= 0)
        xp_finding_num(f, "device_free_bytes", e->dev_free);
    if (e->dev_total >= 0)
        xp_finding_num(f, "device_total_bytes", e->dev_total);
    xp_finding_num(f, "fragmentation", fragmented);
    xp_finding_text(f, "api", "%s", api);
    xp_finding_num(f, "at_ns", e->start_ns - p->start_mono_ns);
    xp_oom_details(f, top, top_sites);
}

static void xp_oom_process(struct xp_report *r, const struct xp_process *p)
{
    struct xp_sites sites;
    xp_sites_init(&sites);
    for (size_t i = 0; i < p->n_errors; i++)
        if (xp_is_oom(&p->errors[i]))
            xp_oom_one(r, p, &p->errors[i], &sites);
    xp_sites_free(&sites);
}

void xp_rule_oom(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_oom_process(r, &r->procs[i]);
}
