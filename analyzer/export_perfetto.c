/* export_perfetto.c: `xferprof export --format perfetto|perfetto-proto`, a run database
 * as a trace that Perfetto UI opens: Chrome trace-event JSON (export_trace_json.c) or
 * Perfetto's protobuf trace (export_perfetto_proto.c), from the same rows walked here;
 * docs/export.md says what each event is.
 *
 * One pass, streamed: every kind of event is its own query ordered by time,
 * and the queries are merged here (as a k-way merge), so the output is
 * sorted by ts and memory does not grow with the run.  Metadata events that
 * name a thread or a stream are written when the track is first used (with
 * that event's ts, which viewers ignore for metadata), which keeps the file
 * sorted without a first pass over every table. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export_trace.h"
#include "xp_cuda_status.h"
#include "xp_progress.h"
#include "xp_render.h"
#include "xp_schema.h"

/* ---- the sources ------------------------------------------------------- */

typedef void (*xp_emit_fn)(struct xp_pf *pf, sqlite3_stmt *st);

/* One kind of event: a query ordered by (ts, dur descending) whose column
 * ts_col is the event's time in ns and dur_col its duration (-1: none; the
 * event sorts after slices that start at the same time). */
struct xp_src {
    const char *sql;
    int ts_col, dur_col;
    xp_emit_fn emit;
    sqlite3_stmt *st;
    bool has;
    int64_t ts, sortdur;
};

/* Where a query's columns are, for the two kinds of operation that can be
 * async on a stream (copies, memsets); -1: the kind has no such column. */
struct xp_opcols {
    const char *cat;
    uint64_t flow_tag;       /* the flow ids of this kind: 2 * id + flow_tag */
    int api, dir, bytes, value, hostmem, blocking, stream, device, tid, start, dur, status,
        fp, fpkind, id, stack, layer;
};

/* "status" from column i and, for a failure whose code the layer (column
 * layer_col) names, "status_name" (cudaErrorInvalidValue, CUDA_ERROR_...).
 * Success is left unnamed: it is most slices, and 0 says it. */
static void xp_arg_status(struct xp_pf *pf, sqlite3_stmt *st, int i, int layer_col)
{
    xp_tr_arg_coli(pf, "status", st, i);
    int64_t code = sqlite3_column_int64(st, i);
    const char *layer = (const char *)sqlite3_column_text(st, layer_col);
    const char *name =
        code != 0 && layer ? xp_cuda_status_name(strcmp(layer, "driver") == 0, code) : NULL;
    if (name)
        xp_tr_arg_str(pf, "status_name", name);
}

/* The async side of a copy or memset on its stream's track: the same
 * interval (when it was issued; the database has no device-side times),
 * where the flow from the call that issued it ends. */
static void xp_on_stream(struct xp_pf *pf, sqlite3_stmt *st, const struct xp_opcols *c,
                         const char *name, uint64_t flow)
{
    const char *api = (const char *)sqlite3_column_text(st, c->api);
    int64_t start = sqlite3_column_int64(st, c->start), tid = sqlite3_column_int64(st, c->tid);
    struct xp_track *t = xp_tr_stream(pf, sqlite3_column_int64(st, c->device),
                                      sqlite3_column_int64(st, c->stream), api, tid, start);
    if (t == NULL)
        return;
    bool clamped;
    xp_tr_slice(pf, t, name, -1, c->cat, start, sqlite3_column_int64(st, c->dur),
                (struct xp_flow){flow, true}, &clamped);
    xp_tr_arg_col(pf, "api", st, c->api);
    xp_tr_arg_coli(pf, "bytes", st, c->bytes);
    xp_tr_arg_i64(pf, "issued_by_tid", tid);
    xp_tr_arg_coli(pf, "id", st, c->id);
    xp_tr_slice_end(pf, clamped);
}

/* A copy or memset: a slice on the calling thread named by what it did and
 * its size ("H2D 4.0 MiB", "memset 1.0 KiB"), and when async another on its
 * stream's track. */
static void xp_emit_op(struct xp_pf *pf, sqlite3_stmt *st, const struct xp_opcols *c)
{
    char name[64], size[32];
    const char *what = c->dir >= 0 ? (const char *)sqlite3_column_text(st, c->dir) : c->cat;
    int64_t bytes = sqlite3_column_int64(st, c->bytes);
    if (bytes < 0)   /* a damaged row: shown as it is */
        snprintf(size, sizeof size, "%" PRId64 " B", bytes);
    else
        xp_fmt_bytes((uint64_t)bytes, size, sizeof size);
    snprintf(name, sizeof name, "%s %s", what ? what : c->cat, size);

    /* An async operation runs later on its stream: an arrow leads from the
     * call to it, ids apart for copies and memsets (their ids are two
     * sequences). */
    const char *b = (const char *)sqlite3_column_text(st, c->blocking);
    bool async = b != NULL && strncmp(b, "async", 5) == 0; /* async, async_pageable */
    uint64_t flow = async ? 2 * (uint64_t)sqlite3_column_int64(st, c->id) + c->flow_tag : 0;
    bool clamped;
    if (!xp_tr_thread_slice(pf, st, c->tid, c->start, c->dur, name, -1, c->cat,
                         (struct xp_flow){flow, false}, &clamped))
        return;
    xp_tr_arg_col(pf, "api", st, c->api);
    xp_tr_arg_coli(pf, "bytes", st, c->bytes);
    if (c->dir >= 0)
        xp_tr_arg_col(pf, "direction", st, c->dir);
    if (c->value >= 0)
        xp_tr_arg_coli(pf, "value", st, c->value);
    xp_tr_arg_col(pf, "host_mem", st, c->hostmem);
    xp_tr_arg_col(pf, "blocking", st, c->blocking);
    xp_tr_arg_hex(pf, "stream", sqlite3_column_int64(st, c->stream));
    xp_tr_arg_coli(pf, "device", st, c->device);
    xp_arg_status(pf, st, c->status, c->layer);
    if (c->fp >= 0 && sqlite3_column_type(st, c->fp) != SQLITE_NULL) {
        xp_tr_arg_hex(pf, "fingerprint", sqlite3_column_int64(st, c->fp));
        xp_tr_arg_col(pf, "fingerprint_kind", st, c->fpkind);
    }
    xp_tr_arg_coli(pf, "id", st, c->id);
    xp_tr_arg_site(pf, st, c->stack);
    xp_tr_slice_end(pf, clamped);
    if (async)
        xp_on_stream(pf, st, c, name, flow);
}

static const char xp_copies_sql[] =
    "SELECT api, direction, bytes, host_mem, blocking, stream, device, tid, start_ns, dur_ns,"
    " status, fingerprint, id, fingerprint_kind, stack_id, layer FROM copies"
    " ORDER BY start_ns, dur_ns DESC";
static const struct xp_opcols xp_copy_cols = {
    .cat = "copy", .flow_tag = 0, .api = 0, .dir = 1, .bytes = 2, .value = -1, .hostmem = 3, .blocking = 4,
    .stream = 5, .device = 6, .tid = 7, .start = 8, .dur = 9, .status = 10, .fp = 11, .id = 12,
    .fpkind = 13, .stack = 14, .layer = 15};

static void xp_emit_copy(struct xp_pf *pf, sqlite3_stmt *st)
{
    xp_emit_op(pf, st, &xp_copy_cols);
}

static const char xp_memsets_sql[] =
    "SELECT api, bytes, value, host_mem, blocking, stream, device, tid, start_ns, dur_ns,"
    " status, id, stack_id, layer FROM memsets ORDER BY start_ns, dur_ns DESC";
static const struct xp_opcols xp_memset_cols = {
    .cat = "memset", .flow_tag = 1, .api = 0, .dir = -1, .bytes = 1, .value = 2, .hostmem = 3, .blocking = 4,
    .stream = 5, .device = 6, .tid = 7, .start = 8, .dur = 9, .status = 10, .fp = -1,
    .fpkind = -1, .id = 11, .stack = 12, .layer = 13};

static void xp_emit_memset(struct xp_pf *pf, sqlite3_stmt *st)
{
    xp_emit_op(pf, st, &xp_memset_cols);
}

enum { S_API, S_STREAM, S_DEVICE, S_TID, S_START, S_DUR, S_STATUS, S_ID, S_STACK, S_LAYER };
static const char xp_syncs_sql[] =
    "SELECT api, stream, device, tid, start_ns, dur_ns, status, id, stack_id, layer FROM syncs"
    " ORDER BY start_ns, dur_ns DESC";

static void xp_emit_sync(struct xp_pf *pf, sqlite3_stmt *st)
{
    bool clamped;
    const char *api = (const char *)sqlite3_column_text(st, S_API);
    if (!xp_tr_thread_slice(pf, st, S_TID, S_START, S_DUR, api ? api : "sync",
                         api ? sqlite3_column_bytes(st, S_API) : -1, "sync", XP_TR_NO_FLOW,
                         &clamped))
        return;
    xp_tr_arg_col(pf, "api", st, S_API);
    xp_tr_arg_hex(pf, "stream", sqlite3_column_int64(st, S_STREAM));
    xp_tr_arg_coli(pf, "device", st, S_DEVICE);
    xp_arg_status(pf, st, S_STATUS, S_LAYER);
    xp_tr_arg_coli(pf, "id", st, S_ID);
    xp_tr_arg_site(pf, st, S_STACK);
    xp_tr_slice_end(pf, clamped);
}

enum { E_API, E_STATUS, E_DETAIL, E_RECORD, E_TID, E_START, E_DEVICE, E_COPY, E_LAYER };
static const char xp_errors_sql[] =
    "SELECT api, status, detail, record, tid, start_ns, device, copy_id, layer FROM errors"
    " ORDER BY start_ns";

static void xp_emit_error(struct xp_pf *pf, sqlite3_stmt *st)
{
    char name[128];
    int64_t start = sqlite3_column_int64(st, E_START);
    const char *api = (const char *)sqlite3_column_text(st, E_API);
    struct xp_track *t = xp_tr_thread(pf, sqlite3_column_int64(st, E_TID), start);
    if (t == NULL)
        return;
    snprintf(name, sizeof name, "%s failed", api ? api : "call");
    xp_tr_instant(pf, t, name, "error", start);
    xp_tr_arg_col(pf, "api", st, E_API);
    xp_arg_status(pf, st, E_STATUS, E_LAYER);
    xp_tr_arg_col(pf, "detail", st, E_DETAIL);
    xp_tr_arg_col(pf, "record", st, E_RECORD);
    xp_tr_arg_coli(pf, "device", st, E_DEVICE);
    if (sqlite3_column_type(st, E_COPY) != SQLITE_NULL)
        xp_tr_arg_coli(pf, "copy_id", st, E_COPY);
    xp_tr_end(pf);
}

/* Allocations and frees as signed deltas in time order; at the same time an
 * allocation comes before a free, so a counter never dips below zero. */
enum { A_T, A_DUR, A_PINNED, A_DEVICE, A_DELTA };
static const char xp_allocs_sql[] =
    "SELECT t, 0, pinned, device, delta FROM ("
    " SELECT alloc_ns AS t, kind IN ('pinned', 'registered') AS pinned, device, bytes AS delta,"
    "  0 AS o FROM allocations"
    "  WHERE kind IN ('device', 'physical', 'array', 'pinned', 'registered') AND alloc_ns IS NOT NULL"
    " UNION ALL"
    " SELECT free_ns, kind IN ('pinned', 'registered'), device, -bytes, 1 FROM allocations"
    "  WHERE kind IN ('device', 'physical', 'array', 'pinned', 'registered') AND free_ns IS NOT NULL)"
    " ORDER BY t, o";

static void xp_emit_alloc(struct xp_pf *pf, sqlite3_stmt *st)
{
    int64_t t = sqlite3_column_int64(st, A_T), delta = sqlite3_column_int64(st, A_DELTA);
    int64_t *live;
    int64_t device = sqlite3_column_int64(st, A_DEVICE);
    bool pinned = sqlite3_column_int(st, A_PINNED) != 0, first = false;

    if (pinned) {
        live = &pf->pinned_live;
        first = !pf->pinned_seen;
        pf->pinned_seen = true;
    } else {
        size_t i = 0;
        while (i < pf->ndevs && pf->devs[i].device != device)
            i++;
        if (i == pf->ndevs) {
            void *nv = realloc(pf->devs, (pf->ndevs + 1) * sizeof *pf->devs);
            if (nv == NULL) {
                pf->oom = true;
                return;
            }
            pf->devs = nv;
            pf->devs[i].device = device;
            pf->devs[i].live = 0;
            pf->ndevs++;
            first = true;
        }
        live = &pf->devs[i].live;
    }
    if (__builtin_add_overflow(*live, delta, live))
        *live = delta < 0 ? INT64_MIN : INT64_MAX;
    xp_tr_counter(pf, pinned ? "pinned host memory" : "device memory", pinned ? -1 : device,
                  first, t, *live);
}

/* NVTX ranges (the nvtx_ranges table, when the database has one).  A range
 * never closed ends where the run's last recorded event does (parameter 1). */
enum { N_ID, N_NAME, N_DOMAIN, N_TID, N_START, N_DUR, N_DEPTH, N_OPEN, N_PARENT };
static const char xp_push_sql[] =
    "SELECT id, name, domain, tid, start_ns, max(coalesce(end_ns, ?1), start_ns) - start_ns AS d,"
    " depth, end_ns IS NULL, parent_id FROM nvtx_ranges WHERE kind = 'push'"
    " ORDER BY start_ns, d DESC";

static void xp_nvtx_args(struct xp_pf *pf, sqlite3_stmt *st)
{
    xp_tr_arg_col(pf, "domain", st, N_DOMAIN);
    xp_tr_arg_coli(pf, "id", st, N_ID);
    if (sqlite3_column_int(st, N_OPEN))
        xp_tr_arg_i64(pf, "never_closed", 1);
}

static void xp_emit_push(struct xp_pf *pf, sqlite3_stmt *st)
{
    bool clamped;
    const char *name = (const char *)sqlite3_column_text(st, N_NAME);
    if (!xp_tr_thread_slice(pf, st, N_TID, N_START, N_DUR, name,
                         name ? sqlite3_column_bytes(st, N_NAME) : 0, "nvtx", XP_TR_NO_FLOW,
                         &clamped))
        return;
    xp_nvtx_args(pf, st);
    xp_tr_arg_coli(pf, "depth", st, N_DEPTH);
    xp_tr_arg_coli(pf, "parent_id", st, N_PARENT);
    xp_tr_slice_end(pf, clamped);
}

/* Start/end ranges may end on another thread: async events ("b"/"e",
 * matched by cat and id), one query for the starts and one for the ends. */
static const char xp_begin_sql[] =
    "SELECT id, name, domain, tid, start_ns, 0, 0, end_ns IS NULL FROM nvtx_ranges"
    " WHERE kind = 'startend' ORDER BY start_ns, id";
static const char xp_finish_sql[] =
    "SELECT id, name, domain, coalesce(end_tid, tid), max(coalesce(end_ns, ?1), start_ns) AS t,"
    " 0, 0, end_ns IS NULL FROM nvtx_ranges WHERE kind = 'startend' ORDER BY t, id";

static void xp_emit_async(struct xp_pf *pf, sqlite3_stmt *st, bool begin)
{
    int64_t t_ns = sqlite3_column_int64(st, N_START);
    struct xp_track *t = xp_tr_thread(pf, sqlite3_column_int64(st, N_TID), t_ns);
    if (t == NULL)
        return;
    const char *name = (const char *)sqlite3_column_text(st, N_NAME);
    xp_tr_async(pf, t, name, name ? sqlite3_column_bytes(st, N_NAME) : 0, "nvtx", begin,
                (uint64_t)sqlite3_column_int64(st, N_ID), t_ns);
    xp_nvtx_args(pf, st);
    xp_tr_end(pf);
}

static void xp_emit_begin(struct xp_pf *pf, sqlite3_stmt *st)
{
    xp_emit_async(pf, st, true);
}

static void xp_emit_finish(struct xp_pf *pf, sqlite3_stmt *st)
{
    xp_emit_async(pf, st, false);
}

/* ---- driver ------------------------------------------------------------ */

static int xp_step(sqlite3 *db, struct xp_src *s, char *err, size_t errlen)
{
    int rc = sqlite3_step(s->st);
    if (rc == SQLITE_ROW) {
        s->has = true;
        s->ts = sqlite3_column_int64(s->st, s->ts_col);
        s->sortdur = s->dur_col < 0 ? -1 : sqlite3_column_int64(s->st, s->dur_col);
        return 0;
    }
    s->has = false;
    if (rc == SQLITE_DONE)
        return 0;
    snprintf(err, errlen, "%s", sqlite3_errmsg(db));
    return -1;
}

/* meta value of key as an integer; def when absent or not a number. */
static int64_t xp_meta_int(sqlite3 *db, const char *key, int64_t def)
{
    sqlite3_stmt *st;
    int64_t v = def;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL) != SQLITE_OK)
        return def;
    sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        char *end;
        errno = 0;
        long long x = s ? strtoll(s, &end, 10) : 0;
        if (s && end != s && *end == '\0' && errno == 0)
            v = x;
    }
    sqlite3_finalize(st);
    return v;
}

/* The process, named by its command line, first in the trace. */
static void xp_process_name(struct xp_pf *pf, sqlite3 *db)
{
    sqlite3_stmt *st;
    char name[40];
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'cmdline'", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        xp_tr_process(pf, s ? s : "", s ? sqlite3_column_bytes(st, 0) : 0);
    } else {
        snprintf(name, sizeof name, "pid %" PRId64, pf->pid);
        xp_tr_process(pf, name, -1);
    }
    sqlite3_finalize(st);
}

/* Where a range that was never closed ends: the last time anything was
 * recorded (only asked when there is such a range: it scans every table). */
static int64_t xp_run_end(sqlite3 *db)
{
    static const char sql[] =
        "SELECT max(coalesce((SELECT max(end_ns) FROM copies), 0),"
        " coalesce((SELECT max(end_ns) FROM memsets), 0),"
        " coalesce((SELECT max(end_ns) FROM syncs), 0),"
        " coalesce((SELECT max(end_ns) FROM errors), 0),"
        " coalesce((SELECT max(max(alloc_end_ns, coalesce(free_end_ns, 0))) FROM allocations), 0),"
        " coalesce((SELECT max(max(start_ns, coalesce(end_ns, 0))) FROM nvtx_ranges), 0))";
    sqlite3_stmt *st;
    int64_t v = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return v;
}

int xp_export_perfetto(sqlite3 *db, const struct xp_sites *sites, bool proto, FILE *out,
                       char *note, size_t notelen, char *err, size_t errlen)
{
    struct xp_src src[] = {
        {xp_copies_sql, xp_copy_cols.start, xp_copy_cols.dur, xp_emit_copy, NULL, false, 0, 0},
        {xp_memsets_sql, xp_memset_cols.start, xp_memset_cols.dur, xp_emit_memset, NULL, false, 0,
         0},
        {xp_syncs_sql, S_START, S_DUR, xp_emit_sync, NULL, false, 0, 0},
        {xp_errors_sql, E_START, -1, xp_emit_error, NULL, false, 0, 0},
        {xp_allocs_sql, A_T, -1, xp_emit_alloc, NULL, false, 0, 0},
        {xp_push_sql, N_START, N_DUR, xp_emit_push, NULL, false, 0, 0},
        {xp_begin_sql, N_START, -1, xp_emit_begin, NULL, false, 0, 0},
        {xp_finish_sql, N_START, -1, xp_emit_finish, NULL, false, 0, 0},
    };
    const size_t nsrc = sizeof src / sizeof src[0], first_nvtx = 5;
    struct xp_pf pf = {.out = out, .sites = sites,
                       .ops = proto ? &xp_tr_proto_ops : &xp_tr_json_ops};
    int ret = -1;

    if (note && notelen)
        note[0] = '\0';
    /* A database from before NVTX ranges has no table for them; one that
     * cannot say is read as such, and its copies still exported. */
    int nvtx;
    size_t use = xp_schema_has(db, "nvtx_ranges", &nvtx) == SQLITE_OK && nvtx ? nsrc : first_nvtx;
    for (size_t i = 0; i < use; i++) {
        if (sqlite3_prepare_v2(db, src[i].sql, -1, &src[i].st, NULL) == SQLITE_OK)
            continue;
        if (i < first_nvtx) {
            snprintf(err, errlen, "%s", sqlite3_errmsg(db));
            goto done;
        }
        /* Another build's nvtx_ranges: the rest of the trace is still worth having. */
        snprintf(note, notelen, "NVTX ranges left out (nvtx_ranges: %s)", sqlite3_errmsg(db));
        for (size_t j = first_nvtx; j < i; j++) {
            sqlite3_finalize(src[j].st);
            src[j].st = NULL;
        }
        use = first_nvtx;
        break;
    }
    if (use > first_nvtx) {
        sqlite3_stmt *st;
        int64_t run_end = 0;
        if (sqlite3_prepare_v2(db, "SELECT 1 FROM nvtx_ranges WHERE end_ns IS NULL LIMIT 1", -1,
                               &st, NULL) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            run_end = xp_run_end(db);
        sqlite3_finalize(st);
        for (size_t i = first_nvtx; i < use; i++)
            sqlite3_bind_int64(src[i].st, 1, run_end);
    }

    /* Time 0 is the start of profiling; earlier than the first event if
     * meta lacks it, so that no ts is negative. */
    pf.pid = xp_meta_int(db, "pid", 0);
    pf.base_ns = xp_meta_int(db, "start_mono_ns", INT64_MAX);
    for (size_t i = 0; i < use; i++) {
        if (xp_step(db, &src[i], err, errlen) != 0)
            goto done;
        if (src[i].has && src[i].ts < pf.base_ns)
            pf.base_ns = src[i].ts;
    }
    if (pf.base_ns == INT64_MAX)
        pf.base_ns = 0;

    pf.ops->start(&pf);
    xp_process_name(&pf, db);
    xp_tr_thread(&pf, pf.pid, pf.base_ns); /* the counters' track, and the main thread's */
    uint64_t rows = 0;
    for (;;) {
        struct xp_src *best = NULL;
        for (size_t i = 0; i < use; i++)
            if (src[i].has && (best == NULL || src[i].ts < best->ts ||
                               (src[i].ts == best->ts && src[i].sortdur > best->sortdur)))
                best = &src[i];
        if (best == NULL)
            break;
        best->emit(&pf, best->st);
        xp_progress_tick(&rows, "rows written");
        if (pf.oom) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
        if (xp_step(db, best, err, errlen) != 0)
            goto done;
    }
    if (xp_tr_finish(&pf, db, err, errlen) != 0)
        goto done;
    ret = 0;
done:
    for (size_t i = 0; i < nsrc; i++)
        sqlite3_finalize(src[i].st);
    free(pf.tracks);
    free(pf.devs);
    if (pf.ops->release)
        pf.ops->release(&pf);
    xp_pw_free(&pf.pw);
    return ret;
}
