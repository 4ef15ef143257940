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

/* Uploads to the same (device, dst) in time order: one that repeats the
 * previous upload's content with the same kernel_seq wrote bytes already
 * there (no kernel ran in between that could have used or changed them). */
static void xp_mark_same_dst(const struct xp_process *p, struct xp_key *keys, size_t n, uint8_t *marks)
{
    for (size_t j = 0; j < n; j++) {
        const struct xp_copy *c = &p->copies[keys[j].idx];
        keys[j] = (struct xp_key){{(uint32_t)c->device, c->dst, 0, 0}, c->start_ns, keys[j].idx};
    }
    qsort(keys, n, sizeof *keys, xp_cmp_key);
    for (size_t j = 1; j < n; j++) {
        if (keys[j].k[0] != keys[j - 1].k[0] || keys[j].k[1] != keys[j - 1].k[1])
            continue;
        const struct xp_copy *prev = &p->copies[keys[j - 1].idx], *c = &p->copies[keys[j].idx];
        if (prev->fingerprint == c->fingerprint && prev->fp_kind == c->fp_kind && prev->bytes == c->bytes &&
            prev->kernel_seq == c->kernel_seq)
            marks[keys[j].idx] |= XP_RED_SAME_DST;
    }
}

/* One site's uploads of one content: from min_repeats on, every upload after
 * the first is redundant.  group[] gets, per copy, how many uploads its group
 * had (for the max_repeats detail). */
static void xp_mark_repeats(const struct xp_process *p, struct xp_key *keys, size_t n, uint64_t min,
                            uint8_t *marks, uint32_t *group)
{
    for (size_t j = 0; j < n; j++) {
        const struct xp_copy *c = &p->copies[keys[j].idx];
        keys[j] = xp_content_key(c, keys[j].idx, c->stack_id);
    }
    qsort(keys, n, sizeof *keys, xp_cmp_key);
    for (size_t j = 0, end; j < n; j = end) {
        for (end = j + 1; end < n && xp_same_content(&keys[j], &keys[end]) && keys[j].k[3] == keys[end].k[3];)
            end++;
        uint64_t g = end - j;
        for (size_t m = j; m < end; m++) {
            group[keys[m].idx] = g > UINT32_MAX ? UINT32_MAX : (uint32_t)g;
            if (g >= min && m > j)
                marks[keys[m].idx] |= XP_RED_REPEAT;
        }
    }
}

static void xp_redundant_process(struct xp_report *r, const struct xp_process *p)
{
    size_t n = 0;
    for (size_t i = 0; i < p->n_copies; i++)
        n += xp_fingerprinted(&p->copies[i], XP_DIR_H2D);
    if (n < 2)
        return;
    struct xp_key *keys = malloc(n * sizeof *keys);
    uint8_t *marks = calloc(p->n_copies, 1);
    uint32_t *group = calloc(p->n_copies, sizeof *group);
    struct xp_sites sites;
    xp_sites_init(&sites);
    /* Per site: count, bytes, time of redundant copies; aux the same-dst
     * ones; repeats and max_repeats alongside. */
    uint64_t *repeats = NULL, *max_group = NULL;
    if (!keys || !marks || !group)
        goto out;
    for (size_t i = 0, j = 0; i < p->n_copies; i++)
        if (xp_fingerprinted(&p->copies[i], XP_DIR_H2D))
            keys[j++].idx = i;
    xp_mark_same_dst(p, keys, n, marks);
    xp_mark_repeats(p, keys, n, r->th.redundant_min_repeats, marks, group);
    for (size_t i = 0; i < p->n_copies; i++) {
        if (!marks[i])
            continue;
        const struct xp_copy *c = &p->copies[i];
        struct xp_site *s = xp_sites_add(&sites, c->stack_id, c->bytes, c->dur_ns);
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
        const struct xp_site *s = &sites.v[k];
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
    free(keys);
    free(marks);
    free(group);
    xp_sites_free(&sites);
}

void xp_rule_redundant_upload(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_redundant_process(r, &r->procs[i]);
}
