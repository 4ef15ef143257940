/* rule_sync_in_loop.c: a call site that issues many blocking copies, the mark
 * of a copy (or a read of a result) inside a loop that stalls every iteration. */
#include <stdlib.h>
#include <string.h>

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
    "synchronizing every iteration; where every iteration needs the result (a server's answer), "
    "overlap iterations instead: two streams, the next one's upload and kernels queued before "
    "waiting for this one's result";
static const char xp_fix_readback_pytorch[] =
    "avoid .item(), .cpu() or .tolist() every step: accumulate in a CUDA tensor (loss_sum += "
    "loss.detach()) and read it every N steps or after the loop";

/* For a site whose reads completed by a sync are large downloads into
 * pageable memory (a batch's embeddings, predictions written out): the host
 * needs every one, so reading less often is not the fix; the staged copy is.
 * The driver stages pageable memory through its own pinned buffer, one chunk
 * at a time, at a fraction of the link's speed; pinned memory in two buffers
 * makes each download faster and lets it overlap the next batch's kernels. */
static const char xp_fix_readback_pageable[] =
    "download into pinned memory (cudaMallocHost), two buffers in turn: record an event after "
    "each download and wait on it only when the host reads that buffer, so batch N's download "
    "runs at the link's full speed while batch N+1's kernels run; if the values are only needed "
    "later, keep them on the device and download them in fewer, larger copies";
static const char xp_fix_readback_pageable_pytorch[] =
    "copy into preallocated pinned tensors (torch.empty(..., pin_memory=True); "
    "dst.copy_(t, non_blocking=True)), two of them in turn, and wait on a torch.cuda.Event "
    "before reading each, instead of .cpu() every batch; or torch.cat results on the GPU and "
    "download them every N batches";

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
 * memory is async-pageable's, not this rule's; one a rule before reported
 * (redundant-upload: the fix is not to send it) is left out. */
static bool xp_blocking_copy(const struct xp_copy *c, const struct xp_thresholds *th)
{
    (void)th;
    return c->cs->status == 0 && (c->cs->blocking == XP_BL_SYNC || c->paired) && !c->claimed;
}

/* The median of a site's copy sizes (the lower middle one for an even count). */
static uint64_t xp_median_bytes(const struct xp_process *p, const size_t *items, size_t n, uint64_t *tmp)
{
    for (size_t i = 0; i < n; i++)
        tmp[i] = p->copies[items[i]].bytes;
    xp_sort(tmp, n, sizeof *tmp, xp_cmp_u64);
    return tmp[(n - 1) / 2];
}

/* Stalls and loops.  A site's copies on one thread make one *episode*
 * while no kernel was launched on their device between them (the same
 * kernel_seq): a checkpoint downloading six tensors back to back waits for
 * the GPU once, not six times.  A blocking site's episodes are its stalls.
 *
 * Between two stalls of a site, each of the thread's busiest other sites
 * that came between repeated some number of times; the fewest of those is
 * how many iterations of the loops around it the site let pass: 1 for a
 * read every step (the step's batch upload came once), 0 for reads in an
 * inner loop or with nothing else between, N for a read every N steps
 * (every site of the step came N times).  Sites judged by this rule
 * themselves count only when no other site came between (xp_stall).  A site whose stalls come once
 * per `sparse_every` or more iterations (the median over its stalls)
 * already reads "every N steps", which is the fix.  The busiest sites are
 * the XP_LOOP_SITES with the most episodes on the thread: a loop's sites
 * are among them, and a stall costs a look at those only.
 *
 * A step brings new data: a site that, between two stalls, only sent again
 * content it had sent before (a model reloaded per shard, constant weights
 * offloaded per layer) does not mark the loop's iterations, or a read once
 * per shard of 20 batches would count 1 (the reload came once between) and
 * take the batch loop's place.  The sites that brought new data in count
 * first (uploads of new content, or of content not known for sure:
 * unconfirmed samples); when none did, all do (downloads, device-to-device
 * copies and re-sent constants among them), as before: a checkpoint staged
 * out once per read is no step.
 *
 * The loop's own sites come between (nearly) every two stalls: a site that
 * came between fewer than three in four pairs of them runs less often than
 * the read, work of an outer period (a checkpoint staged every 40 steps
 * against a loss read every 20), and says nothing of the steps between two
 * reads, or the checkpoint's one download would count 1.  So the stalls are
 * walked twice: first to see which sites come between how many pairs, then
 * to count with the regular ones (all, when none is regular). */
#define XP_LOOP_SITES 16

/* Contents each site sent, for "sent before": a direct-mapped table of
 * keys (site, content, size), so that a run of millions of uploads holds
 * 512 KiB rather than an entry per upload.  A key pushed out by another
 * that falls in its slot reads as new when it comes again, which counts
 * its site as before this test existed; a constant re-sent every step or
 * shard comes back long before that happens. */
#define XP_SENT_BITS 16

struct xp_track {
    uint64_t last_kseq;          /* kernel_seq of its last copy */
    bool seen;
    uint64_t episodes;
    uint64_t snap[XP_LOOP_SITES];   /* blocking: the thread's busiest sites' counts at its last stall */
    uint64_t snap_new[XP_LOOP_SITES];   /* ... and their copies that brought new content */
    uint64_t pairs;                     /* blocking: pairs of consecutive stalls, ... */
    uint64_t came[XP_LOOP_SITES];       /* ... and in how many each busiest site came between */
    uint64_t *gaps; size_t n_gaps, cap_gaps;
};

/* A thread's busiest sites (plain tracks), most episodes first. */
struct xp_busiest {
    size_t track[XP_LOOP_SITES];
    size_t n;
};

struct xp_tracks {
    struct xp_map map;           /* (tid, stack_id, blocking, device): index into v */
    struct xp_track *v; size_t cap;
    struct xp_map thread;        /* (tid): v0 index + 1 into busy */
    struct xp_busiest *busy; size_t cap_busy;
    uint64_t *sent;              /* 1 << XP_SENT_BITS keys (0: empty) */
};

static void xp_tracks_free(struct xp_tracks *T)
{
    for (size_t i = 0; i < T->map.n; i++)
        free(T->v[i].gaps);
    free(T->v);
    free(T->busy);
    free(T->sent);
    xp_map_free(&T->map);
    xp_map_free(&T->thread);
}

/* The track of c (its own copies, or with blocking its blocking ones), added
 * when new; SIZE_MAX out of memory.  Per device: kernel_seq counts one
 * device's launches. */
static size_t xp_track_of(struct xp_tracks *T, const struct xp_copy *c, bool blocking)
{
    bool added;
    struct xp_map_entry *e = xp_map_get(&T->map, (uint64_t)(int64_t)c->cs->tid, c->cs->stack_id, blocking,
                                        (uint64_t)(int64_t)c->cs->device, &added);
    if (!e)
        return SIZE_MAX;
    size_t k = (size_t)(e - T->map.e);
    if (added && xp_grow(&T->v, &T->cap, k + 1, sizeof *T->v) != 0)
        return SIZE_MAX;
    return k;
}

/* Whether c starts a new episode of track t. */
static bool xp_episode(struct xp_track *t, const struct xp_copy *c)
{
    bool fresh = !t->seen || t->last_kseq != c->kernel_seq;
    t->seen = true;
    t->last_kseq = c->kernel_seq;
    return fresh;
}

/* Whether c brought new data in: an upload, unless its content is known
 * (xp_upload_known) and its site sent it before.  A download or a
 * device-to-device copy brings nothing in (a result read, a checkpoint
 * staged out): a loop's steps are the data it takes in. */
static bool xp_new_content(struct xp_tracks *T, const struct xp_process *p, const struct xp_copy *c)
{
    if (c->cs->direction != XP_DIR_H2D)
        return false;
    if (!xp_upload_known(p, c))
        return true;
    /* The content is a 64-bit hash already: size and site mixed in by
     * odd multipliers keep the slot and the key well spread. */
    uint64_t key = xp_upload_content(p, c) ^ c->bytes * UINT64_C(0x9e3779b97f4a7c15) ^
                   ((uint64_t)c->cs->stack_id << 8 | c->fp_kind) * UINT64_C(0xc2b2ae3d27d4eb4f);
    key += !key;   /* 0 marks an empty slot */
    uint64_t *slot = &T->sent[(key * UINT64_C(0xff51afd7ed558ccd)) >> (64 - XP_SENT_BITS)];
    bool fresh = *slot != key;
    *slot = key;
    return fresh;
}

/* Each thread's busiest plain tracks, from their episodes. */
static int xp_find_busiest(struct xp_tracks *T)
{
    for (size_t k = 0; k < T->map.n; k++) {
        if (T->map.e[k].k[2])
            continue;   /* a blocking track */
        bool added;
        struct xp_map_entry *th = xp_map_get(&T->thread, T->map.e[k].k[0], 0, 0, 0, &added);
        if (!th)
            return -1;
        if (added) {
            if (xp_grow(&T->busy, &T->cap_busy, T->thread.n, sizeof *T->busy) != 0)
                return -1;
            th->v0 = T->thread.n;
        }
        struct xp_busiest *b = &T->busy[th->v0 - 1];
        size_t at;
        if (b->n < XP_LOOP_SITES)
            at = b->n++;
        else if (T->v[k].episodes > T->v[b->track[XP_LOOP_SITES - 1]].episodes)
            at = XP_LOOP_SITES - 1;   /* busier than the least of them: takes its place */
        else
            continue;
        b->track[at] = k;
        for (; at > 0 && T->v[b->track[at - 1]].episodes < T->v[b->track[at]].episodes; at--) {
            size_t tmp = b->track[at - 1];
            b->track[at - 1] = b->track[at];
            b->track[at] = tmp;
        }
    }
    return 0;
}

/* The sites this rule judges: enough blocking copies (sites: each site's
 * blocking copies, from xp_sites_of_copies). */
struct xp_judged {
    const struct xp_sites *sites;
    uint64_t min;
};

static bool xp_is_judged(const struct xp_judged *J, uint32_t stack_id)
{
    size_t k = xp_sites_lookup(J->sites, stack_id);
    return k != XP_NO_SITE && J->sites->v[k].count >= J->min;
}

/* One stall of blocking track b (of site stack_id, thread tid): the gap
 * since its last one, then the thread's busiest sites' counts as they are
 * now.  The loop is told by the sites that are not themselves judged here
 * (J): a loss read every 50 steps says nothing of how many steps passed
 * between two checkpoints; only when no other site came between are the
 * other judged sites the measure.  The first walk (count false) only
 * notes which sites came between. */
static int xp_stall(struct xp_tracks *T, struct xp_track *b, uint64_t tid, uint32_t stack_id, const uint64_t *cnt,
                    const uint64_t *fresh, const struct xp_judged *J, bool count)
{
    const struct xp_map_entry *th = xp_map_lookup(&T->thread, tid, 0, 0, 0);
    const struct xp_busiest *busy = th ? &T->busy[th->v0 - 1] : &(struct xp_busiest){.n = 0};
    /* [regular][brought new content][judged]: the first there is of regular
     * new other sites, regular new judged ones, regular other, regular
     * judged, then the same of all sites. */
    uint64_t fewest[2][2][2];
    memset(fewest, 0xff, sizeof fewest);   /* UINT64_MAX: none yet */
    for (size_t i = 0; i < busy->n; i++) {
        size_t k = busy->track[i];
        uint32_t site = (uint32_t)T->map.e[k].k[1];
        uint64_t since = cnt[k] - b->snap[i], brought = fresh[k] - b->snap_new[i];
        b->snap[i] = cnt[k];
        b->snap_new[i] = fresh[k];
        if (b->episodes < 2 || !since || site == stack_id)
            continue;
        if (!count) {
            b->came[i]++;
            continue;
        }
        size_t judged = xp_is_judged(J, site);
        size_t regular = b->came[i] * 4 >= b->pairs * 3;
        for (size_t r = 0; r <= regular; r++) {
            if (brought && since < fewest[r][1][judged])
                fewest[r][1][judged] = since;
            if (since < fewest[r][0][judged])
                fewest[r][0][judged] = since;
        }
    }
    if (b->episodes < 2)
        return 0;
    if (!count) {
        b->pairs++;
        return 0;
    }
    if (xp_grow(&b->gaps, &b->cap_gaps, b->n_gaps + 1, sizeof *b->gaps) != 0)
        return -1;
    uint64_t every = 0;
    for (int r = 1; r >= 0 && !every; r--) {
        const uint64_t in_turn[] = {fewest[r][1][0], fewest[r][1][1], fewest[r][0][0], fewest[r][0][1]};
        for (size_t w = 0; w < 4 && !every; w++)
            every = in_turn[w] != UINT64_MAX ? in_turn[w] : 0;
    }
    b->gaps[b->n_gaps++] = every;
    return 0;
}

/* One walk of the stalls in time (xp_stall's count says which); every
 * count starts again from nothing.  cnt and fresh: one per plain track
 * (n_plain, the tracks before the walks add the blocking ones). */
static int xp_walk_stalls(struct xp_tracks *T, const struct xp_process *p, const uint32_t *ord, size_t n,
                          const struct xp_thresholds *th, const struct xp_judged *J, uint64_t *cnt,
                          uint64_t *fresh, size_t n_plain, bool count)
{
    memset(cnt, 0, n_plain * sizeof *cnt);
    memset(fresh, 0, n_plain * sizeof *fresh);
    memset(T->sent, 0, (sizeof *T->sent) << XP_SENT_BITS);
    for (size_t k = 0; k < T->map.n; k++) {
        struct xp_track *t = &T->v[k];
        t->seen = false;
        if (T->map.e[k].k[2]) {   /* a blocking track: its stalls are counted again */
            t->episodes = 0;
            memset(t->snap, 0, sizeof t->snap);
            memset(t->snap_new, 0, sizeof t->snap_new);
        }
    }
    for (size_t j = 0; j < n; j++) {
        const struct xp_copy *c = &p->copies[ord[j]];
        size_t k = xp_track_of(T, c, false);   /* found: every plain track exists */
        if (xp_episode(&T->v[k], c))
            cnt[k]++;
        if (count)   /* (the first walk only notes which sites come between) */
            fresh[k] += xp_new_content(T, p, c);
        if (!xp_blocking_copy(c, th) || !xp_is_judged(J, c->cs->stack_id))
            continue;
        size_t b = xp_track_of(T, c, true);
        if (b == SIZE_MAX)
            return -1;
        if (!xp_episode(&T->v[b], c))
            continue;
        T->v[b].episodes++;
        if (xp_stall(T, &T->v[b], (uint64_t)(int64_t)c->cs->tid, c->cs->stack_id, cnt, fresh, J, count) != 0)
            return -1;
    }
    return 0;
}

/* Walks p's successful copies in time three times: every site's episodes
 * per thread, then the stalls of the judged sites (J) twice, to see which
 * sites come between them regularly and to count the loop iterations
 * between them. */
static int xp_tracks_measure(struct xp_tracks *T, const struct xp_process *p, const struct xp_thresholds *th,
                             const struct xp_judged *J)
{
    size_t n;
    uint32_t *ord = xp_copies_in_time(p, xp_copy_succeeded, &n);
    if (!ord)
        return n ? -1 : 0;
    int rc = -1;
    uint64_t *cnt = NULL, *fresh = NULL;
    for (size_t j = 0; j < n; j++) {
        const struct xp_copy *c = &p->copies[ord[j]];
        size_t k = xp_track_of(T, c, false);
        if (k == SIZE_MAX)
            goto out;
        T->v[k].episodes += xp_episode(&T->v[k], c);
    }
    if (xp_find_busiest(T) != 0 || !(cnt = calloc(T->map.n ? T->map.n : 1, sizeof *cnt)) ||
        !(fresh = calloc(T->map.n ? T->map.n : 1, sizeof *fresh)) ||
        !(T->sent = calloc(UINT64_C(1) << XP_SENT_BITS, sizeof *T->sent)))
        goto out;
    size_t n_plain = T->map.n;
    if (xp_walk_stalls(T, p, ord, n, th, J, cnt, fresh, n_plain, false) != 0 ||
        xp_walk_stalls(T, p, ord, n, th, J, cnt, fresh, n_plain, true) != 0)
        goto out;
    rc = 0;
out:
    free(fresh);
    free(cnt);
    free(ord);
    return rc;
}

/* A site's stalls over all its threads and devices, and the median of the
 * loop iterations between them. */
static int xp_site_stalls(const struct xp_tracks *T, uint32_t stack_id, uint64_t *episodes, uint64_t *every)
{
    size_t n_gaps = 0;
    *episodes = 0;
    *every = 0;
    for (size_t k = 0; k < T->map.n; k++)
        if (T->map.e[k].k[1] == stack_id && T->map.e[k].k[2]) {
            *episodes += T->v[k].episodes;
            n_gaps += T->v[k].n_gaps;
        }
    if (!n_gaps)
        return 0;
    uint64_t *all = malloc(n_gaps * sizeof *all);
    if (!all)
        return -1;
    size_t m = 0;
    for (size_t k = 0; k < T->map.n; k++)
        if (T->map.e[k].k[1] == stack_id && T->map.e[k].k[2])
            for (size_t g = 0; g < T->v[k].n_gaps; g++)
                all[m++] = T->v[k].gaps[g];
    xp_sort(all, m, sizeof *all, xp_cmp_u64);
    *every = all[(m - 1) / 2];
    free(all);
    return 0;
}

static void xp_sync_in_loop_process(struct xp_report *r, const struct xp_process *p)
{
    uint64_t min = r->th.sync_in_loop_min_count ? r->th.sync_in_loop_min_count : 1;
    int64_t run_ns = xp_process_run_ns(p);   /* the capture windows' time, if any */
    struct xp_sites sites;
    xp_sites_init(&sites);
    struct xp_tracks T = {0};
    xp_map_init(&T.map);
    xp_map_init(&T.thread);
    size_t *site_of = malloc((p->n_copies ? p->n_copies : 1) * sizeof *site_of);
    size_t *start = NULL, *order = NULL;
    uint64_t *tmp = NULL;
    bool *flagged = NULL;
    if (!site_of)
        goto out;
    if (xp_sites_of_copies(&sites, p, true, xp_blocking_copy, &r->th, site_of) != 0)
        goto out;
    /* Leave out the sites below the threshold before grouping, so only the
     * candidates' copies are sorted for their median. */
    size_t most = 0;
    for (size_t i = 0; i < p->n_copies; i++)
        if (site_of[i] != XP_NO_SITE && sites.v[site_of[i]].count < min)
            site_of[i] = XP_NO_SITE;
    for (size_t k = 0; k < sites.n; k++)
        if (sites.v[k].count >= min && sites.v[k].count > most)
            most = sites.v[k].count;
    const struct xp_judged J = {&sites, min};
    if (!most || xp_tracks_measure(&T, p, &r->th, &J) != 0 ||
        xp_sites_bucket(sites.n, site_of, p->n_copies, &start, &order) != 0)
        goto out;
    tmp = malloc(most * sizeof *tmp);
    flagged = calloc(sites.n, sizeof *flagged);
    if (!tmp || !flagged)
        goto out;
    for (size_t k = 0; k < sites.n; k++) {
        const struct xp_site_sum *s = &sites.v[k];
        if (s->count < min)
            continue;
        uint64_t episodes, every;
        if (xp_site_stalls(&T, s->stack_id, &episodes, &every) != 0)
            goto out;
        if (episodes < min || every >= r->th.sync_in_loop_sparse_every)
            continue;
        uint64_t median = xp_median_bytes(p, order + start[k], start[k + 1] - start[k], tmp);
        size_t paired = 0, paired_up = 0, paired_pageable = 0, read_pinned = 0, n = start[k + 1] - start[k];
        for (size_t j = start[k]; j < start[k + 1]; j++) {
            const struct xp_copy *c = &p->copies[order[j]];
            paired += c->paired;
            paired_up += c->paired && c->cs->direction == XP_DIR_H2D;
            paired_pageable += c->paired && c->cs->host_mem == XP_HM_PAGEABLE;
            read_pinned += c->cs->direction == XP_DIR_D2H && c->cs->host_mem == XP_HM_PINNED;
        }
        /* Results read into pinned memory, each larger than statistics
         * (result_min_bytes): neither fix applies.  Reading every N steps
         * is for values the host only watches (a loss, a norm, a flag),
         * pinned buffers are there already, and the host consumes each
         * result (a server's answer, a batch's logits written out). */
        if (read_pinned * 2 > n && median >= r->th.sync_in_loop_result_min_bytes)
            continue;
        flagged[k] = true;
        /* Most copies completed by a sync: reads of results, or uploads.
         * Reads large enough that moving the bytes, not the call, is their
         * time (low-bandwidth.min_bytes), into pageable memory, want pinned
         * buffers rather than fewer reads. */
        bool upload = paired_up * 2 > n;
        bool readback = !upload && paired * 2 > n;
        bool large_pageable =
            readback && paired_pageable * 2 > n && median >= r->th.low_bandwidth_min_bytes;
        const char *fix = upload           ? xp_fix_upload
                          : large_pageable ? xp_fix_readback_pageable
                          : readback       ? xp_fix_readback
                                           : xp_fix;
        const char *fix_pt = upload           ? xp_fix_upload_pytorch
                             : large_pageable ? xp_fix_readback_pageable_pytorch
                             : readback       ? xp_fix_readback_pytorch
                                              : xp_fix_pytorch;
        struct xp_finding *f = xp_report_add(
            r, "sync-in-loop", XP_SEV_WARNING, p, s->stack_id, s->count, s->bytes, s->time_ns,
            fix, fix_pt,
            "%llu blocking copies from one call site held the host %s (%s, median %s each), "
            "waiting for the GPU %llu times",
            (unsigned long long)s->count, xp_ns_str(s->time_ns).s, xp_bytes_str(s->bytes).s,
            xp_bytes_str(median).s, (unsigned long long)episodes);
        xp_finding_text(f, "direction", "%s", xp_dir_mask_name(s->aux));
        xp_finding_num(f, "median_bytes", (int64_t)median);
        xp_finding_num(f, "per_copy_ns", s->time_ns / (int64_t)s->count);
        xp_finding_num(f, "copy_then_sync", (int64_t)paired);
        xp_finding_num(f, "stalls", (int64_t)episodes);
        xp_finding_num(f, "loop_iterations_per_stall", (int64_t)every);
        if (run_ns > 0)
            xp_finding_text(f, "run_share", "%.3f", (double)s->time_ns / (double)run_ns);
    }
    xp_claim_sites(r, p, site_of, flagged);
out:
    free(flagged);
    free(tmp);
    free(start);
    free(order);
    free(site_of);
    xp_tracks_free(&T);
    xp_sites_free(&sites);
}

void xp_rule_sync_in_loop(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_sync_in_loop_process(r, &r->procs[i]);
}
