/* test_rules_copies.c: the copy rules over hand-built models (async-pageable,
 * sync-in-loop, redundant-upload, round-trip, small-copies, low-bandwidth):
 * what each finds (counts, bytes and times exactly) and what the one
 * finding per copy problem leaves to the rule that tells it best. */
#include "rules_fixture.h"

/* ---- async-pageable ---- */

static void test_async_pageable(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[16];
    for (size_t i = 0; i < 12; i++)
        c[i] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 4 * MiB, (int64_t)i * MS, 1000 + (int64_t)i, 5);
    c[12] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 4 * MiB, 0, 7, 5);
    c[13] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 4 * MiB, 0, 7, 5);
    xt_site_of(&c[13])->status = 1; /* failed: moved nothing */
    c[14] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 100, 0, 50, 6);
    c[15] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, XP_BL_SYNC, 100, 0, 50, 6);
    p.copies = c;
    p.n_copies = 16;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "async-pageable"), 2);
    const struct xp_finding *f = at_site(&r, 5);
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_int_equal(f->count, 12);
    assert_int_equal(f->bytes, 48 * MiB);
    assert_int_equal(f->time_ns, 12 * 1000 + 66);
    assert_string_equal(text(f, "direction"), "H2D");
    assert_non_null(strstr(f->message, "12 async copies from pageable memory"));
    assert_non_null(f->fix_pytorch);
    assert_non_null(strstr(f->fix, "cudaHostRegister"));
    f = at_site(&r, 6);
    assert_int_equal(f->count, 1);
    assert_int_equal(f->time_ns, 50);
    assert_string_equal(text(f, "direction"), "D2H");
    report_free(&r);
    (void)state;
}

/* ---- sync-in-loop ---- */

/* Whether r has a finding at stack. */
static bool finding_at(const struct xp_report *r, uint32_t stack)
{
    for (size_t i = 0; i < r->n_findings; i++)
        if (r->findings[i].stack_id == stack)
            return true;
    return false;
}

/* The fix follows what the blocking copies were: reads of results completed
 * by a sync (.item(), .cpu()): keep the value on the device; uploads
 * completed by a sync (.to(device) without non_blocking): pin and do not
 * synchronize; synchronous copies: async copies from pinned memory; large
 * reads into pageable memory completed by a sync (a batch's output written
 * out): pinned buffers in turn, not fewer reads; large reads into pinned
 * memory have neither fix (test_sync_in_loop_results). */
static void test_sync_in_loop_fix(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[50];
    size_t n = 0;
    for (size_t i = 0; i < 10; i++) {
        c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)i, 100, 1);
        c[n++].paired = true;
        c[n] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 1 << 20, (int64_t)i, 100, 2);
        c[n++].paired = true;
        c[n++] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_SYNC, 1 << 20, (int64_t)i, 100, 3);
        c[n] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 8 << 20, (int64_t)i, 100, 4);
        c[n++].paired = true;
        c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 8 << 20, (int64_t)i, 100, 5);
        c[n++].paired = true;
    }
    for (size_t i = 0; i < n; i++)
        c[i].kernel_seq = i;   /* a kernel between any two: each copy waits for the GPU */
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "sync-in-loop"), 4);
    assert_false(finding_at(&r, 5));
    assert_non_null(strstr(at_site(&r, 4)->fix, "pinned memory (cudaMallocHost), two buffers"));
    assert_null(strstr(at_site(&r, 4)->fix, "keep the value on the device: accumulate"));
    assert_non_null(strstr(at_site(&r, 4)->fix_pytorch, "pin_memory=True"));
    /* A scalar, already pinned: what is left is reading less often. */
    assert_non_null(strstr(at_site(&r, 1)->fix, "keep the value on the device"));
    assert_non_null(strstr(at_site(&r, 2)->fix, "pinned"));
    assert_null(strstr(at_site(&r, 2)->fix, "keep the value on the device"));
    assert_non_null(strstr(at_site(&r, 2)->fix_pytorch, "non_blocking=True"));
    assert_non_null(strstr(at_site(&r, 3)->fix, "cudaMemcpyAsync"));
    report_free(&r);
    (void)state;
}

static void test_sync_in_loop(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[40];
    size_t n = 0;
    /* Site 1: 10 blocking (8 sync + 2 async_pageable completed at once by a
     * sync), sizes 1..10 KiB: flagged.  (An async_pageable copy that was not
     * synchronized at once is async-pageable's, not this rule's.) */
    for (size_t i = 0; i < 10; i++) {
        c[n] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, i < 8 ? XP_BL_SYNC : XP_BL_ASYNC_PAGEABLE, (i + 1) * 1024,
                    (int64_t)i, 100, 1);
        c[n++].paired = i >= 8;
    }
    /* Site 2: 9 blocking, 5 async, 3 failed: below the threshold (in
     * stalls: a kernel runs between any two copies, so each waits). */
    for (size_t i = 0; i < 9; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 64, (int64_t)i, 100, 2);
    for (size_t i = 0; i < 5; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 64, (int64_t)i, 100, 2);
    for (size_t i = 0; i < 3; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 64, (int64_t)i, 100, 2);
        xt_site_of(&c[n++])->status = 700;
    }
    for (size_t i = 0; i < n; i++)
        c[i].kernel_seq = i;
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->count, 10);
    assert_int_equal(num(f, "stalls"), 10);
    assert_int_equal(f->bytes, 55 * 1024);
    assert_int_equal(f->time_ns, 1000);
    assert_int_equal(num(f, "median_bytes"), 5 * 1024); /* lower middle of an even count */
    assert_int_equal(num(f, "per_copy_ns"), 100);
    assert_string_equal(text(f, "direction"), "D2H");
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.min_count=20", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.min_count=9", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 2);
    assert_int_equal(at_site(&r, 2)->count, 9);
    report_free(&r);
    (void)state;
}

/* A checkpoint: six tensors downloaded back to back, no kernel between
 * them, every 50 steps: one wait for the GPU per checkpoint, not six. */
static void test_sync_in_loop_bursts(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[24];
    for (size_t i = 0; i < 24; i++) {
        c[i] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, XP_BL_SYNC, MiB, (int64_t)i * MS, 100000, 1);
        c[i].kernel_seq = 1000 * (i / 6);   /* the training steps' kernels between checkpoints */
    }
    p.copies = c;
    p.n_copies = 24;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.min_count=4", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_int_equal(at_site(&r, 1)->count, 24);
    assert_int_equal(num(at_site(&r, 1), "stalls"), 4);
    /* On another device, or another thread, a copy is a wait of its own
     * (kernel_seq counts one device's launches). */
    xt_site_of(&c[1])->device = 1;
    xt_site_of(&c[7])->tid = 2;
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_int_equal(num(at_site(&r, 1), "stalls"), 6);
    report_free(&r);
    (void)state;
}

/* A loop of `steps` steps on one thread: each uploads a batch (site 1,
 * async from pinned memory) and launches kernels; the loss is read back
 * (site 2, a copy then a sync) on the steps where step % every == 0, and,
 * with per_step > 0, site 3 reads per_step values in an inner loop of each
 * step (a kernel before each).  Returns the number of copies. */
static size_t loop_with_reads(struct xp_copy *c, size_t steps, size_t every, size_t per_step)
{
    size_t n = 0;
    uint64_t kseq = 0;
    for (size_t s = 0; s < steps; s++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, (int64_t)n * 1000, 100, 1);
        c[n++].kernel_seq = kseq;
        kseq += 20;
        for (size_t k = 0; k < per_step; k++) {
            c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)n * 1000, 100, 3);
            c[n].paired = true;
            c[n++].kernel_seq = kseq++;
        }
        if (s % every == 0) {
            c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)n * 1000, 100, 2);
            c[n].paired = true;
            c[n++].kernel_seq = kseq;
        }
    }
    return n;
}

/* Reading the loss every N steps is the fix this rule gives: quiet from
 * sparse_every steps on, flagged below it; an inner loop of reads inside
 * each step is flagged whatever the outer loop does. */
static void test_sync_in_loop_sparse(void **state)
{
    static struct xp_copy c[4000];
    struct xp_process p;
    proc_init(&p);
    p.copies = c;
    struct xp_report r;
    report_init(&r, &p, 1);
    p.n_copies = loop_with_reads(c, 200, 1, 0);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_int_equal(at_site(&r, 2)->count, 200);
    assert_int_equal(num(at_site(&r, 2), "loop_iterations_per_stall"), 1);
    p.n_copies = loop_with_reads(c, 200, 3, 0);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_int_equal(num(at_site(&r, 2), "loop_iterations_per_stall"), 3);
    p.n_copies = loop_with_reads(c, 200, 4, 0);
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    p.n_copies = loop_with_reads(c, 1000, 20, 0);   /* 50 reads, every 20 steps */
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.sparse_every=21", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    xp_thresholds_default(&r.th);
    /* Eight reads per step in an inner loop: 0 steps between most of them. */
    p.n_copies = loop_with_reads(c, 100, 10, 8);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_int_equal(at_site(&r, 3)->count, 800);
    assert_int_equal(num(at_site(&r, 3), "loop_iterations_per_stall"), 0);
    /* Two reads at two rates, the loss every 50 steps and a checkpoint (6
     * tensors back to back) every 100: the checkpoint's loop is the step,
     * not the loss read. */
    size_t n = 0;
    for (size_t s = 0; s < 1000; s++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, (int64_t)n * 1000, 100, 1);
        c[n++].kernel_seq = 20 * s;
        if (s % 50 == 49) {
            c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)n * 1000, 100, 2);
            c[n].paired = true;
            c[n++].kernel_seq = 20 * s + 10;
        }
        for (size_t t = 0; s % 100 == 99 && t < 6; t++) {
            c[n] = copy(XP_DIR_D2H, XP_HM_PAGEABLE, XP_BL_SYNC, MiB, (int64_t)n * 1000, 100, 4);
            c[n++].kernel_seq = 20 * s + 10;
        }
    }
    p.n_copies = n;
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.min_count=5", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.sparse_every=101", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 2);
    assert_int_equal(num(at_site(&r, 4), "loop_iterations_per_stall"), 100);
    assert_int_equal(num(at_site(&r, 4), "stalls"), 10);
    xp_thresholds_default(&r.th);
    /* With nothing else between the reads (a loop on data already on the
     * device), every read is a stall of the loop. */
    for (size_t i = 0; i < 50; i++) {
        c[i] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)i * 1000, 100, 2);
        c[i].paired = true;
        c[i].kernel_seq = 30 * i;
    }
    p.n_copies = 50;
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_int_equal(num(at_site(&r, 2), "loop_iterations_per_stall"), 0);
    report_free(&r);
    (void)state;
}

/* An offline job in shards: per shard the model is uploaded (site 5, the
 * same 16 MiB each time: a reload), then 20 batches (site 1, new data
 * each), then one value is read (site 2, 4 bytes, a copy then a sync).
 * The read comes once per 20 batches: the reload, once per shard too, sent
 * nothing new and does not count the loop's iterations.  Returns the
 * number of copies; weights_change: another model per shard. */
static size_t shards_with_reload(struct xp_copy *c, size_t shards, bool weights_change, uint8_t weights_kind)
{
    size_t n = 0;
    uint64_t kseq = 0;
    for (size_t sh = 0; sh < shards; sh++) {
        c[n] = upload(weights_change ? 0x7000 + sh : 0x7000, weights_kind, 16 * MiB, 0x100000 * (sh + 1), kseq,
                      (int64_t)n * 1000, 5);
        xt_site_of(&c[n++])->blocking = XP_BL_ASYNC;
        for (size_t b = 0; b < 20; b++, kseq += 2) {
            c[n] = upload(0x10000 + sh * 20 + b, 1, MiB, 0x9000000, kseq, (int64_t)n * 1000, 1);
            xt_site_of(&c[n++])->blocking = XP_BL_ASYNC;
        }
        c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)n * 1000, 100, 2);
        c[n].paired = true;
        c[n++].kernel_seq = kseq;
    }
    return n;
}

/* A training step that offloads: per step a batch (site 1), then `layers`
 * layers' weights uploaded one by one (site 6, the same contents every
 * step unless layers_change: an optimizer on the CPU), a kernel after
 * each, and the loss read with a sync (site 2).  batch_change false: the
 * same batch every step (a benchmark on synthetic data). */
static size_t offload_steps(struct xp_copy *c, size_t steps, size_t layers, bool layers_change, bool batch_change)
{
    size_t n = 0;
    uint64_t kseq = 0;
    for (size_t s = 0; s < steps; s++) {
        c[n] = upload(batch_change ? 0x20000 + s : 0x20000, 1, MiB, 0x9000000, kseq++, (int64_t)n * 1000, 1);
        xt_site_of(&c[n++])->blocking = XP_BL_ASYNC;
        for (size_t l = 0; l < layers; l++) {
            c[n] = upload(0x30000 + l + (layers_change ? 100 * s : 0), 1, 4 * MiB, 0xA000000 + l * 0x1000000, kseq++,
                          (int64_t)n * 1000, 6);
            xt_site_of(&c[n++])->blocking = XP_BL_ASYNC;
        }
        c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)n * 1000, 100, 2);
        c[n].paired = true;
        c[n++].kernel_seq = kseq++;
    }
    return n;
}

/* A step brings new data: a site that only sent again what it had sent
 * does not tell the loop's iterations; when no site brought anything new,
 * every site does, as before. */
static void test_sync_in_loop_new_content(void **state)
{
    static struct xp_copy c[2000];
    struct xp_process p;
    proc_init(&p);
    p.copies = c;
    struct xp_report r;
    report_init(&r, &p, 1);
    /* The reload per shard: a read every 20 batches, quiet. */
    p.n_copies = shards_with_reload(c, 12, false, 1);
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.sparse_every=21", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_int_equal(num(at_site(&r, 2), "loop_iterations_per_stall"), 20);
    xp_thresholds_default(&r.th);
    /* Another model per shard is new data: a read per iteration of the
     * shard loop. */
    p.n_copies = shards_with_reload(c, 12, true, 1);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_int_equal(num(at_site(&r, 2), "loop_iterations_per_stall"), 1);
    /* Sampled fingerprints say "the same" only once confirmed in full. */
    p.n_copies = shards_with_reload(c, 12, false, 2);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    static struct xp_copy_fact full[12];
    size_t nf = 0;
    for (size_t i = 0; i < p.n_copies; i++)
        if (c[i].cs->stack_id == 5)
            full[nf++] = (struct xp_copy_fact){.copy = i, .value = 0xF00D};
    p.copy_full_fps = full;
    p.n_copy_full_fps = nf;
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    p.copy_full_fps = NULL;
    p.n_copy_full_fps = 0;
    /* .item() every step of a loop that offloads 4 layers: the batch marks
     * the step, whether the layers' weights are constant or updated on the
     * CPU; with the same batch every step too, nothing new comes and every
     * site counts again. */
    for (int v = 0; v < 3; v++) {
        p.n_copies = offload_steps(c, 50, 4, v == 1, v != 2);
        assert_int_equal(run(&r, "sync-in-loop"), 1);
        assert_int_equal(at_site(&r, 2)->count, 50);
        assert_int_equal(num(at_site(&r, 2), "loop_iterations_per_stall"), 1);
    }
    report_free(&r);
    (void)state;
}

/* A training loop (a new batch per step, site 1) that reads its loss with
 * a sync every `read_every` steps (site 2) and stages a checkpoint out
 * every `ckpt_every` steps (site 7: six tensors downloaded back to back
 * on a side stream, for a thread to write out: not waited for here). */
static size_t steps_with_checkpoints(struct xp_copy *c, size_t steps, size_t read_every, size_t ckpt_every)
{
    size_t n = 0;
    uint64_t kseq = 0;
    for (size_t s = 1; s <= steps; s++) {
        c[n] = upload(0x40000 + s, 1, MiB, 0x9000000, kseq, (int64_t)n * 1000, 1);
        xt_site_of(&c[n++])->blocking = XP_BL_ASYNC;
        kseq += 3;
        if (s % ckpt_every == 0)
            for (size_t t = 0; t < 6; t++) {   /* (t: the six tensors) */
                c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4 * MiB, (int64_t)n * 1000, 100, 7);
                c[n++].kernel_seq = kseq;
            }
        if (s % read_every == 0) {
            c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)n * 1000, 100, 2);
            c[n].paired = true;
            c[n++].kernel_seq = kseq;
        }
    }
    return n;
}

/* Work of an outer period between the reads (a checkpoint every 40 steps,
 * a loss read every 20) and downloads once per read (a checkpoint every 20
 * steps too) are no step of the loop: the batches are, 20 between two
 * reads.  A read every step stays a read every step. */
static void test_sync_in_loop_outer_work(void **state)
{
    static struct xp_copy c[4000];
    struct xp_process p;
    proc_init(&p);
    p.copies = c;
    struct xp_report r;
    report_init(&r, &p, 1);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.sparse_every=100", err, sizeof err), 0);
    static const size_t cases[][3] = {{20, 40, 20}, {20, 20, 20}, {20, 60, 20}, {1, 40, 1}};
    for (size_t v = 0; v < sizeof cases / sizeof cases[0]; v++) {
        p.n_copies = steps_with_checkpoints(c, 400, cases[v][0], cases[v][1]);
        run(&r, "sync-in-loop");
        assert_int_equal(num(at_site(&r, 2), "loop_iterations_per_stall"), cases[v][2]);
    }
    xp_thresholds_default(&r.th);
    p.n_copies = steps_with_checkpoints(c, 400, 20, 40);
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    p.n_copies = steps_with_checkpoints(c, 400, 1, 40);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    report_free(&r);
    (void)state;
}

/* Results read into pinned memory, larger than statistics
 * (result_min_bytes, 4 KiB): the host consumes each one (a server's
 * answer), the copy already runs at the link's speed: quiet.  A scalar or
 * a few metrics, or a result read into pageable memory, is flagged. */
static void test_sync_in_loop_results(void **state)
{
    static struct xp_copy c[400];
    struct xp_process p;
    proc_init(&p);
    p.copies = c;
    struct xp_report r;
    report_init(&r, &p, 1);
    static const struct {
        uint64_t bytes;
        uint8_t host_mem, blocking;
        bool paired, found;
    } reads[] = {
        {4096, XP_HM_PINNED, XP_BL_ASYNC, true, false},     /* top-k scores, then a sync */
        {128 << 10, XP_HM_PINNED, XP_BL_SYNC, false, false}, /* a batch's logits, cudaMemcpy */
        {4, XP_HM_PINNED, XP_BL_ASYNC, true, true},         /* .item() */
        {32, XP_HM_PINNED, XP_BL_ASYNC, true, true},        /* eight metrics */
        {4096, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, true, true},
    };
    for (size_t v = 0; v < sizeof reads / sizeof reads[0]; v++) {
        p.n_copies = loop_with_reads(c, 100, 1, 0);
        for (size_t i = 0; i < p.n_copies; i++)
            if (c[i].cs->stack_id == 2) {
                c[i].bytes = reads[v].bytes;
                c[i].paired = reads[v].paired;
                xt_site_of(&c[i])->host_mem = reads[v].host_mem;
                xt_site_of(&c[i])->blocking = reads[v].blocking;
            }
        assert_int_equal(run(&r, "sync-in-loop"), reads[v].found);
    }
    /* Where larger vectors of statistics are read every step, the setting
     * moves up. */
    p.n_copies = loop_with_reads(c, 100, 1, 0);
    for (size_t i = 0; i < p.n_copies; i++)
        if (c[i].cs->stack_id == 2)
            c[i].bytes = 4096;
    assert_int_equal(run(&r, "sync-in-loop"), 0);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.result_min_bytes=8K", err, sizeof err), 0);
    assert_int_equal(run(&r, "sync-in-loop"), 1);
    assert_non_null(strstr(at_site(&r, 2)->fix, "keep the value on the device"));
    report_free(&r);
    (void)state;
}

/* One finding per copy problem: the rule that says most about a copy
 * claims it, and the later ones leave it out. */
static void test_one_finding_per_copy(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[300];
    size_t n = 0;
    /* Site 1: the same frozen weights sent every step with .to(device) (a
     * copy then a sync): redundant-upload's, not also sync-in-loop's. */
    for (size_t i = 0; i < 12; i++) {
        c[n] = upload(0xE1, 1, MiB, 0x100000 * (i % 2 + 1), 10 * i, (int64_t)n * 100, 1);
        xt_site_of(&c[n])->blocking = XP_BL_ASYNC_PAGEABLE;
        c[n++].paired = true;
    }
    /* Site 2: .item() every step (4 bytes, a copy then a sync, a kernel
     * between): sync-in-loop's; small-copies says nothing more. */
    for (size_t i = 0; i < 200; i++) {
        c[n] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_ASYNC, 4, (int64_t)n * 100, 4000000, 2);
        c[n].paired = true;
        c[n++].kernel_seq = 5 * i + 1;
    }
    /* Site 3: small async pageable uploads: async-pageable's alone. */
    for (size_t i = 0; i < 60; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_ASYNC_PAGEABLE, 64, (int64_t)n * 100, 1000000, 3);
        c[n].dst = 0x900000;
        c[n++].kernel_seq = 5 * i + 2;
    }
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.min_count=50", err, sizeof err), 0);
    assert_int_equal(run_all(&r), 3);
    assert_string_equal(at_site(&r, 1)->rule, "redundant-upload");
    assert_int_equal(at_site(&r, 1)->count, 11);
    assert_string_equal(at_site(&r, 2)->rule, "sync-in-loop");
    assert_string_equal(at_site(&r, 3)->rule, "async-pageable");
    /* Each rule alone still sees them all. */
    assert_int_equal(run(&r, "sync-in-loop"), 2);
    assert_int_equal(run(&r, "small-copies"), 2);
    report_free(&r);
    (void)state;
}

/* ---- redundant-upload ---- */

static void test_redundant_same_dst(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[8] = {
        upload(0xAA, 1, 4096, 0x5000, 3, 10, 1),
        upload(0xAA, 1, 4096, 0x5000, 3, 20, 2), /* same dst, no kernel since: redundant */
        upload(0xAA, 1, 4096, 0x5000, 4, 30, 3), /* a kernel ran since: not redundant */
        upload(0xAA, 1, 4096, 0x6000, 4, 40, 4), /* another dst, only one upload from its site */
        upload(0xAA, 2, 4096, 0x6000, 4, 50, 5), /* sampled vs full: never compared */
        upload(0xAA, 1, 2048, 0x6000, 4, 60, 6), /* other size: other content */
        upload(0xBB, 1, 4096, 0x6000, 4, 70, 7), /* other content... */
        upload(0xAA, 1, 4096, 0x6000, 4, 80, 8), /* ...overwrote 0x6000: this one is not redundant */
    };
    p.copies = c;
    p.n_copies = 8;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "redundant-upload"), 1);
    const struct xp_finding *f = at_site(&r, 2);
    assert_int_equal(f->count, 1);
    assert_int_equal(f->bytes, 4096);
    assert_int_equal(f->time_ns, 10);
    assert_int_equal(num(f, "same_dst_no_kernel"), 1);
    assert_int_equal(num(f, "site_repeats"), 0);
    /* A different device is a different destination. */
    xt_site_of(&c[1])->device = 1;
    assert_int_equal(run(&r, "redundant-upload"), 0);
    /* The D2H direction and failed or unfingerprinted uploads are no uploads of content. */
    xt_site_of(&c[1])->device = 0;
    c[1].fp_kind = 0;
    assert_int_equal(run(&r, "redundant-upload"), 0);
    c[1].fp_kind = 1;
    xt_site_of(&c[1])->status = 1;
    assert_int_equal(run(&r, "redundant-upload"), 0);
    report_free(&r);
    (void)state;
}

static void test_redundant_site_repeats(void **state)
{
    struct xp_process p;
    proc_init(&p);
    /* One site uploads the same content to fresh buffers, a kernel between each. */
    struct xp_copy c[6];
    struct xp_copy_fact full[3]; /* sampled: confirmed by the full hash */
    for (size_t i = 0; i < 3; i++) {
        c[i] = upload(0xCC, 2, 1 * MiB, 0x100000 * (i + 1), i, 100 * (int64_t)(3 - i), 9);
        full[i] = (struct xp_copy_fact){.copy = i, .value = 0xF00D};
    }
    /* Another site does it twice only, across a kernel launch: not redundant. */
    c[3] = upload(0xDD, 1, 512, 0x9000, 1, 5, 10);
    c[4] = upload(0xDD, 1, 512, 0x9000, 2, 6, 10);
    /* Same fingerprint value, different kind, same site: never the same content. */
    c[5] = upload(0xCC, 1, 1 * MiB, 0x700000, 7, 1000, 9);
    p.copies = c;
    p.n_copies = 6;
    p.copy_full_fps = full;
    p.n_copy_full_fps = 3;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "redundant-upload"), 1);
    const struct xp_finding *f = at_site(&r, 9);
    assert_int_equal(f->count, 2); /* the first of three is needed */
    assert_int_equal(f->bytes, 2 * MiB);
    assert_int_equal(f->time_ns, 20);
    assert_int_equal(num(f, "site_repeats"), 2);
    assert_int_equal(num(f, "max_uploads_of_one_content"), 3);
    /* At two repeats the second site's second upload is redundant too. */
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "redundant-upload.min_repeats=2", err, sizeof err), 0);
    assert_int_equal(run(&r, "redundant-upload"), 2);
    assert_int_equal(at_site(&r, 10)->count, 1);
    assert_int_equal(at_site(&r, 10)->bytes, 512);
    assert_int_equal(xp_thresholds_set(&r.th, "redundant-upload.min_repeats=4", err, sizeof err), 0);
    assert_int_equal(run(&r, "redundant-upload"), 0);
    report_free(&r);
    (void)state;
}

/* ---- round-trip ---- */

static void test_round_trip(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_copy c[6];
    c[0] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_SYNC, 8192, 100, 30, 4);
    c[0].fingerprint = 0x77;
    c[0].fp_kind = 1;
    c[1] = upload(0x77, 1, 8192, 0x5000, 1, 200, 5); /* came back: round trip */
    c[2] = upload(0x77, 1, 8192, 0x6000, 1, 300, 5);
    c[3] = upload(0x77, 1, 8192, 0x6000, 1, 50, 6);  /* uploaded before the download: not */
    c[4] = upload(0x77, 2, 8192, 0x6000, 1, 400, 7); /* other fingerprint kind: not */
    c[5] = upload(0x77, 1, 4096, 0x6000, 1, 400, 8); /* other size: not */
    p.copies = c;
    p.n_copies = 6;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "round-trip"), 1);
    const struct xp_finding *f = at_site(&r, 5);
    assert_int_equal(f->count, 2);
    assert_int_equal(f->bytes, 16384);
    assert_int_equal(f->time_ns, 20);
    assert_int_equal(num(f, "d2h_stack_id"), 4);
    /* An async download has no fingerprint: nothing to match. */
    c[0].fp_kind = 0;
    assert_int_equal(run(&r, "round-trip"), 0);
    report_free(&r);
    (void)state;
}

/* ---- small-copies ---- */

static void test_small_copies(void **state)
{
    struct xp_process p;
    proc_init(&p); /* a run of 1 s */
    static struct xp_copy c[2400];
    size_t n = 0;
    /* Site 1: 100 copies of 100 us each: 10 ms, 1% of the run. */
    for (size_t i = 0; i < 100; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, i % 2 ? 4096 : 0, (int64_t)i, 100000, 1);
    for (size_t i = 0; i < 99; i++) /* 99 small and some large ones: below the count */
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 4096, (int64_t)i, 100000, 2);
    for (size_t i = 0; i < 50; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 4097, (int64_t)i, 100000, 2);
    for (size_t i = 0; i < 1000; i++)
        c[n++] = copy(XP_DIR_D2H, XP_HM_PINNED, XP_BL_SYNC, 8, (int64_t)i, 20000, 3);
    /* Site 4: 1000 copies that cost 2 us each, 2 ms in all: not worth reading about. */
    for (size_t i = 0; i < 1000; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 64, (int64_t)i, 2000, 4);
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "small-copies"), 2);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_int_equal(f->count, 100);
    assert_int_equal(f->bytes, 50 * 4096);
    assert_int_equal(f->time_ns, 10 * MS);
    assert_int_equal(num(f, "mean_bytes"), 2048);
    assert_int_equal(num(f, "per_copy_ns"), 100000);
    assert_string_equal(text(f, "run_share"), "0.010");
    f = at_site(&r, 3);
    assert_int_equal(f->severity, XP_SEV_WARNING); /* 10x the minimum */
    assert_int_equal(f->count, 1000);
    assert_int_equal(f->time_ns, 20 * MS);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.max_bytes=4K", err, sizeof err), 0);
    assert_int_equal(r.th.small_copy_max_bytes, 4096);
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.max_bytes=4097", err, sizeof err), 0);
    assert_int_equal(run(&r, "small-copies"), 3);
    assert_int_equal(at_site(&r, 2)->count, 149);
    /* The cheap site is one once asked for a fifth of a percent. */
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.min_share=0.002", err, sizeof err), 0);
    assert_int_equal(run(&r, "small-copies"), 4);
    assert_int_equal(at_site(&r, 4)->count, 1000);
    /* An async call that returns in 100 ns still costs the copy engine its
     * setup: each counts small-copies.fixed_ns (2 us) at least. */
    xp_thresholds_default(&r.th);
    for (size_t i = 0; i < 1000; i++)
        c[n - 1000 + i].dur_ns = 100;
    assert_int_equal(run(&r, "small-copies"), 2);
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.fixed_ns=10000", err, sizeof err), 0);
    assert_int_equal(run(&r, "small-copies"), 3);
    assert_int_equal(at_site(&r, 4)->time_ns, 10 * MS);
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.fixed_ns=0", err, sizeof err), 0);
    assert_int_equal(xp_thresholds_set(&r.th, "small-copies.min_share=0.0001", err, sizeof err), 0);
    assert_int_equal(run(&r, "small-copies"), 3);
    assert_int_equal(at_site(&r, 4)->time_ns, 100000);
    report_free(&r);
    (void)state;
}

/* ---- low-bandwidth ---- */

static void test_low_bandwidth(void **state)
{
    struct xp_process p;
    proc_init(&p); /* a run of 1 s */
    static struct xp_copy c[64];
    size_t n = 0;
    /* Nine pinned sync uploads of 1 MiB at 1 MiB per 100 us (10.5 GB/s), into one buffer. */
    for (size_t i = 0; i < 9; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB, (int64_t)i * MS, 100000, 1);
    /* Site 2: four at a fortieth of that (32 ms, 3.2% of the run), into a
     * buffer written before: slow. */
    for (size_t i = 0; i < 4; i++)
        c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 2 * MiB, (int64_t)(20 + i) * MS, 8000000, 2);
    /* Pageable copies are their own class: all equally slow, none flagged. */
    for (size_t i = 0; i < 4; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PAGEABLE, XP_BL_SYNC, MiB, (int64_t)i * MS, 3000000, 3);
        c[n++].dst = 0x3000;
    }
    /* Site 5: one slow copy among fast ones: an outlier, its median is fast. */
    for (size_t i = 0; i < 5; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB, (int64_t)(30 + i) * MS, i == 2 ? 5000000 : 100000, 5);
        c[n++].dst = 0x5000;
    }
    /* Site 6: only the first copy into each fresh buffer was slow. */
    for (size_t i = 0; i < 4; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB, (int64_t)(40 + i) * MS, 5000000, 6);
        c[n++].dst = 0x60000000 + i * MiB;
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB, (int64_t)(50 + i) * MS, 100000, 6);
        c[n++].dst = 0x60000000 + i * MiB;
    }
    /* Site 7: async copies whose call time is long: the call is not the transfer. */
    for (size_t i = 0; i < 4; i++) {
        c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, 8 * MiB, (int64_t)(60 + i) * MS, 9000000, 7);
        c[n++].dst = 0x7000;
    }
    /* Below the size, unmeasurable (zero time), failed: left out. */
    c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, MiB - 1, 0, 9000000, 4);
    c[n++] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 8 * MiB, 0, 0, 4);
    c[n] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_SYNC, 8 * MiB, 0, 9000000, 4);
    xt_site_of(&c[n++])->status = 1;
    for (size_t i = 0; i < n; i++)
        c[i].kernel_seq = i;
    p.copies = c;
    p.n_copies = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "low-bandwidth"), 1);
    const struct xp_finding *f = at_site(&r, 2);
    assert_int_equal(f->count, 4);
    assert_int_equal(f->bytes, 8 * MiB);
    assert_int_equal(f->time_ns, 32 * MS);
    assert_string_equal(text(f, "reference_gbps"), "10.486");
    assert_string_equal(text(f, "gbps"), "0.262");
    assert_string_equal(text(f, "run_share"), "0.032");
    assert_string_equal(text(f, "direction"), "H2D");
    assert_string_equal(text(f, "host_mem"), "pinned");
    char err[200];
    /* Fewer copies than the minimum, or too small a share of the run: nothing. */
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.min_count=5", err, sizeof err), 0);
    assert_int_equal(run(&r, "low-bandwidth"), 0);
    xp_thresholds_default(&r.th);
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.min_share=0.05", err, sizeof err), 0);
    assert_int_equal(run(&r, "low-bandwidth"), 0);
    xp_thresholds_default(&r.th);
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.fraction=0.02", err, sizeof err), 0);
    assert_int_equal(run(&r, "low-bandwidth"), 0);
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.fraction=0.3", err, sizeof err), 0);
    assert_int_equal(xp_thresholds_set(&r.th, "low-bandwidth.min_bytes=4M", err, sizeof err), 0);
    assert_int_equal(run(&r, "low-bandwidth"), 0);
    /* Copies sync-in-loop reports are not reported again. */
    xp_thresholds_default(&r.th);
    assert_int_equal(xp_thresholds_set(&r.th, "sync-in-loop.min_count=4", err, sizeof err), 0);
    report_free(&r);
    xp_report_forget_claims(&r);
    rule("sync-in-loop")->run(&r);
    size_t before = r.n_findings;
    assert_string_equal(at_site(&r, 2)->rule, "sync-in-loop");
    rule("low-bandwidth")->run(&r);
    assert_int_equal(r.n_findings, before);
    report_free(&r);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_async_pageable),
        cmocka_unit_test(test_sync_in_loop),
        cmocka_unit_test(test_sync_in_loop_fix),
        cmocka_unit_test(test_sync_in_loop_bursts),
        cmocka_unit_test(test_sync_in_loop_sparse),
        cmocka_unit_test(test_sync_in_loop_new_content),
        cmocka_unit_test(test_sync_in_loop_results),
        cmocka_unit_test(test_sync_in_loop_outer_work),
        cmocka_unit_test(test_one_finding_per_copy),
        cmocka_unit_test(test_redundant_same_dst),
        cmocka_unit_test(test_redundant_site_repeats),
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_small_copies),
        cmocka_unit_test(test_low_bandwidth),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
