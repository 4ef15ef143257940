/* rule_device_placement.c: ranks of one job that share a physical GPU, or use
 * another GPU than their LOCAL_RANK says ("four GPUs, one used": a forgotten
 * cudaSetDevice / torch.cuda.set_device, a checkpoint loaded without
 * map_location).  Needs every process of the report at once.
 *
 * A rank is a process with a rank or a local rank and a host name.  The
 * physical device behind an ordinal is its UUID (meta device_uuid.N); in a
 * database without one, the ordinal through CUDA_VISIBLE_DEVICES ("device 2"
 * for ordinal 0 under CUDA_VISIBLE_DEVICES=2,3), which names the same GPU
 * for every process of a host. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_rules.h"

static const char xp_fix[] =
    "give each rank its own GPU: call cudaSetDevice(local_rank) in each rank before any other CUDA "
    "call, or launch each rank with CUDA_VISIBLE_DEVICES set to its own GPU";
static const char xp_fix_pytorch[] =
    "call torch.cuda.set_device(local_rank) at the start of each rank and put tensors and the model on "
    "device = f\"cuda:{local_rank}\" (not \"cuda\" or \"cuda:0\"); load checkpoints with "
    "torch.load(path, map_location=f\"cuda:{local_rank}\") (or \"cpu\") so they do not land on the GPU "
    "they were saved from";

#define XP_PL_MAX_ORDINAL 64

/* One device ordinal one rank used. */
struct xp_use {
    const struct xp_process *p;
    int64_t rank;           /* the rank, else the local rank */
    int ordinal;
    char gpu[64];           /* the physical device: UUID, or "device N" */
    uint64_t calls, bytes;  /* successful allocations and copies on it */
    uint32_t first_stack;   /* of the first of them */
    int64_t first_ns;
    bool shared;            /* named in a shared-GPU finding */
};

/* Entry `ordinal` of a CUDA_VISIBLE_DEVICES list (len 0 when there is none). */
static size_t xp_visible_entry(const char *list, int ordinal, const char **out)
{
    const char *p = list;
    for (int i = 0; i < ordinal; i++) {
        p = strchr(p, ',');
        if (!p)
            return 0;
        p++;
    }
    *out = p;
    return strcspn(p, ",");
}

/* How many devices a CUDA_VISIBLE_DEVICES list shows (at most): its entries. */
static int xp_visible_count(const char *list)
{
    if (!*list)
        return 0;
    int n = 1;
    for (const char *p = list; (p = strchr(p, ',')) != NULL; p++)
        n++;
    return n;
}

/* The physical device behind ordinal d of p, into out; false when unknown. */
static bool xp_physical(const struct xp_process *p, int d, char *out, size_t len)
{
    if ((size_t)d < p->n_device_uuids && p->device_uuids[d]) {
        snprintf(out, len, "%s", p->device_uuids[d]);
        return true;
    }
    if (!p->cuda_visible_devices) {
        snprintf(out, len, "device %d", d);
        return true;
    }
    const char *e = NULL;
    size_t n = xp_visible_entry(p->cuda_visible_devices, d, &e);
    if (n == 0 || n >= len - 8)
        return false;
    bool digits = strspn(e, "0123456789") == n;
    if (digits)
        snprintf(out, len, "device %.*s", (int)n, e);
    else if (strncmp(e, "GPU-", 4) == 0)
        snprintf(out, len, "%.*s", (int)n, e);
    return digits || strncmp(e, "GPU-", 4) == 0;
}

/* The ordinal p's LOCAL_RANK says it should use, -1 when it says nothing:
 * the local rank itself, or 0 when CUDA_VISIBLE_DEVICES shows one device
 * only (a launcher that gives each rank its own GPU that way). */
static int64_t xp_expected_ordinal(const struct xp_process *p)
{
    if (p->local_rank < 0)
        return -1;
    if (!p->cuda_visible_devices)
        return p->local_rank;
    int n = xp_visible_count(p->cuda_visible_devices);
    if (n == 1)
        return 0;
    return p->local_rank < n ? p->local_rank : -1;
}

static void xp_note(struct xp_use *u, int64_t start_ns, uint32_t stack, uint64_t bytes)
{
    if (u->calls++ == 0 || start_ns < u->first_ns) {
        u->first_ns = start_ns;
        u->first_stack = stack;
    }
    u->bytes += bytes;
}

/* Appends the ordinals p used to *uses.  Returns -1 when out of memory. */
static int xp_collect(const struct xp_process *p, struct xp_use **uses, size_t *n, size_t *cap)
{
    struct xp_use per[XP_PL_MAX_ORDINAL];
    memset(per, 0, sizeof per);
    for (size_t i = 0; i < p->n_allocs; i++) {
        const struct xp_alloc *a = &p->allocs[i];
        if (a->device >= 0 && a->device < XP_PL_MAX_ORDINAL)
            xp_note(&per[a->device], a->alloc_ns, a->alloc_stack, a->bytes);
    }
    for (size_t i = 0; i < p->n_copies; i++) {
        const struct xp_copy *c = &p->copies[i];
        if (c->cs->status == 0 && c->cs->device >= 0 && c->cs->device < XP_PL_MAX_ORDINAL)
            xp_note(&per[c->cs->device], c->start_ns, c->cs->stack_id, c->bytes);
    }
    for (int d = 0; d < XP_PL_MAX_ORDINAL; d++) {
        struct xp_use *u = &per[d];
        if (u->calls == 0 || !xp_physical(p, d, u->gpu, sizeof u->gpu))
            continue;
        if (xp_grow(uses, cap, *n + 1, sizeof **uses) != 0)
            return -1;
        u->p = p;
        u->rank = p->rank >= 0 ? p->rank : p->local_rank;
        u->ordinal = d;
        (*uses)[(*n)++] = *u;
    }
    return 0;
}

/* By host, physical device, rank: a group is one GPU of one host. */
static int xp_use_cmp(const void *a, const void *b)
{
    const struct xp_use *x = a, *y = b;
    int c = strcmp(x->p->hostname, y->p->hostname);
    if (c == 0)
        c = strcmp(x->gpu, y->gpu);
    if (c == 0)
        c = (x->rank > y->rank) - (x->rank < y->rank);
    return c;
}

static bool xp_same_gpu(const struct xp_use *x, const struct xp_use *y)
{
    return strcmp(x->p->hostname, y->p->hostname) == 0 && strcmp(x->gpu, y->gpu) == 0;
}

static bool xp_misplaced(const struct xp_use *u)
{
    int64_t want = xp_expected_ordinal(u->p);
    return want >= 0 && want != u->ordinal;
}

/* A text fact built piece by piece: "0,1,2,3", the per-rank details. */
static void xp_put(char *buf, size_t len, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void xp_put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
    if (*at >= len)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf + *at, len - *at, fmt, ap);
    va_end(ap);
    if (n > 0)
        *at += (size_t)n;
}

static void xp_describe(const struct xp_use *u, char *buf, size_t len, size_t *at)
{
    xp_put(buf, len, at, "%srank %lld: ordinal %d", *at ? "; " : "", (long long)u->rank,
           u->ordinal);
    if (u->p->local_rank >= 0)
        xp_put(buf, len, at, ", LOCAL_RANK %lld", (long long)u->p->local_rank);
    xp_put(buf, len, at, ", CUDA_VISIBLE_DEVICES %s",
           u->p->cuda_visible_devices ? u->p->cuda_visible_devices : "unset");
}

/* uses[first..end) used one GPU; two ranks or more among them: a finding. */
static void xp_shared(struct xp_report *r, struct xp_use *v, size_t first, size_t end)
{
    size_t ranks = 0;
    uint64_t bytes = 0, calls = 0;
    char list[512] = "", details[2048] = "";
    size_t at = 0, dat = 0;
    const struct xp_use *site = &v[first];
    for (size_t i = first; i < end; i++) {
        bytes += v[i].bytes;
        calls += v[i].calls;
        if (i == first || v[i].rank != v[i - 1].rank) {
            ranks++;
            xp_put(list, sizeof list, &at, "%s%lld", at ? "," : "", (long long)v[i].rank);
        }
        xp_describe(&v[i], details, sizeof details, &dat);
        /* The call site to show: where a rank first used a GPU that is not its own. */
        if (xp_misplaced(&v[i]) && !xp_misplaced(site))
            site = &v[i];
    }
    if (ranks < 2)
        return;
    for (size_t i = first; i < end; i++)
        v[i].shared = true;
    struct xp_finding *f = xp_report_add(
        r, "device-placement", XP_SEV_WARNING, site->p, site->first_stack, calls, bytes, 0, xp_fix,
        xp_fix_pytorch, "%zu ranks on host %s used one GPU (%s): ranks %s", ranks,
        site->p->hostname, v[first].gpu, list);
    xp_finding_text(f, "host", "%s", site->p->hostname);
    xp_finding_text(f, "uuid", "%s", v[first].gpu);
    xp_finding_text(f, "ranks", "%s", list);
    xp_finding_num(f, "rank_count", (int64_t)ranks);
    xp_finding_text(f, "devices", "%s", details);
}

/* A rank, sharing with no other rank here, on another GPU than its LOCAL_RANK says. */
static void xp_elsewhere(struct xp_report *r, const struct xp_use *u)
{
    int64_t want = xp_expected_ordinal(u->p);
    char details[512] = "";
    size_t at = 0;
    xp_describe(u, details, sizeof details, &at);
    struct xp_finding *f = xp_report_add(
        r, "device-placement", XP_SEV_WARNING, u->p, u->first_stack, u->calls, u->bytes, 0, xp_fix,
        xp_fix_pytorch,
        "rank %lld on host %s used device %d (%s) where its LOCAL_RANK %lld says device %lld",
        (long long)u->rank, u->p->hostname, u->ordinal, u->gpu, (long long)u->p->local_rank,
        (long long)want);
    xp_finding_text(f, "host", "%s", u->p->hostname);
    xp_finding_text(f, "uuid", "%s", u->gpu);
    xp_finding_text(f, "ranks", "%lld", (long long)u->rank);
    xp_finding_num(f, "rank_count", 1);
    xp_finding_text(f, "devices", "%s", details);
}

void xp_rule_device_placement(struct xp_report *r)
{
    struct xp_use *uses = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct xp_process *p = &r->procs[i];
        if (!p->hostname || (p->rank < 0 && p->local_rank < 0))
            continue;
        if (xp_collect(p, &uses, &n, &cap) != 0)
            goto out;
    }
    xp_sort(uses, n, sizeof *uses, xp_use_cmp);
    for (size_t first = 0; first < n;) {
        size_t end = first + 1;
        while (end < n && xp_same_gpu(&uses[first], &uses[end]))
            end++;
        xp_shared(r, uses, first, end);
        first = end;
    }
    for (size_t i = 0; i < n; i++)
        if (!uses[i].shared && xp_misplaced(&uses[i]))
            xp_elsewhere(r, &uses[i]);
out:
    free(uses);
}
