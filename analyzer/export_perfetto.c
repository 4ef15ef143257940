/* export_perfetto.c: `xferprof export --format perfetto`, a run database as a Chrome
 * trace-event JSON file (what Perfetto UI and chrome://tracing open); docs/export.md
 * says what each event is.
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

#include "xp_cuda_status.h"
#include "xp_export.h"
#include "xp_json.h"

/* Synthetic tids of the stream tracks start here: Linux thread ids stay
 * below 2^22 (PID_MAX_LIMIT), so these never name a real thread. */
#define XP_STREAM_TID_BASE (INT64_C(1) << 30)

/* Open slices remembered per track to keep complete events nested; deeper
 * nesting than this (never seen in a real run) is written with dur 0. */
#define XP_NEST_MAX 32

/* cudaStreamLegacy and cudaStreamPerThread as handle values. */
#define XP_STREAM_LEGACY 1
#define XP_STREAM_PER_THREAD 2

enum xp_track_kind { XP_TRACK_THREAD = 1, XP_TRACK_STREAM, XP_TRACK_PT_STREAM };

/* One track of the trace: a thread, or the pseudo-thread of a stream. */
struct xp_track {
    int64_t k1, k2;          /* thread: tid; stream: device, handle;
                              * per-thread default stream: device, tid */
    uint8_t kind;            /* enum xp_track_kind; 0: free slot */
    int depth;
    int64_t tid;             /* the tid written in the trace */
    int64_t ends[XP_NEST_MAX]; /* ends (ns) of the open slices, innermost last */
};

/* The output's state.  Owned by one xp_export_perfetto call. */
struct xp_pf {
    FILE *out;
    int64_t pid, base_ns;
    uint64_t nevents;
    int nargs;
    struct xp_track *tracks; /* open addressing, power-of-two capacity */
    size_t cap, ntracks, nstreams;
    struct { int64_t device, live; } *devs; /* live device bytes per device */
    size_t ndevs;
    int64_t pinned_live;
    bool oom;
    const struct xp_sites *sites; /* call-site names by stack id, may be NULL */
};

/* ---- writing ------------------------------------------------------------ */

/* ns as microseconds with three decimals: exact to the ns, no floating point
 * (so no rounding, and never NaN or an exponent). */
static void xp_put_us(FILE *out, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    unsigned frac = (unsigned)(a % 1000);
    char f[5] = {'.', (char)('0' + frac / 100), (char)('0' + frac / 10 % 10),
                 (char)('0' + frac % 10), 0};
    if (ns < 0)
        putc_unlocked('-', out);
    /* a / 1000 < 2^64 / 1000 fits an int64_t. */
    xp_export_put_i64(out, (int64_t)(a / 1000));
    fputs_unlocked(f, out);
}

/* t - base without overflow on any input (a corrupt row may hold anything). */
static int64_t xp_rel(const struct xp_pf *pf, int64_t t)
{
    int64_t r;
    if (__builtin_sub_overflow(t, pf->base_ns, &r))
        r = t < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

/* Starts an event: name, cat, ph, ts, pid, tid.  name_len -1: strlen. */
static void xp_ev(struct xp_pf *pf, const char *name, int name_len, const char *cat,
                  const char *ph, int64_t t_ns, int64_t tid)
{
    FILE *out = pf->out;
    fputs_unlocked(pf->nevents++ ? ",\n{\"name\":" : "\n{\"name\":", out);
    if (name == NULL)
        name = "";
    xp_json_write_string(out, name, name_len < 0 ? strlen(name) : (size_t)name_len);
    if (cat != NULL) {
        fputs_unlocked(",\"cat\":\"", out);
        fputs_unlocked(cat, out);
        putc_unlocked('"', out);
    }
    fputs_unlocked(",\"ph\":\"", out);
    fputs_unlocked(ph, out);
    fputs_unlocked("\",\"ts\":", out);
    xp_put_us(out, xp_rel(pf, t_ns));
    fputs_unlocked(",\"pid\":", out);
    xp_export_put_i64(out, pf->pid);
    fputs_unlocked(",\"tid\":", out);
    xp_export_put_i64(out, tid);
}

static void xp_dur(struct xp_pf *pf, int64_t dur_ns)
{
    fputs_unlocked(",\"dur\":", pf->out);
    xp_put_us(pf->out, dur_ns);
}

static void xp_args(struct xp_pf *pf)
{
    fputs_unlocked(",\"args\":{", pf->out);
    pf->nargs = 0;
}

static void xp_key(struct xp_pf *pf, const char *key)
{
    fputs_unlocked(pf->nargs++ ? ",\"" : "\"", pf->out);
    fputs_unlocked(key, pf->out);
    fputs_unlocked("\":", pf->out);
}

static void xp_arg_i64(struct xp_pf *pf, const char *key, int64_t v)
{
    xp_key(pf, key);
    xp_export_put_i64(pf->out, v);
}

static void xp_arg_hex(struct xp_pf *pf, const char *key, int64_t v)
{
    xp_key(pf, key);
    putc_unlocked('"', pf->out);
    xp_export_put_hex(pf->out, (uint64_t)v);
    putc_unlocked('"', pf->out);
}

static void xp_arg_str(struct xp_pf *pf, const char *key, const char *s)
{
    xp_key(pf, key);
    xp_json_write_string(pf->out, s, s ? strlen(s) : 0);
}

/* Column i of st as a JSON string, null when NULL. */
static void xp_arg_col(struct xp_pf *pf, const char *key, sqlite3_stmt *st, int i)
{
    xp_key(pf, key);
    const char *s = (const char *)sqlite3_column_text(st, i);
    xp_json_write_string(pf->out, s, s ? (size_t)sqlite3_column_bytes(st, i) : 0);
}

/* "site": the name of the call site whose stacks.id is column i, when known. */
static void xp_arg_site(struct xp_pf *pf, sqlite3_stmt *st, int i)
{
    int64_t id = sqlite3_column_int64(st, i);
    if (pf->sites && id > 0 && (uint64_t)id < pf->sites->n && pf->sites->name[id])
        xp_arg_str(pf, "site", pf->sites->name[id]);
}

/* Column i as a JSON integer, null when NULL. */
static void xp_arg_coli(struct xp_pf *pf, const char *key, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL) {
        xp_key(pf, key);
        fputs_unlocked("null", pf->out);
    } else
        xp_arg_i64(pf, key, sqlite3_column_int64(st, i));
}

/* "status" from column i and, for a failure whose code the layer (column
 * layer_col) names, "status_name" (cudaErrorInvalidValue, CUDA_ERROR_...).
 * Success is left unnamed: it is most slices, and 0 says it. */
static void xp_arg_status(struct xp_pf *pf, sqlite3_stmt *st, int i, int layer_col)
{
    xp_arg_coli(pf, "status", st, i);
    int64_t code = sqlite3_column_int64(st, i);
    const char *layer = (const char *)sqlite3_column_text(st, layer_col);
    const char *name = code != 0 && layer ? xp_cuda_status_name(strcmp(layer, "driver") == 0, code) : NULL;
    if (name)
        xp_arg_str(pf, "status_name", name);
}

static void xp_end(struct xp_pf *pf)
{
    fputs_unlocked("}}", pf->out); /* args, event */
}

/* "4.0 MiB": the name of a copy or memset, short enough for a slice. */
static void xp_fmt_bytes(char *buf, size_t n, int64_t b)
{
    static const char *const units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (b < 1024) {
        snprintf(buf, n, "%" PRId64 " B", b);
        return;
    }
    double v = (double)b;
    size_t u = 0;
    for (v /= 1024; v >= 1024 && u + 1 < sizeof units / sizeof units[0]; v /= 1024)
        u++;
    snprintf(buf, n, "%.1f %s", v, units[u]);
}

/* ---- tracks --------------------------------------------------------------- */

static uint64_t xp_track_hash(int kind, int64_t k1, int64_t k2)
{
    uint64_t h = (uint64_t)kind * 0x9E3779B97F4A7C15u;
    h ^= (uint64_t)k1 + 0x7F4A7C159E3779B9u + (h << 6) + (h >> 2);
    h ^= (uint64_t)k2 + 0x9E3779B97F4A7C15u + (h << 6) + (h >> 2);
    return h ^ (h >> 31);
}

static struct xp_track *xp_track_slot(struct xp_track *v, size_t cap, int kind, int64_t k1,
                                      int64_t k2)
{
    size_t i = (size_t)xp_track_hash(kind, k1, k2) & (cap - 1);
    while (v[i].kind != 0 && !(v[i].kind == kind && v[i].k1 == k1 && v[i].k2 == k2))
        i = (i + 1) & (cap - 1);
    return &v[i];
}

/* The track, created if new (*is_new set); NULL when out of memory. */
static struct xp_track *xp_track_get(struct xp_pf *pf, int kind, int64_t k1, int64_t k2,
                                     bool *is_new)
{
    *is_new = false;
    if (pf->cap == 0 || (pf->ntracks + 1) * 2 > pf->cap) {
        size_t ncap = pf->cap ? pf->cap * 2 : 64;
        struct xp_track *nv = calloc(ncap, sizeof *nv);
        if (nv == NULL) {
            pf->oom = true;
            return NULL;
        }
        for (size_t i = 0; i < pf->cap; i++)
            if (pf->tracks[i].kind != 0)
                *xp_track_slot(nv, ncap, pf->tracks[i].kind, pf->tracks[i].k1,
                               pf->tracks[i].k2) = pf->tracks[i];
        free(pf->tracks);
        pf->tracks = nv;
        pf->cap = ncap;
    }
    struct xp_track *t = xp_track_slot(pf->tracks, pf->cap, kind, k1, k2);
    if (t->kind == 0) {
        t->kind = (uint8_t)kind;
        t->k1 = k1;
        t->k2 = k2;
        pf->ntracks++;
        *is_new = true;
    }
    return t;
}

/* The track of thread tid, named ("tid N") at its first event. */
static struct xp_track *xp_thread(struct xp_pf *pf, int64_t tid, int64_t t_ns)
{
    bool is_new;
    struct xp_track *t = xp_track_get(pf, XP_TRACK_THREAD, tid, 0, &is_new);
    if (t && is_new) {
        char name[40];
        t->tid = tid;
        snprintf(name, sizeof name, "tid %" PRId64, tid);
        xp_ev(pf, "thread_name", -1, NULL, "M", t_ns, tid);
        xp_args(pf);
        xp_arg_str(pf, "name", name);
        xp_end(pf);
    }
    return t;
}

/* The pseudo-thread of the stream an async operation was issued on.  The
 * per-thread default stream is one stream per thread (and per device);
 * cudaStreamLegacy is the legacy default stream, 0. */
static struct xp_track *xp_stream(struct xp_pf *pf, int64_t device, int64_t stream,
                                  const char *api, int64_t tid, int64_t t_ns)
{
    size_t alen = api ? strlen(api) : 0;
    bool ptsz = alen > 5 && (strcmp(api + alen - 5, "_ptsz") == 0 ||
                             strcmp(api + alen - 5, "_ptds") == 0);
    int kind = XP_TRACK_STREAM;
    if (stream == XP_STREAM_LEGACY)
        stream = 0;
    if (stream == XP_STREAM_PER_THREAD || (stream == 0 && ptsz))
        kind = XP_TRACK_PT_STREAM;
    bool is_new;
    struct xp_track *t = xp_track_get(pf, kind, device, kind == XP_TRACK_STREAM ? stream : tid,
                                      &is_new);
    if (t && is_new) {
        char name[96];
        t->tid = XP_STREAM_TID_BASE + (int64_t)pf->nstreams++;
        if (kind == XP_TRACK_PT_STREAM)
            snprintf(name, sizeof name, "per-thread default stream of tid %" PRId64
                     " (device %" PRId64 ")", tid, device);
        else if (stream == 0)
            snprintf(name, sizeof name, "default stream (device %" PRId64 ")", device);
        else
            snprintf(name, sizeof name, "stream 0x%" PRIx64 " (device %" PRId64 ")",
                     (uint64_t)stream, device);
        xp_ev(pf, "thread_name", -1, NULL, "M", t_ns, t->tid);
        xp_args(pf);
        xp_arg_str(pf, "name", name);
        xp_end(pf);
        /* Below the process's threads in the viewer. */
        xp_ev(pf, "thread_sort_index", -1, NULL, "M", t_ns, t->tid);
        xp_args(pf);
        xp_arg_i64(pf, "sort_index", t->tid);
        xp_end(pf);
    }
    return t;
}

/* Keeps complete events on a track properly nested, which viewers need
 * (Perfetto drops slices that overlap without nesting): returns the dur to
 * write, shortened to end within the enclosing slice, and sets *clamped.
 * Calls of one thread never overlap; async operations issued to one stream
 * from two threads can. */
static int64_t xp_nest(struct xp_track *t, int64_t start, int64_t dur, bool *clamped)
{
    *clamped = false;
    if (dur < 0)
        dur = 0;
    while (t->depth > 0 && t->ends[t->depth - 1] <= start)
        t->depth--;
    int64_t end;
    if (__builtin_add_overflow(start, dur, &end))
        end = INT64_MAX;
    if (t->depth > 0 && end > t->ends[t->depth - 1]) {
        end = t->ends[t->depth - 1];
        dur = end - start;
        *clamped = true;
    }
    if (t->depth < XP_NEST_MAX)
        t->ends[t->depth++] = end;
    else if (dur > 0) {
        dur = 0;
        *clamped = true;
    }
    return dur;
}

/* Starts a complete event on track t: nests it (xp_nest), writes its head
 * and dur and opens its args; xp_slice_end closes it. */
static void xp_slice(struct xp_pf *pf, struct xp_track *t, const char *name, int name_len,
                     const char *cat, int64_t start, int64_t dur, bool *clamped)
{
    dur = xp_nest(t, start, dur, clamped);
    xp_ev(pf, name, name_len, cat, "X", start, t->tid);
    xp_dur(pf, dur);
    xp_args(pf);
}

/* xp_slice on the thread of column tid_col, at columns start_col and
 * dur_col.  Returns false, having written nothing, when out of memory. */
static bool xp_thread_slice(struct xp_pf *pf, sqlite3_stmt *st, int tid_col, int start_col,
                            int dur_col, const char *name, int name_len, const char *cat,
                            bool *clamped)
{
    int64_t start = sqlite3_column_int64(st, start_col);
    struct xp_track *t = xp_thread(pf, sqlite3_column_int64(st, tid_col), start);
    if (t == NULL)
        return false;
    xp_slice(pf, t, name, name_len, cat, start, sqlite3_column_int64(st, dur_col), clamped);
    return true;
}

static void xp_slice_end(struct xp_pf *pf, bool clamped)
{
    if (clamped)
        xp_arg_i64(pf, "clamped", 1);
    xp_end(pf);
}

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
    int api, dir, bytes, value, hostmem, blocking, stream, device, tid, start, dur, status,
        fp, fpkind, id, stack, layer;
};

/* The async side of a copy or memset on its stream's track: the same
 * interval (when it was issued; the database has no device-side times). */
static void xp_on_stream(struct xp_pf *pf, sqlite3_stmt *st, const struct xp_opcols *c,
                         const char *name)
{
    const char *api = (const char *)sqlite3_column_text(st, c->api);
    int64_t start = sqlite3_column_int64(st, c->start), tid = sqlite3_column_int64(st, c->tid);
    struct xp_track *t = xp_stream(pf, sqlite3_column_int64(st, c->device),
                                   sqlite3_column_int64(st, c->stream), api, tid, start);
    if (t == NULL)
        return;
    bool clamped;
    xp_slice(pf, t, name, -1, c->cat, start, sqlite3_column_int64(st, c->dur), &clamped);
    xp_arg_col(pf, "api", st, c->api);
    xp_arg_coli(pf, "bytes", st, c->bytes);
    xp_arg_i64(pf, "issued_by_tid", tid);
    xp_arg_coli(pf, "id", st, c->id);
    xp_slice_end(pf, clamped);
}

/* A copy or memset: a slice on the calling thread named by what it did and
 * its size ("H2D 4.0 MiB", "memset 1.0 KiB"), and when async another on its
 * stream's track. */
static void xp_emit_op(struct xp_pf *pf, sqlite3_stmt *st, const struct xp_opcols *c)
{
    char name[64], size[32];
    const char *what = c->dir >= 0 ? (const char *)sqlite3_column_text(st, c->dir) : c->cat;
    xp_fmt_bytes(size, sizeof size, sqlite3_column_int64(st, c->bytes));
    snprintf(name, sizeof name, "%s %s", what ? what : c->cat, size);

    bool clamped;
    if (!xp_thread_slice(pf, st, c->tid, c->start, c->dur, name, -1, c->cat, &clamped))
        return;
    xp_arg_col(pf, "api", st, c->api);
    xp_arg_coli(pf, "bytes", st, c->bytes);
    if (c->dir >= 0)
        xp_arg_col(pf, "direction", st, c->dir);
    if (c->value >= 0)
        xp_arg_coli(pf, "value", st, c->value);
    xp_arg_col(pf, "host_mem", st, c->hostmem);
    xp_arg_col(pf, "blocking", st, c->blocking);
    xp_arg_hex(pf, "stream", sqlite3_column_int64(st, c->stream));
    xp_arg_coli(pf, "device", st, c->device);
    xp_arg_status(pf, st, c->status, c->layer);
    if (c->fp >= 0 && sqlite3_column_type(st, c->fp) != SQLITE_NULL) {
        xp_arg_hex(pf, "fingerprint", sqlite3_column_int64(st, c->fp));
        xp_arg_col(pf, "fingerprint_kind", st, c->fpkind);
    }
    xp_arg_coli(pf, "id", st, c->id);
    xp_arg_site(pf, st, c->stack);
    xp_slice_end(pf, clamped);
    const char *b = (const char *)sqlite3_column_text(st, c->blocking);
    if (b != NULL && strncmp(b, "async", 5) == 0) /* async, async_pageable */
        xp_on_stream(pf, st, c, name);
}

static const char xp_copies_sql[] =
    "SELECT api, direction, bytes, host_mem, blocking, stream, device, tid, start_ns, dur_ns,"
    " status, fingerprint, id, fingerprint_kind, stack_id, layer FROM copies ORDER BY start_ns, dur_ns DESC";
static const struct xp_opcols xp_copy_cols = {
    .cat = "copy", .api = 0, .dir = 1, .bytes = 2, .value = -1, .hostmem = 3, .blocking = 4,
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
    .cat = "memset", .api = 0, .dir = -1, .bytes = 1, .value = 2, .hostmem = 3, .blocking = 4,
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
    if (!xp_thread_slice(pf, st, S_TID, S_START, S_DUR, api ? api : "sync",
                         api ? sqlite3_column_bytes(st, S_API) : -1, "sync", &clamped))
        return;
    xp_arg_col(pf, "api", st, S_API);
    xp_arg_hex(pf, "stream", sqlite3_column_int64(st, S_STREAM));
    xp_arg_coli(pf, "device", st, S_DEVICE);
    xp_arg_status(pf, st, S_STATUS, S_LAYER);
    xp_arg_coli(pf, "id", st, S_ID);
    xp_arg_site(pf, st, S_STACK);
    xp_slice_end(pf, clamped);
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
    struct xp_track *t = xp_thread(pf, sqlite3_column_int64(st, E_TID), start);
    if (t == NULL)
        return;
    snprintf(name, sizeof name, "%s failed", api ? api : "call");
    xp_ev(pf, name, -1, "error", "i", start, t->tid);
    fputs(",\"s\":\"t\"", pf->out);
    xp_args(pf);
    xp_arg_col(pf, "api", st, E_API);
    xp_arg_status(pf, st, E_STATUS, E_LAYER);
    xp_arg_col(pf, "detail", st, E_DETAIL);
    xp_arg_col(pf, "record", st, E_RECORD);
    xp_arg_coli(pf, "device", st, E_DEVICE);
    if (sqlite3_column_type(st, E_COPY) != SQLITE_NULL)
        xp_arg_coli(pf, "copy_id", st, E_COPY);
    xp_end(pf);
}

/* Allocations and frees as signed deltas in time order; at the same time an
 * allocation comes before a free, so a counter never dips below zero. */
enum { A_T, A_DUR, A_PINNED, A_DEVICE, A_DELTA };
static const char xp_allocs_sql[] =
    "SELECT t, 0, pinned, device, delta FROM ("
    " SELECT alloc_ns AS t, kind IN ('pinned', 'registered') AS pinned, device, bytes AS delta,"
    "  0 AS o FROM allocations"
    "  WHERE kind IN ('device', 'physical', 'pinned', 'registered') AND alloc_ns IS NOT NULL"
    " UNION ALL"
    " SELECT free_ns, kind IN ('pinned', 'registered'), device, -bytes, 1 FROM allocations"
    "  WHERE kind IN ('device', 'physical', 'pinned', 'registered') AND free_ns IS NOT NULL)"
    " ORDER BY t, o";

static void xp_emit_alloc(struct xp_pf *pf, sqlite3_stmt *st)
{
    int64_t t = sqlite3_column_int64(st, A_T), delta = sqlite3_column_int64(st, A_DELTA);
    int64_t *live;
    int64_t device = sqlite3_column_int64(st, A_DEVICE);
    bool pinned = sqlite3_column_int(st, A_PINNED) != 0;

    if (pinned)
        live = &pf->pinned_live;
    else {
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
        }
        live = &pf->devs[i].live;
    }
    if (__builtin_add_overflow(*live, delta, live))
        *live = delta < 0 ? INT64_MIN : INT64_MAX;
    xp_ev(pf, pinned ? "pinned host memory" : "device memory", -1, "memory", "C", t, pf->pid);
    if (!pinned)
        fprintf(pf->out, ",\"id\":\"%" PRId64 "\"", device);
    xp_args(pf);
    xp_arg_i64(pf, "bytes", *live);
    xp_end(pf);
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
    xp_arg_col(pf, "domain", st, N_DOMAIN);
    xp_arg_coli(pf, "id", st, N_ID);
    if (sqlite3_column_int(st, N_OPEN))
        xp_arg_i64(pf, "never_closed", 1);
}

static void xp_emit_push(struct xp_pf *pf, sqlite3_stmt *st)
{
    bool clamped;
    const char *name = (const char *)sqlite3_column_text(st, N_NAME);
    if (!xp_thread_slice(pf, st, N_TID, N_START, N_DUR, name,
                         name ? sqlite3_column_bytes(st, N_NAME) : 0, "nvtx", &clamped))
        return;
    xp_nvtx_args(pf, st);
    xp_arg_coli(pf, "depth", st, N_DEPTH);
    xp_arg_coli(pf, "parent_id", st, N_PARENT);
    xp_slice_end(pf, clamped);
}

/* Start/end ranges may end on another thread: async events ("b"/"e",
 * matched by cat and id), one query for the starts and one for the ends. */
static const char xp_begin_sql[] =
    "SELECT id, name, domain, tid, start_ns, 0, 0, end_ns IS NULL FROM nvtx_ranges"
    " WHERE kind = 'startend' ORDER BY start_ns, id";
static const char xp_finish_sql[] =
    "SELECT id, name, domain, coalesce(end_tid, tid), max(coalesce(end_ns, ?1), start_ns) AS t,"
    " 0, 0, end_ns IS NULL FROM nvtx_ranges WHERE kind = 'startend' ORDER BY t, id";

static void xp_emit_async(struct xp_pf *pf, sqlite3_stmt *st, const char *ph)
{
    int64_t t_ns = sqlite3_column_int64(st, N_START);
    struct xp_track *t = xp_thread(pf, sqlite3_column_int64(st, N_TID), t_ns);
    if (t == NULL)
        return;
    const char *name = (const char *)sqlite3_column_text(st, N_NAME);
    xp_ev(pf, name, name ? sqlite3_column_bytes(st, N_NAME) : 0, "nvtx", ph, t_ns, t->tid);
    fprintf(pf->out, ",\"id\":\"0x%" PRIx64 "\"", (uint64_t)sqlite3_column_int64(st, N_ID));
    xp_args(pf);
    xp_nvtx_args(pf, st);
    xp_end(pf);
}

static void xp_emit_begin(struct xp_pf *pf, sqlite3_stmt *st)
{
    xp_emit_async(pf, st, "b");
}

static void xp_emit_finish(struct xp_pf *pf, sqlite3_stmt *st)
{
    xp_emit_async(pf, st, "e");
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

/* The process_name metadata event (the command line), first in the file. */
static void xp_process_name(struct xp_pf *pf, sqlite3 *db)
{
    sqlite3_stmt *st;
    xp_ev(pf, "process_name", -1, NULL, "M", pf->base_ns, pf->pid);
    xp_args(pf);
    xp_key(pf, "name");
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'cmdline'", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
        const char *s = (const char *)sqlite3_column_text(st, 0);
        xp_json_write_string(pf->out, s, s ? (size_t)sqlite3_column_bytes(st, 0) : 0);
    } else
        fprintf(pf->out, "\"pid %" PRId64 "\"", pf->pid);
    sqlite3_finalize(st);
    xp_end(pf);
}

/* The trace's "metadata" object: every meta row as a string. */
static int xp_metadata(struct xp_pf *pf, sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int rc, n = 0;
    if (sqlite3_prepare_v2(db, "SELECT key, value FROM meta ORDER BY key", -1, &st, NULL) !=
        SQLITE_OK) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -1;
    }
    fputs(",\n\"metadata\":{\"source\":\"xferprof export\",\"xferprof\":{", pf->out);
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (n++)
            putc(',', pf->out);
        xp_json_write_string(pf->out, k ? k : "", k ? (size_t)sqlite3_column_bytes(st, 0) : 0);
        putc(':', pf->out);
        xp_json_write_string(pf->out, v, v ? (size_t)sqlite3_column_bytes(st, 1) : 0);
    }
    fputs("}}", pf->out);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        snprintf(err, errlen, "%s", sqlite3_errmsg(db));
        return -1;
    }
    return 0;
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

static bool xp_has_table(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    bool yes = false;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = ? AND type IN "
                               "('table', 'view')", -1, &st, NULL) != SQLITE_OK)
        return false;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    yes = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return yes;
}

int xp_export_perfetto(sqlite3 *db, const struct xp_sites *sites, FILE *out, char *note,
                       size_t notelen, char *err, size_t errlen)
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
    struct xp_pf pf = {.out = out, .sites = sites};
    int ret = -1;

    if (note && notelen)
        note[0] = '\0';
    size_t use = nsrc;
    if (!xp_has_table(db, "nvtx_ranges"))
        use = first_nvtx;
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

    fputs("{\"traceEvents\":[", out);
    xp_process_name(&pf, db);
    xp_thread(&pf, pf.pid, pf.base_ns); /* the counters' track, and the main thread's */
    for (;;) {
        struct xp_src *best = NULL;
        for (size_t i = 0; i < use; i++)
            if (src[i].has && (best == NULL || src[i].ts < best->ts ||
                               (src[i].ts == best->ts && src[i].sortdur > best->sortdur)))
                best = &src[i];
        if (best == NULL)
            break;
        best->emit(&pf, best->st);
        if (pf.oom) {
            snprintf(err, errlen, "out of memory");
            goto done;
        }
        if (xp_step(db, best, err, errlen) != 0)
            goto done;
    }
    fputs("\n],\n\"displayTimeUnit\":\"ns\"", out);
    if (xp_metadata(&pf, db, err, errlen) != 0)
        goto done;
    fputs("}\n", out);
    ret = 0;
done:
    for (size_t i = 0; i < nsrc; i++)
        sqlite3_finalize(src[i].st);
    free(pf.tracks);
    free(pf.devs);
    return ret;
}
