/* test_sim_stream.c: unit tests of the simulator's execution engine (streams, events, lanes, legacy-stream ordering, sticky errors). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "xpsim_stream.h"
#include "xpsim_time.h"

#define MS 1000000ull

/* Wall-clock checks are lower bounds only (machines are noisy); a 1% slack
 * covers rounding of the float milliseconds. */
#define AT_LEAST(ns) ((uint64_t)((double)(ns) * 0.99))

/* run() is called at the start of a work's modeled window, so the gap between
 * two run() calls is a lower bound on how long the later start was held back.
 * A run() is called a little after its modeled start; when the earlier one
 * was late (the worker was preempted), the observed gap shrinks by that much,
 * hence the 10%. */
#define GAP_AT_LEAST(ns) ((uint64_t)((double)(ns) * 0.9))

/* ---- probes: work items that record when and in which order they start --- */

#define NOT_RUN (-1)

typedef struct probe {
    char tag;
    atomic_int runs;
    atomic_int releases;
    _Atomic uint64_t ran_at;   /* when run() was called: (about) the modeled start */
    CUstream watch;            /* when set, run() queries this stream ... */
    atomic_int watch_seen;     /* ... and keeps the result here (NOT_RUN before) */
} probe;

static pthread_mutex_t g_order_mu = PTHREAD_MUTEX_INITIALIZER;
static char g_order[256];   /* the tags, in the order the work started */
static size_t g_norder;

static void order_reset(void)
{
    pthread_mutex_lock(&g_order_mu);
    g_norder = 0;
    g_order[0] = '\0';
    pthread_mutex_unlock(&g_order_mu);
}

static void assert_order(const char *expected)
{
    char got[sizeof g_order];
    pthread_mutex_lock(&g_order_mu);
    memcpy(got, g_order, g_norder);
    got[g_norder] = '\0';
    pthread_mutex_unlock(&g_order_mu);
    assert_string_equal(got, expected);
}

static void probe_run(void *ctx)
{
    probe *p = ctx;
    atomic_store(&p->ran_at, xpsim_now_ns());
    if (p->watch)
        atomic_store(&p->watch_seen, (int)xpsim_stream_query(p->watch));
    pthread_mutex_lock(&g_order_mu);
    if (g_norder + 1 < sizeof g_order)
        g_order[g_norder++] = p->tag;
    pthread_mutex_unlock(&g_order_mu);
    atomic_fetch_add(&p->runs, 1);   /* last: wait_started() sees all of the above */
}

static void probe_release(void *ctx)
{
    probe *p = ctx;
    atomic_fetch_add(&p->releases, 1);
}

static uint64_t submit_core(CUstream s, probe *p, char tag, uint64_t ns, xpsim_lane lane,
                            CUresult fault, CUstream watch)
{
    p->tag = tag;
    p->watch = watch;
    atomic_store(&p->watch_seen, NOT_RUN);
    atomic_store(&p->runs, 0);
    atomic_store(&p->releases, 0);
    atomic_store(&p->ran_at, 0);
    xpsim_work w = {
        .run = probe_run,
        .release = probe_release,
        .ctx = p,
        .duration_ns = ns,
        .lane = lane,
        .fault = fault,
        .what = "probe",
    };
    return xpsim_stream_enqueue(s, &w);
}

static uint64_t submit_full(CUstream s, probe *p, char tag, uint64_t ns, xpsim_lane lane,
                            CUresult fault)
{
    return submit_core(s, p, tag, ns, lane, fault, NULL);
}

static uint64_t submit(CUstream s, probe *p, char tag, uint64_t ns)
{
    return submit_full(s, p, tag, ns, XPSIM_LANE_NONE, CUDA_SUCCESS);
}

/* Like submit; run() also records xpsim_stream_query(watch) as it starts:
 * CUDA_SUCCESS proves watch's earlier work had completed by then,
 * CUDA_ERROR_NOT_READY that this work started while watch was still busy. */
static uint64_t submit_watch(CUstream s, probe *p, char tag, uint64_t ns, CUstream watch)
{
    return submit_core(s, p, tag, ns, XPSIM_LANE_NONE, CUDA_SUCCESS, watch);
}

/* Until p's run() has been called, i.e. its modeled window has begun. */
static void wait_started(probe *p)
{
    uint64_t give_up = xpsim_now_ns() + 2000 * MS;
    while (atomic_load(&p->runs) == 0 && xpsim_now_ns() < give_up)
        xpsim_sleep_until(xpsim_now_ns() + 20000);
    assert_int_equal(atomic_load(&p->runs), 1);
}

/* b started (ran) at least dur_a after a did. */
static void assert_started_after(const probe *a, const probe *b, uint64_t dur_a)
{
    uint64_t ta = atomic_load(&a->ran_at), tb = atomic_load(&b->ran_at);
    assert_true(ta != 0 && tb != 0);
    assert_true(tb >= ta);
    assert_true(tb - ta >= GAP_AT_LEAST(dur_a));
}

static CUstream legacy(int device)
{
    CUstream s = NULL;
    assert_int_equal(xpsim_stream_resolve(NULL, false, device, &s), CUDA_SUCCESS);
    assert_non_null(s);
    return s;
}

static CUstream per_thread(int device)
{
    CUstream s = NULL;
    assert_int_equal(xpsim_stream_resolve(NULL, true, device, &s), CUDA_SUCCESS);
    assert_non_null(s);
    return s;
}

static int group_setup(void **state)
{
    (void)state;
    xpsim_streams_init(2);
    xpsim_streams_init(2);   /* cuInit may be called again: harmless */
    return 0;
}

/* The sticky-error tests break device 1 on purpose: whatever happened, it is
 * healthy again for the tests after them. */
static int reset_device1(void **state)
{
    (void)state;
    xpsim_device_reset(1);
    return 0;
}

/* ---- time ---------------------------------------------------------------- */

static void test_sleep_until(void **state)
{
    (void)state;
    uint64_t t0 = xpsim_now_ns();
    xpsim_sleep_until(t0 - 1);   /* in the past: returns at once */
    xpsim_sleep_until(0);
    uint64_t deadline = xpsim_now_ns() + 3 * MS;
    xpsim_sleep_until(deadline);
    assert_true(xpsim_now_ns() >= deadline);
    deadline = xpsim_now_ns() + 20000;   /* inside the spin window */
    xpsim_sleep_until(deadline);
    assert_true(xpsim_now_ns() >= deadline);
}

/* ---- one stream ------------------------------------------------------------ */

static void test_in_order_and_tickets(void **state)
{
    (void)state;
    CUstream s = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(s);
    probe p[5];
    memset(p, 0, sizeof p);
    order_reset();
    /* Decreasing durations: 10, 8, 6, 4, 2 ms.  Each item starts only once
     * the one before it has completed, so the last one starts at least
     * 10 + 8 + 6 + 4 ms after the first; run concurrently, they would all
     * start at once. */
    for (int i = 0; i < 5; i++)
        assert_int_equal(submit(s, &p[i], (char)('a' + i), (uint64_t)(10 - 2 * i) * MS),
                         (uint64_t)i + 1);
    assert_int_equal(xpsim_stream_synchronize(s), CUDA_SUCCESS);
    assert_order("abcde");
    for (int i = 1; i < 5; i++)
        assert_true(atomic_load(&p[i].ran_at) >= atomic_load(&p[i - 1].ran_at));
    assert_started_after(&p[0], &p[4], 28 * MS);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(atomic_load(&p[i].runs), 1);
        assert_int_equal(atomic_load(&p[i].releases), 1);   /* released before sync returns */
    }
    /* A work without run or release is fine too. */
    xpsim_work bare = { .duration_ns = 1 * MS, .what = "bare" };
    assert_int_equal(xpsim_stream_enqueue(s, &bare), 6);
    assert_int_equal(xpsim_stream_synchronize(s), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(s), CUDA_SUCCESS);
}

static void test_query_sync_wait_ticket(void **state)
{
    (void)state;
    CUstream s = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(s);
    probe p;
    memset(&p, 0, sizeof p);
    assert_int_equal(xpsim_stream_query(s), CUDA_SUCCESS);   /* empty */

    /* Completion is published only at the modeled end: not ready right after
     * the enqueue, and synchronize waits out the whole duration. */
    uint64_t t0 = xpsim_now_ns();
    submit(s, &p, 'x', 50 * MS);
    assert_int_equal(xpsim_stream_query(s), CUDA_ERROR_NOT_READY);
    assert_int_equal(atomic_load(&p.releases), 0);   /* ctx stays alive until complete */
    assert_int_equal(xpsim_stream_synchronize(s), CUDA_SUCCESS);
    uint64_t t1 = xpsim_now_ns();
    assert_true(t1 - t0 >= AT_LEAST(50 * MS));
    assert_int_equal(xpsim_stream_query(s), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&p.runs), 1);
    assert_int_equal(atomic_load(&p.releases), 1);
    /* run() is called at the start of the window, not at its end: the
     * duration still had (about) all of it to go.  Half of it, for noise. */
    assert_true(atomic_load(&p.ran_at) >= t0);
    assert_true(t1 - atomic_load(&p.ran_at) >= 25 * MS);

    /* A ticket's wait covers the modeled duration too. */
    t0 = xpsim_now_ns();
    uint64_t t = submit(s, &p, 'y', 30 * MS);
    assert_int_equal(xpsim_stream_query(s), CUDA_ERROR_NOT_READY);
    xpsim_stream_wait_ticket(s, t);
    assert_true(xpsim_now_ns() - t0 >= AT_LEAST(30 * MS));
    assert_int_equal(xpsim_stream_query(s), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&p.runs), 1);
    assert_int_equal(atomic_load(&p.releases), 1);   /* released before the wait returns */
    xpsim_stream_wait_ticket(s, t + 100);   /* never issued: must not hang */
    assert_int_equal(xpsim_stream_destroy(s), CUDA_SUCCESS);
}

/* ---- legacy default stream ordering --------------------------------------- */

static void test_legacy_stream_semantics(void **state)
{
    (void)state;
    CUstream L = legacy(0);
    CUstream B = xpsim_stream_create(0, CU_STREAM_DEFAULT, 0);
    CUstream B2 = xpsim_stream_create(0, CU_STREAM_DEFAULT, 0);
    CUstream N = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    CUstream P = per_thread(0);
    assert_non_null(B);
    assert_non_null(B2);
    assert_non_null(N);
    probe a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);

    /* "Waits" below: b starts only after a has completed (a's stream is idle
     * when b starts, and b started a's duration after a); "does not wait": b
     * starts, and completes, while a is still in its window. */

    /* Legacy work waits for earlier work of a blocking stream. */
    order_reset();
    submit(B, &a, 'B', 50 * MS);
    submit_watch(L, &b, 'l', 1 * MS, B);
    assert_int_equal(xpsim_stream_synchronize(L), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(B), CUDA_SUCCESS);
    assert_order("Bl");
    assert_started_after(&a, &b, 50 * MS);
    assert_int_equal(xpsim_device_synchronize(0), CUDA_SUCCESS);

    /* Blocking-stream work waits for earlier legacy work. */
    order_reset();
    submit(L, &a, 'L', 50 * MS);
    submit_watch(B, &b, 'b', 1 * MS, L);
    assert_int_equal(xpsim_stream_synchronize(B), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(L), CUDA_SUCCESS);
    assert_order("Lb");
    assert_started_after(&a, &b, 50 * MS);
    assert_int_equal(xpsim_device_synchronize(0), CUDA_SUCCESS);

    /* A non-blocking stream does not wait for the legacy stream ... */
    submit(L, &a, 'L', 80 * MS);
    submit_watch(N, &b, 'n', 1 * MS, L);
    assert_int_equal(xpsim_stream_synchronize(N), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_query(L), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(L), CUDA_SUCCESS);

    /* ... nor the legacy stream for it. */
    submit(N, &a, 'N', 80 * MS);
    submit_watch(L, &b, 'l', 1 * MS, N);
    assert_int_equal(xpsim_stream_synchronize(L), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_query(N), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(N), CUDA_SUCCESS);

    /* The per-thread default stream is blocking with respect to legacy ... */
    order_reset();
    submit(P, &a, 'P', 50 * MS);
    submit_watch(L, &b, 'l', 1 * MS, P);
    assert_int_equal(xpsim_stream_synchronize(L), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_SUCCESS);
    assert_order("Pl");
    assert_started_after(&a, &b, 50 * MS);
    order_reset();
    submit(L, &a, 'L', 50 * MS);
    submit_watch(P, &b, 'p', 1 * MS, L);
    assert_int_equal(xpsim_stream_synchronize(P), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_SUCCESS);
    assert_order("Lp");
    assert_started_after(&a, &b, 50 * MS);

    /* ... but does not synchronize with other streams, and two blocking
     * streams do not synchronize with each other. */
    submit(B, &a, 'B', 80 * MS);
    submit_watch(P, &b, 'p', 1 * MS, B);
    assert_int_equal(xpsim_stream_synchronize(P), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_query(B), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(B), CUDA_SUCCESS);
    submit(B, &a, 'B', 80 * MS);
    submit_watch(B2, &b, 'c', 1 * MS, B);
    assert_int_equal(xpsim_stream_synchronize(B2), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_query(B), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(B), CUDA_SUCCESS);

    /* The legacy stream of device 1 does not wait for device 0's streams. */
    submit(B, &a, 'B', 80 * MS);
    submit_watch(legacy(1), &b, 'l', 1 * MS, B);
    assert_int_equal(xpsim_stream_synchronize(legacy(1)), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_query(B), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(B), CUDA_SUCCESS);

    assert_int_equal(xpsim_stream_destroy(B), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(B2), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(N), CUDA_SUCCESS);
}

/* ---- copy-engine lanes ----------------------------------------------------- */

static void test_lanes(void **state)
{
    (void)state;
    CUstream A = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    CUstream B = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    CUstream C = xpsim_stream_create(1, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(A);
    assert_non_null(B);
    assert_non_null(C);
    probe a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);

    /* Same lane, same device: one after the other.  A is let start first,
     * so it holds the engine; b's window (and its run) begins only when A's
     * ends, and both take 80 + 20 ms in all. */
    order_reset();
    uint64_t t0 = xpsim_now_ns();
    submit_full(A, &a, 'A', 80 * MS, XPSIM_LANE_H2D, CUDA_SUCCESS);
    wait_started(&a);
    submit_full(B, &b, 'b', 20 * MS, XPSIM_LANE_H2D, CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_synchronize(B), CUDA_SUCCESS);
    assert_true(xpsim_now_ns() - t0 >= AT_LEAST(100 * MS));
    assert_int_equal(xpsim_stream_synchronize(A), CUDA_SUCCESS);
    assert_order("Ab");
    assert_started_after(&a, &b, 80 * MS);

    /* In each case below A (80 ms) has started first and b (20 ms) then
     * runs beside it: b completes while A is still busy.  Serialized, b
     * would complete 20 ms after A. */

    /* Lane NONE overlaps. */
    submit_full(A, &a, 'A', 80 * MS, XPSIM_LANE_NONE, CUDA_SUCCESS);
    wait_started(&a);
    submit_full(B, &b, 'b', 20 * MS, XPSIM_LANE_NONE, CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_synchronize(B), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(A), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(A), CUDA_SUCCESS);

    /* Different directions are different engines. */
    submit_full(A, &a, 'A', 80 * MS, XPSIM_LANE_H2D, CUDA_SUCCESS);
    wait_started(&a);
    submit_full(B, &b, 'b', 20 * MS, XPSIM_LANE_D2H, CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_synchronize(B), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(A), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(A), CUDA_SUCCESS);

    /* Different devices have their own engines. */
    submit_full(A, &a, 'A', 80 * MS, XPSIM_LANE_H2D, CUDA_SUCCESS);
    wait_started(&a);
    submit_full(C, &b, 'b', 20 * MS, XPSIM_LANE_H2D, CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_synchronize(C), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(A), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(A), CUDA_SUCCESS);

    assert_int_equal(xpsim_stream_destroy(A), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(B), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(C), CUDA_SUCCESS);
}

/* ---- events ---------------------------------------------------------------- */

static void test_events(void **state)
{
    (void)state;
    CUstream S = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    CUstream S2 = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(S);
    assert_non_null(S2);
    CUevent e1 = xpsim_event_create(CU_EVENT_DEFAULT);
    CUevent e2 = xpsim_event_create(CU_EVENT_BLOCKING_SYNC);
    CUevent fresh = xpsim_event_create(CU_EVENT_DEFAULT);
    CUevent untimed = xpsim_event_create(CU_EVENT_DISABLE_TIMING);
    assert_non_null(e1);
    assert_non_null(e2);
    assert_non_null(fresh);
    assert_non_null(untimed);
    assert_true(xpsim_event_valid(e1));
    assert_false(xpsim_event_valid((CUevent)0x1234));
    assert_false(xpsim_event_valid(NULL));
    probe p;
    memset(&p, 0, sizeof p);
    float ms = -1.0f;

    /* Elapsed time covers the modeled duration of the work in between. */
    uint64_t t0 = xpsim_now_ns();
    assert_int_equal(xpsim_event_record(e1, S), CUDA_SUCCESS);
    submit(S, &p, 'w', 50 * MS);
    assert_int_equal(xpsim_event_record(e2, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_query(e2), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_event_elapsed(&ms, e1, e2), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_event_synchronize(e2), CUDA_SUCCESS);
    /* The event completes after the work: S is idle, the window is over. */
    assert_true(xpsim_now_ns() - t0 >= AT_LEAST(50 * MS));
    assert_int_equal(xpsim_stream_query(S), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&p.runs), 1);
    assert_int_equal(atomic_load(&p.releases), 1);
    assert_int_equal(xpsim_event_query(e2), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_query(e1), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_elapsed(&ms, e1, e2), CUDA_SUCCESS);
    assert_true(ms >= 50.0f * 0.99f);
    assert_int_equal(xpsim_event_elapsed(&ms, e2, e1), CUDA_SUCCESS);
    assert_true(ms <= -50.0f * 0.99f);
    assert_int_equal(xpsim_event_elapsed(NULL, e1, e2), CUDA_ERROR_INVALID_VALUE);

    /* Never recorded: query succeeds, elapsed refuses. */
    assert_int_equal(xpsim_event_query(fresh), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_synchronize(fresh), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_elapsed(&ms, e1, fresh), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_event_elapsed(&ms, fresh, e1), CUDA_ERROR_INVALID_HANDLE);

    /* Timing disabled: elapsed refuses even when complete. */
    assert_int_equal(xpsim_event_record(untimed, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_synchronize(untimed), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_elapsed(&ms, e1, untimed), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_event_elapsed(&ms, untimed, e1), CUDA_ERROR_INVALID_HANDLE);

    /* Unknown handles. */
    assert_int_equal(xpsim_event_query((CUevent)0x1234), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_event_elapsed(&ms, (CUevent)0x1234, e1), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_event_record((CUevent)0x1234, S), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_event_destroy((CUevent)0x1234), CUDA_ERROR_INVALID_HANDLE);

    /* Re-recording replaces the capture: e1 now waits only for idle S. */
    submit(S2, &p, 'x', 60 * MS);
    assert_int_equal(xpsim_event_record(e1, S2), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_record(e1, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_synchronize(e1), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(S2), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(S2), CUDA_SUCCESS);

    /* An event recorded on the legacy stream also covers blocking streams. */
    CUstream B = xpsim_stream_create(0, CU_STREAM_DEFAULT, 0);
    assert_non_null(B);
    t0 = xpsim_now_ns();
    submit(B, &p, 'b', 50 * MS);
    assert_int_equal(xpsim_event_record(e2, legacy(0)), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_synchronize(e2), CUDA_SUCCESS);
    assert_true(xpsim_now_ns() - t0 >= AT_LEAST(50 * MS));
    assert_int_equal(xpsim_stream_query(B), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&p.releases), 1);
    assert_int_equal(xpsim_stream_destroy(B), CUDA_SUCCESS);

    /* Destroying an event whose capture is pending is allowed. */
    CUevent gone = xpsim_event_create(CU_EVENT_DEFAULT);
    assert_non_null(gone);
    submit(S, &p, 'y', 30 * MS);
    assert_int_equal(xpsim_event_record(gone, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(gone), CUDA_SUCCESS);
    assert_false(xpsim_event_valid(gone));
    assert_int_equal(xpsim_event_destroy(gone), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_stream_synchronize(S), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&p.runs), 1);
    assert_int_equal(atomic_load(&p.releases), 1);

    /* An event may outlive the stream it was recorded on. */
    CUstream T = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(T);
    t0 = xpsim_now_ns();
    submit(T, &p, 't', 40 * MS);
    assert_int_equal(xpsim_event_record(e2, T), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(T), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_query(e2), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_event_synchronize(e2), CUDA_SUCCESS);
    assert_true(xpsim_now_ns() - t0 >= AT_LEAST(40 * MS));
    assert_int_equal(atomic_load(&p.runs), 1);
    assert_int_equal(atomic_load(&p.releases), 1);
    assert_int_equal(xpsim_event_query(e2), CUDA_SUCCESS);

    assert_int_equal(xpsim_event_destroy(e1), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(e2), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(fresh), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(untimed), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(S), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(S2), CUDA_SUCCESS);
}

static void test_stream_wait_event(void **state)
{
    (void)state;
    CUstream A = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    CUstream Bs = xpsim_stream_create(1, CU_STREAM_NON_BLOCKING, 0);   /* across devices too */
    assert_non_null(A);
    assert_non_null(Bs);
    CUevent ev = xpsim_event_create(CU_EVENT_DISABLE_TIMING);
    CUevent never = xpsim_event_create(CU_EVENT_DEFAULT);
    assert_non_null(ev);
    assert_non_null(never);
    probe a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);

    /* b starts only once a has completed. */
    order_reset();
    submit(A, &a, 'a', 60 * MS);
    assert_int_equal(xpsim_event_record(ev, A), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_wait_event(Bs, ev), CUDA_SUCCESS);
    submit_watch(Bs, &b, 'b', 1 * MS, A);
    assert_int_equal(xpsim_stream_synchronize(Bs), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(A), CUDA_SUCCESS);
    assert_order("ab");
    assert_started_after(&a, &b, 60 * MS);

    /* The wait binds the capture at call time: work recorded on A later is
     * not waited for. */
    assert_int_equal(xpsim_event_record(ev, A), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_wait_event(Bs, ev), CUDA_SUCCESS);
    submit(A, &a, 'A', 80 * MS);
    assert_int_equal(xpsim_event_record(ev, A), CUDA_SUCCESS);
    submit_watch(Bs, &b, 'b', 1 * MS, A);
    assert_int_equal(xpsim_stream_synchronize(Bs), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_query(A), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(A), CUDA_SUCCESS);

    /* Never recorded: no-op. */
    submit(A, &a, 'A', 80 * MS);
    assert_int_equal(xpsim_stream_wait_event(Bs, never), CUDA_SUCCESS);
    submit_watch(Bs, &b, 'b', 1 * MS, A);
    assert_int_equal(xpsim_stream_synchronize(Bs), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.watch_seen), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_query(A), CUDA_ERROR_NOT_READY);
    assert_int_equal(xpsim_stream_synchronize(A), CUDA_SUCCESS);

    assert_int_equal(xpsim_stream_wait_event(Bs, (CUevent)0x1234), CUDA_ERROR_INVALID_HANDLE);

    assert_int_equal(xpsim_event_destroy(ev), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(never), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(A), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(Bs), CUDA_SUCCESS);
}

/* ---- sticky errors --------------------------------------------------------- */

static void test_sticky_error(void **state)
{
    (void)state;
    CUstream S = xpsim_stream_create(1, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(S);
    CUevent ev = xpsim_event_create(CU_EVENT_DEFAULT);
    assert_non_null(ev);
    probe p1, p2, p3, p4, p5;
    memset(&p1, 0, sizeof p1);
    memset(&p2, 0, sizeof p2);
    memset(&p3, 0, sizeof p3);
    memset(&p4, 0, sizeof p4);
    memset(&p5, 0, sizeof p5);

    assert_int_equal(xpsim_device_sticky_error(1), CUDA_SUCCESS);
    submit(S, &p1, '1', 5 * MS);
    submit_full(S, &p2, '2', 5 * MS, XPSIM_LANE_NONE, CUDA_ERROR_ILLEGAL_ADDRESS);
    submit(S, &p3, '3', 5 * MS);
    assert_int_equal(xpsim_stream_synchronize(S), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(atomic_load(&p1.runs), 1);
    assert_int_equal(atomic_load(&p2.runs), 1);   /* the faulting work itself executed */
    assert_int_equal(atomic_load(&p3.runs), 0);   /* later work does not */
    assert_int_equal(atomic_load(&p2.releases), 1);
    assert_int_equal(atomic_load(&p3.releases), 1);
    assert_int_equal(xpsim_stream_query(S), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(xpsim_device_synchronize(1), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(xpsim_device_sticky_error(1), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(xpsim_device_sticky_error(0), CUDA_SUCCESS);   /* per device */

    /* Other streams of the device are affected; the first fault wins. */
    submit(legacy(1), &p4, '4', 1 * MS);
    submit_full(legacy(1), &p5, '5', 1 * MS, XPSIM_LANE_NONE, CUDA_ERROR_LAUNCH_FAILED);
    assert_int_equal(xpsim_stream_synchronize(legacy(1)), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(atomic_load(&p4.runs), 0);
    assert_int_equal(atomic_load(&p5.runs), 0);
    assert_int_equal(atomic_load(&p5.releases), 1);
    assert_int_equal(xpsim_event_record(ev, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_synchronize(ev), CUDA_ERROR_ILLEGAL_ADDRESS);

    /* Reset clears it; work runs again. */
    xpsim_device_reset(1);
    assert_int_equal(xpsim_device_sticky_error(1), CUDA_SUCCESS);
    submit(S, &p1, '6', 1 * MS);
    assert_int_equal(xpsim_stream_synchronize(S), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&p1.runs), 1);
    assert_int_equal(xpsim_stream_query(S), CUDA_SUCCESS);
    assert_int_equal(xpsim_device_synchronize(1), CUDA_SUCCESS);

    assert_int_equal(xpsim_event_destroy(ev), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(S), CUDA_SUCCESS);
}

/* cuEventQuery reports the context's sticky error, whether or not the
 * event's work has completed; per device, and not for a never-recorded
 * event. */
static void test_event_query_sticky_error(void **state)
{
    (void)state;
    CUstream S = xpsim_stream_create(1, CU_STREAM_NON_BLOCKING, 0);
    CUstream S0 = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(S);
    assert_non_null(S0);
    CUevent before = xpsim_event_create(CU_EVENT_DEFAULT);
    CUevent after = xpsim_event_create(CU_EVENT_DEFAULT);
    CUevent pending = xpsim_event_create(CU_EVENT_DEFAULT);
    CUevent other = xpsim_event_create(CU_EVENT_DEFAULT);
    CUevent fresh = xpsim_event_create(CU_EVENT_DEFAULT);
    assert_non_null(before);
    assert_non_null(after);
    assert_non_null(pending);
    assert_non_null(other);
    assert_non_null(fresh);
    probe f, w;
    memset(&f, 0, sizeof f);
    memset(&w, 0, sizeof w);

    assert_int_equal(xpsim_device_sticky_error(1), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_record(before, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_synchronize(before), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_query(before), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_record(other, S0), CUDA_SUCCESS);   /* device 0 */
    assert_int_equal(xpsim_event_synchronize(other), CUDA_SUCCESS);

    submit_full(S, &f, 'f', 1 * MS, XPSIM_LANE_NONE, CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(xpsim_event_record(after, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_synchronize(after), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(xpsim_event_query(after), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(xpsim_event_query(before), CUDA_ERROR_ILLEGAL_ADDRESS);   /* completed earlier */
    assert_int_equal(xpsim_event_query(other), CUDA_SUCCESS);   /* another device */
    assert_int_equal(xpsim_event_query(fresh), CUDA_SUCCESS);   /* never recorded */

    /* Work still pending (skipped, but it keeps its modeled duration): the
     * error, not CUDA_ERROR_NOT_READY. */
    submit(S, &w, 'w', 50 * MS);
    assert_int_equal(xpsim_event_record(pending, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_query(pending), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(xpsim_stream_synchronize(S), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(atomic_load(&w.runs), 0);

    /* An event outlives its stream and still reports its device's error. */
    assert_int_equal(xpsim_stream_destroy(S), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_query(after), CUDA_ERROR_ILLEGAL_ADDRESS);

    /* Reset clears it for the events too. */
    xpsim_device_reset(1);
    assert_int_equal(xpsim_event_query(after), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_query(before), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_query(pending), CUDA_SUCCESS);

    assert_int_equal(xpsim_event_destroy(before), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(after), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(pending), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(other), CUDA_SUCCESS);
    assert_int_equal(xpsim_event_destroy(fresh), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(S0), CUDA_SUCCESS);
}

/* ---- handles and lifetime --------------------------------------------------- */

static void test_destroy_with_pending_work(void **state)
{
    (void)state;
    static probe p;   /* static: outlives the destroyed stream's handle */
    CUstream S = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(S);
    CUevent ev = xpsim_event_create(CU_EVENT_DEFAULT);
    assert_non_null(ev);
    uint64_t t0 = xpsim_now_ns();
    submit(S, &p, 'd', 40 * MS);
    assert_int_equal(xpsim_event_record(ev, S), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(S), CUDA_SUCCESS);
    CUstream out = (CUstream)0x99;
    assert_int_equal(xpsim_stream_resolve(S, false, 0, &out), CUDA_ERROR_INVALID_HANDLE);
    assert_ptr_equal(out, (CUstream)0x99);
    assert_int_equal(xpsim_stream_destroy(S), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_event_query(ev), CUDA_ERROR_NOT_READY);   /* still pending */
    assert_int_equal(atomic_load(&p.releases), 0);
    assert_int_equal(xpsim_device_synchronize(0), CUDA_SUCCESS);   /* still waits for it */
    assert_true(xpsim_now_ns() - t0 >= AT_LEAST(40 * MS));
    assert_int_equal(xpsim_event_query(ev), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&p.runs), 1);
    assert_int_equal(atomic_load(&p.releases), 1);
    assert_int_equal(xpsim_event_destroy(ev), CUDA_SUCCESS);

    /* Created and destroyed without any work. */
    CUstream idle = xpsim_stream_create(0, CU_STREAM_DEFAULT, 0);
    assert_non_null(idle);
    assert_int_equal(xpsim_stream_destroy(idle), CUDA_SUCCESS);

    /* Default streams cannot be destroyed. */
    assert_int_equal(xpsim_stream_destroy(legacy(0)), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_stream_destroy(per_thread(0)), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_stream_destroy(CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_stream_destroy(CU_STREAM_PER_THREAD), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_stream_destroy(NULL), CUDA_ERROR_INVALID_HANDLE);
}

static void test_resolve(void **state)
{
    (void)state;
    CUstream out = (CUstream)0x99;
    assert_int_equal(xpsim_stream_resolve((CUstream)0x1234, false, 0, &out), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_stream_resolve((CUstream)0x1234, true, 0, &out), CUDA_ERROR_INVALID_HANDLE);
    assert_ptr_equal(out, (CUstream)0x99);
    /* The legacy and per-thread handles need a valid device. */
    assert_int_equal(xpsim_stream_resolve(NULL, false, 2, &out), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(xpsim_stream_resolve(CU_STREAM_PER_THREAD, false, -1, &out),
                     CUDA_ERROR_INVALID_HANDLE);
    assert_ptr_equal(out, (CUstream)0x99);

    CUstream l0 = legacy(0), l1 = legacy(1);
    assert_ptr_not_equal(l0, l1);
    assert_int_equal(xpsim_stream_resolve(CU_STREAM_LEGACY, true, 0, &out), CUDA_SUCCESS);
    assert_ptr_equal(out, l0);
    assert_true(xpsim_stream_is_default(l0));
    assert_int_equal(xpsim_stream_device(l0), 0);
    assert_int_equal(xpsim_stream_device(l1), 1);
    assert_int_equal(xpsim_stream_flags(l0), CU_STREAM_DEFAULT);
    /* The engine pointers of default streams are not API handles. */
    assert_int_equal(xpsim_stream_resolve(l0, false, 0, &out), CUDA_ERROR_INVALID_HANDLE);

    CUstream s = xpsim_stream_create(1, CU_STREAM_NON_BLOCKING, -1);
    assert_non_null(s);
    assert_int_equal(xpsim_stream_resolve(s, true, 0, &out), CUDA_SUCCESS);
    assert_ptr_equal(out, s);
    assert_int_equal(xpsim_stream_device(s), 1);
    assert_int_equal(xpsim_stream_flags(s), CU_STREAM_NON_BLOCKING);
    assert_int_equal(xpsim_stream_priority(s), -1);
    assert_false(xpsim_stream_is_default(s));
    assert_int_equal(xpsim_stream_destroy(s), CUDA_SUCCESS);

    assert_null(xpsim_stream_create(2, 0, 0));
    assert_null(xpsim_stream_create(-1, 0, 0));
}

typedef struct thread_result {
    CUstream pt0;
    CUstream pt0_again;
} thread_result;

static probe g_thread_probe;

static void *thread_main(void *arg)
{
    thread_result *r = arg;
    if (xpsim_stream_resolve(NULL, true, 0, &r->pt0) != CUDA_SUCCESS)
        return NULL;
    if (xpsim_stream_resolve(CU_STREAM_PER_THREAD, false, 0, &r->pt0_again) != CUDA_SUCCESS)
        return NULL;
    /* Exits with work pending on its per-thread stream. */
    submit(r->pt0, &g_thread_probe, 't', 40 * MS);
    return NULL;
}

static void test_per_thread_streams(void **state)
{
    (void)state;
    CUstream mine = per_thread(0);
    CUstream out = NULL;
    assert_int_equal(xpsim_stream_resolve(CU_STREAM_PER_THREAD, false, 0, &out), CUDA_SUCCESS);
    assert_ptr_equal(out, mine);
    assert_ptr_equal(per_thread(0), mine);   /* stable */
    assert_ptr_not_equal(mine, legacy(0));
    assert_ptr_not_equal(per_thread(1), mine);
    assert_int_equal(xpsim_stream_device(per_thread(1)), 1);
    assert_true(xpsim_stream_is_default(mine));
    /* Without per_thread_default, NULL still means legacy. */
    assert_int_equal(xpsim_stream_resolve(NULL, false, 0, &out), CUDA_SUCCESS);
    assert_ptr_equal(out, legacy(0));

    thread_result r = { NULL, NULL };
    pthread_t th;
    uint64_t t0 = xpsim_now_ns();
    assert_int_equal(pthread_create(&th, NULL, thread_main, &r), 0);
    assert_int_equal(pthread_join(th, NULL), 0);
    assert_non_null(r.pt0);
    assert_ptr_equal(r.pt0, r.pt0_again);
    assert_ptr_not_equal(r.pt0, mine);
    /* The thread is gone; its stream's work still runs and is waited for. */
    assert_int_equal(xpsim_device_synchronize(0), CUDA_SUCCESS);
    assert_true(xpsim_now_ns() - t0 >= AT_LEAST(40 * MS));
    assert_int_equal(xpsim_stream_query(r.pt0), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&g_thread_probe.runs), 1);
    assert_int_equal(atomic_load(&g_thread_probe.releases), 1);
}

static void test_device_synchronize(void **state)
{
    (void)state;
    CUstream B = xpsim_stream_create(0, CU_STREAM_DEFAULT, 0);
    CUstream N = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    CUstream other = xpsim_stream_create(1, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(B);
    assert_non_null(N);
    assert_non_null(other);
    probe b, n, l, p, z;
    memset(&b, 0, sizeof b);
    memset(&n, 0, sizeof n);
    memset(&l, 0, sizeof l);
    memset(&p, 0, sizeof p);
    memset(&z, 0, sizeof z);

    uint64_t tz = xpsim_now_ns();
    submit(other, &z, 'z', 200 * MS);
    uint64_t t0 = xpsim_now_ns();
    submit(B, &b, 'b', 40 * MS);
    submit(N, &n, 'n', 60 * MS);
    submit(per_thread(0), &p, 'p', 50 * MS);
    submit(legacy(0), &l, 'l', 20 * MS);   /* after b and p: ends >= 70 ms */
    assert_int_equal(xpsim_device_synchronize(0), CUDA_SUCCESS);
    assert_true(xpsim_now_ns() - t0 >= AT_LEAST(70 * MS));
    /* Every stream of the device has completed: released, and idle. */
    assert_int_equal(xpsim_stream_query(B), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(N), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(per_thread(0)), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(legacy(0)), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&b.releases), 1);
    assert_int_equal(atomic_load(&n.releases), 1);
    assert_int_equal(atomic_load(&p.releases), 1);
    assert_int_equal(atomic_load(&l.releases), 1);
    /* Device 1 is not part of it. */
    assert_int_equal(xpsim_stream_query(other), CUDA_ERROR_NOT_READY);
    assert_int_equal(atomic_load(&z.releases), 0);
    assert_int_equal(xpsim_device_synchronize(1), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_query(other), CUDA_SUCCESS);
    assert_true(xpsim_now_ns() - tz >= AT_LEAST(200 * MS));
    assert_int_equal(atomic_load(&z.runs), 1);
    assert_int_equal(atomic_load(&z.releases), 1);

    assert_int_equal(xpsim_device_synchronize(2), CUDA_ERROR_INVALID_DEVICE);
    assert_int_equal(xpsim_stream_destroy(B), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(N), CUDA_SUCCESS);
    assert_int_equal(xpsim_stream_destroy(other), CUDA_SUCCESS);
}

/* Several host threads hammering shared streams: for the sanitizers. */
typedef struct hammer_arg {
    CUstream shared;
    atomic_int *released;
} hammer_arg;

static void count_release(void *ctx)
{
    atomic_fetch_add((atomic_int *)ctx, 1);
}

static void *hammer_main(void *arg)
{
    hammer_arg *h = arg;
    CUstream own = xpsim_stream_create(0, CU_STREAM_DEFAULT, 0);
    CUevent ev = xpsim_event_create(CU_EVENT_DEFAULT);
    CUstream pt = NULL;
    if (!own || !ev || xpsim_stream_resolve(NULL, true, 0, &pt) != CUDA_SUCCESS)
        return NULL;
    for (int i = 0; i < 40; i++) {
        xpsim_work w = { .release = count_release, .ctx = h->released, .duration_ns = 20000,
                         .lane = (xpsim_lane)(i % XPSIM_LANE_COUNT), .what = "hammer" };
        CUstream targets[4] = { own, h->shared, pt, NULL };
        CUstream t = targets[i % 4];
        if (!t)
            (void)xpsim_stream_resolve(CU_STREAM_LEGACY, false, 0, &t);
        xpsim_stream_enqueue(t, &w);
        (void)xpsim_event_record(ev, t);
        (void)xpsim_stream_wait_event(own, ev);
        (void)xpsim_event_query(ev);
        (void)xpsim_stream_query(h->shared);
    }
    (void)xpsim_event_synchronize(ev);
    (void)xpsim_event_destroy(ev);
    (void)xpsim_stream_destroy(own);   /* possibly with work still pending */
    return NULL;
}

static void test_concurrent_use(void **state)
{
    (void)state;
    CUstream shared = xpsim_stream_create(0, CU_STREAM_NON_BLOCKING, 0);
    assert_non_null(shared);
    atomic_int released = 0;
    hammer_arg h = { shared, &released };
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_create(&th[i], NULL, hammer_main, &h), 0);
    for (int i = 0; i < 4; i++)
        assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(xpsim_device_synchronize(0), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&released), 4 * 40);
    assert_int_equal(xpsim_stream_destroy(shared), CUDA_SUCCESS);
}

static void test_kernel_counter(void **state)
{
    (void)state;
    uint64_t before0 = xpsim_device_kernel_count(0);
    uint64_t before1 = xpsim_device_kernel_count(1);
    for (int i = 0; i < 3; i++)
        xpsim_device_count_kernel(1);
    assert_int_equal(xpsim_device_kernel_count(1), before1 + 3);
    assert_int_equal(xpsim_device_kernel_count(0), before0);
    xpsim_device_count_kernel(7);   /* no such device: ignored */
    assert_int_equal(xpsim_device_kernel_count(7), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sleep_until),
        cmocka_unit_test(test_in_order_and_tickets),
        cmocka_unit_test(test_query_sync_wait_ticket),
        cmocka_unit_test(test_legacy_stream_semantics),
        cmocka_unit_test(test_lanes),
        cmocka_unit_test(test_events),
        cmocka_unit_test(test_stream_wait_event),
        cmocka_unit_test_teardown(test_sticky_error, reset_device1),
        cmocka_unit_test_teardown(test_event_query_sticky_error, reset_device1),
        cmocka_unit_test(test_destroy_with_pending_work),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_per_thread_streams),
        cmocka_unit_test(test_device_synchronize),
        cmocka_unit_test(test_concurrent_use),
        cmocka_unit_test(test_kernel_counter),
    };
    return cmocka_run_group_tests(tests, group_setup, NULL);
}
