/* rule_redundant_upload.c: uploads of bytes the device already had: the same
 * content sent again to the same place before any kernel could have changed
 * it, or one call site sending the same content over and over. */
#include <stdlib.h>

#include "xp_group.h"
#include "xp_rules.h"

static const char xp_fix[] =
    "keep the data on the device and reuse the device buffer instead of copying it again: upload it "
    "once before the loop, or copy only when the host data changed";
static const char xp_fix_pytorch[] =
    "move the tensor to the GPU once (outside the training loop, or cache the result of "
    ".to(device)/.cuda()) instead of transferring the same data every step";

/* Why a copy is redundant: bits in marks[]. */
enum { XP_RED_SAME_DST = 1, XP_RED_REPEAT = 2 };

static bool xp_is_upload(const struct xp_copy *c)
{
    return xp_fingerprinted(c, XP_DIR_H2D);
}

static bool xp_same_upload(const struct xp_copy *a, const struct xp_copy *b)
{
    return a->fingerprint == b->fingerprint && a->fp_kind == b->fp_kind && a->bytes == b->bytes;
}

/* Uploads to the same (device, dst) in time order: one that repeats the
 * previous upload's content with the same kernel_seq wrote bytes already
 * there (no kernel ran in between that could have used or changed them). */
static int xp_mark_same_dst(const struct xp_process *p, const size_t *ord, size_t n, uint8_t *marks)
{
    struct xp_map last; /* (device, dst) -> v0: index + 1 of its latest upload */
    xp_map_init(&last);
    for (size_t j = 0; j < n; j++) {
        const struct xp_copy *c = &p->copies[ord[j]];
        bool added;
        struct xp_map_entry *e = xp_map_get(&last, (uint32_t)c->device, c->dst, 0, 0, &added);
        if (!e) {
            xp_map_free(&last);
            return -1;
        }
        if (!added) {
            const struct xp_copy *prev = &p->copies[e->v0 - 1];
            if (xp_same_upload(prev, c) && prev->kernel_seq == c->kernel_seq)
                marks[ord[j]] |= XP_RED_SAME_DST;
        }
        e->v0 = ord[j] + 1;
    }
    xp_map_free(&last);
    return 0;
}

/* One site's uploads of one content: from min_repeats on, every upload after
 * the first (in time) is redundant.  group[] gets, per copy, how many uploads
 * its group had (for the max_uploads_of_one_content detail). */
static int xp_mark_repeats(const struct xp_process *p, const size_t *ord, size_t n, uint64_t min,
                           uint8_t *marks, uint32_t *group)
{
    struct xp_map groups; /* (fingerprint, bytes, stack and kind) -> v0 count, v1 first upload */
    xp_map_init(&groups);
    uint32_t *entry = malloc(n * sizeof *entry);
    if (!entry)
        return -1;
    for (size_t j = 0; j < n; j++) {
        const struct xp_copy *c = &p->copies[ord[j]];
        bool added;
        struct xp_map_entry *e = xp_map_get(&groups, c->fingerprint, c->bytes,
                                            (uint64_t)c->stack_id << 8 | c->fp_kind, 0, &added);
        if (!e) {
            free(entry);
            xp_map_free(&groups);
            return -1;
        }
        if (added)
            e->v1 = ord[j];
        e->v0++;
        entry[j] = (uint32_t)(e - groups.e);
    }
    for (size_t j = 0; j < n; j++) {
        const struct xp_map_entry *e = &groups.e[entry[j]];
        group[ord[j]] = e->v0 > UINT32_MAX ? UINT32_MAX : (uint32_t)e->v0;
        if (e->v0 >= min && e->v1 != ord[j])
            marks[ord[j]] |= XP_RED_REPEAT;
    }
    free(entry);
    xp_map_free(&groups);
    return 0;
}

static void xp_redundant_process(struct xp_report *r, const struct xp_process *p)
{
    size_t n;
    size_t *ord = xp_copies_in_time(p, xp_is_upload, &n);
    if (n < 2) {
        free(ord);
        return;
    }
    uint8_t *marks = calloc(p->n_copies, 1);
    uint32_t *group = calloc(p->n_copies, sizeof *group);
    struct xp_sites sites;
    xp_sites_init(&sites);
    /* Per site: count, bytes, time of redundant copies; aux the same-dst
     * ones; repeats and max_repeats alongside. */
    uint64_t *repeats = NULL, *max_group = NULL;
    if (!ord || !marks || !group || xp_mark_same_dst(p, ord, n, marks) != 0 ||
        xp_mark_repeats(p, ord, n, r->th.redundant_min_repeats, marks, group) != 0)
        goto out;
    for (size_t i = 0; i < p->n_copies; i++) {
        if (!marks[i])
            continue;
        const struct xp_copy *c = &p->copies[i];
        struct xp_site_sum *s = xp_sites_add(&sites, c->stack_id, c->bytes, c->dur_ns);
        if (!s)
            goto out;
        s->aux += (marks[i] & XP_RED_SAME_DST) != 0;
    }
    repeats = calloc(sites.n ? sites.n : 1, sizeof *repeats);
    max_group = calloc(sites.n ? sites.n : 1, sizeof *max_group);
    if (!repeats || !max_group)
        goto out;
    for (size_t i = 0; i < p->n_copies; i++) {
        if (!marks[i])
            continue;
        size_t k = xp_sites_find(&sites, p->copies[i].stack_id);
        repeats[k] += (marks[i] & XP_RED_REPEAT) != 0;
        if (group[i] > max_group[k])
            max_group[k] = group[i];
    }
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        struct xp_finding *f = xp_report_add(
            r, "redundant-upload", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns, xp_fix,
            xp_fix_pytorch, "%llu uploads sent bytes the device already had (%s wasted, %s)",
            (unsigned long long)s->count, xp_bytes_str(s->bytes).s, xp_ns_str(s->time_ns).s);
        xp_finding_num(f, "same_dst_no_kernel", (int64_t)s->aux);
        xp_finding_num(f, "site_repeats", (int64_t)repeats[k]);
        xp_finding_num(f, "max_uploads_of_one_content", (int64_t)max_group[k]);
    }
out:
    free(repeats);
    free(max_group);
    free(ord);
    free(marks);
    free(group);
    xp_sites_free(&sites);
}

void xp_rule_redundant_upload(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_redundant_process(r, &r->procs[i]);
}
