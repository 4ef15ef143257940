/* bench_rules.c: how long each report rule takes on a synthetic process of
 * 10 million copies (and 200,000 allocations), in nanoseconds per copy.
 * The report must finish on such a run in under a minute; the rules are
 * its part that grows with the data once the model is loaded.
 * Usage: bench_rules [COPIES] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xp_report.h"

static double xp_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Wall time is what a user waits; CPU time is steadier on a shared machine. */
static double xp_now(void)
{
    return xp_clock(CLOCK_MONOTONIC);
}

static double xp_cpu(void)
{
    return xp_clock(CLOCK_PROCESS_CPUTIME_ID);
}

/* A deterministic generator, so runs compare. */
static uint64_t xp_rand(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A training loop's mixture: uploads of batches (pinned async, some pageable),
 * repeated weights, small parameter copies, synchronous reads of results,
 * over 2000 call sites; kernels launched between iterations. */
static void xp_fill(struct xp_process *p, size_t n, size_t nallocs)
{
    static char *apis[] = {"cudaMemcpy", "cudaMemcpyAsync", "cudaMalloc"};
    uint64_t seed = 0x9E3779B97F4A7C15u;
    p->api_names = apis;
    p->n_api = 3;
    p->copies = calloc(n, sizeof *p->copies);
    p->call_sites = calloc(n, sizeof *p->call_sites); /* one per copy: each draws its own */
    p->n_call_sites = n;
    p->allocs = calloc(nallocs, sizeof *p->allocs);
    if (!p->copies || !p->call_sites || !p->allocs) {
        fprintf(stderr, "bench_rules: out of memory\n");
        exit(1);
    }
    p->n_copies = n;
    p->n_allocs = nallocs;
    p->start_mono_ns = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = xp_rand(&seed);
        struct xp_copy *c = &p->copies[i];
        struct xp_call_site *s = &p->call_sites[i];
        c->cs = s;
        c->start_ns = (int64_t)i * 1000;
        s->stack_id = 1 + (uint32_t)(r % 2000);
        s->direction = (r >> 12) % 4 ? 1 : 2;
        s->host_mem = (r >> 14) % 3 ? 2 : 1;
        s->blocking = (uint8_t)(1 + (r >> 16) % 3);
        c->bytes = (r >> 18) % 4 ? 1 + (r >> 20) % 4096 : (UINT64_C(1) << 20) << ((r >> 22) % 4);
        c->dur_ns = (int64_t)(c->bytes / 10 + 2000 + (r >> 24) % 5000);
        c->kernel_seq = i / 50;
        c->dst = 0x700000000000 + ((r >> 30) % 100000) * 4096;
        c->src = 0x500000000000 + i * 64;
        c->fp_kind = c->bytes > 65536 ? 2 : 1;
        c->fingerprint = (r >> 40) % 3 ? xp_rand(&seed) : (r >> 45) % 1000;
        s->stream = (r >> 50) % 4;
        s->api = s->blocking == 1 ? 0 : 1;
    }
    for (size_t i = 0; i < nallocs; i++) {
        uint64_t r = xp_rand(&seed);
        struct xp_alloc *a = &p->allocs[i];
        a->alloc_ns = (int64_t)(i * (n * 1000 / nallocs));
        a->free_ns = (r % 10) ? a->alloc_ns + (int64_t)((r >> 8) % 1000000000) : -1;
        a->ptr = 0x700000000000 + (uint64_t)i * (UINT64_C(1) << 21);
        a->bytes = 512 + (r >> 20) % (UINT64_C(4) << 20);
        a->alloc_stack = 1 + (uint32_t)((r >> 40) % 500);
        a->kind = (r >> 50) % 8 ? XP_AK_DEVICE : XP_AK_PINNED;
        a->api = 2;
    }
    p->end_mono_ns = (int64_t)n * 1000;
    static struct xp_error errors[16];
    for (size_t i = 0; i < 16; i++)
        errors[i] = (struct xp_error){.start_ns = (int64_t)(i + 1) * (int64_t)n * 60, .status = 2,
                                      .record = "alloc", .requested = UINT64_C(1) << 30,
                                      .dev_free = INT64_C(1) << 31, .dev_total = INT64_C(16) << 30};
    p->errors = errors;
    p->n_errors = 16;
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000;
    if (!n)
        n = 1;
    struct xp_process p = {.label = "bench", .rank = -1};
    double t0 = xp_now();
    xp_fill(&p, n, 200000);
    printf("model: %zu copies, %zu allocations built in %.2f s\n", p.n_copies, p.n_allocs, xp_now() - t0);
    struct xp_report r = {.procs = &p, .n_procs = 1};
    xp_thresholds_default(&r.th);
    double total = 0, total_cpu = 0;
    printf("%-18s %12s %10s %10s %8s\n", "rule", "ns/copy", "wall s", "cpu s", "findings");
    for (size_t i = 0; i < xp_nrules; i++) {
        size_t before = r.n_findings;
        double t = xp_now(), c = xp_cpu();
        xp_rules[i].run(&r);
        double dt = xp_now() - t, dc = xp_cpu() - c;
        total += dt;
        total_cpu += dc;
        printf("%-18s %12.1f %10.3f %10.3f %8zu\n", xp_rules[i].id, dt * 1e9 / (double)n, dt, dc,
               r.n_findings - before);
    }
    printf("%-18s %12.1f %10.3f %10.3f\n", "all rules", total * 1e9 / (double)n, total, total_cpu);
    return 0;
}
