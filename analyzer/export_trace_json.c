/* export_trace_json.c: the trace-event JSON emitter of `xferprof export --format perfetto` (xp_tr_json_ops): Chrome's trace-event format, which Perfetto UI and chrome://tracing open. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "export_trace.h"
#include "xp_json.h"

/* ns as microseconds with three decimals: exact to the ns, no floating point
 * (so no rounding, and never NaN or an exponent). */
static void xp_tj_put_us(FILE *out, int64_t ns)
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

/* Starts an event: name, cat, ph, ts, pid, tid.  name_len -1: strlen. */
static void xp_tj_ev(struct xp_pf *pf, const char *name, int name_len, const char *cat,
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
    xp_tj_put_us(out, xp_tr_rel(pf, t_ns));
    fputs_unlocked(",\"pid\":", out);
    xp_export_put_i64(out, pf->pid);
    fputs_unlocked(",\"tid\":", out);
    xp_export_put_i64(out, tid);
}

static void xp_tj_args(struct xp_pf *pf)
{
    fputs_unlocked(",\"args\":{", pf->out);
    pf->nargs = 0;
}

static void xp_tj_key(struct xp_pf *pf, const char *key)
{
    fputs_unlocked(pf->nargs++ ? ",\"" : "\"", pf->out);
    fputs_unlocked(key, pf->out);
    fputs_unlocked("\":", pf->out);
}

static void xp_tj_arg_i64(struct xp_pf *pf, const char *key, int64_t v)
{
    xp_tj_key(pf, key);
    xp_export_put_i64(pf->out, v);
}

static void xp_tj_arg_hex(struct xp_pf *pf, const char *key, uint64_t v)
{
    xp_tj_key(pf, key);
    putc_unlocked('"', pf->out);
    xp_export_put_hex(pf->out, v);
    putc_unlocked('"', pf->out);
}

static void xp_tj_arg_str(struct xp_pf *pf, const char *key, const char *s, size_t len)
{
    xp_tj_key(pf, key);
    xp_json_write_string(pf->out, s, len); /* NULL: null */
}

static void xp_tj_end(struct xp_pf *pf)
{
    fputs_unlocked("}}", pf->out); /* args, event */
}

static void xp_tj_start(struct xp_pf *pf)
{
    fputs("{\"traceEvents\":[", pf->out);
}

static void xp_tj_process(struct xp_pf *pf, const char *name, int name_len)
{
    xp_tj_ev(pf, "process_name", -1, NULL, "M", pf->base_ns, pf->pid);
    xp_tj_args(pf);
    xp_tj_key(pf, "name");
    xp_json_write_string(pf->out, name, name_len < 0 ? strlen(name) : (size_t)name_len);
    xp_tj_end(pf);
}

/* A thread's name; a stream's, and its place below the process's threads. */
static void xp_tj_track(struct xp_pf *pf, const struct xp_track *t, const char *name,
                        int64_t t_ns)
{
    xp_tj_ev(pf, "thread_name", -1, NULL, "M", t_ns, t->tid);
    xp_tj_args(pf);
    xp_tj_arg_str(pf, "name", name, strlen(name));
    xp_tj_end(pf);
    if (t->kind == XP_TRACK_THREAD)
        return;
    xp_tj_ev(pf, "thread_sort_index", -1, NULL, "M", t_ns, t->tid);
    xp_tj_args(pf);
    xp_tj_arg_i64(pf, "sort_index", t->tid);
    xp_tj_end(pf);
}

/* A complete event ("X"); a flow is Perfetto's flow events v2 (the flow's id
 * is the slices' bind_id). */
static void xp_tj_slice(struct xp_pf *pf, const struct xp_track *t, const char *name,
                        int name_len, const char *cat, int64_t start, int64_t dur,
                        struct xp_flow flow)
{
    xp_tj_ev(pf, name, name_len, cat, "X", start, t->tid);
    fputs_unlocked(",\"dur\":", pf->out);
    xp_tj_put_us(pf->out, dur);
    if (flow.id) {
        fputs_unlocked(",\"bind_id\":", pf->out);
        xp_export_put_i64(pf->out, (int64_t)flow.id);
        fputs_unlocked(flow.in ? ",\"flow_in\":true" : ",\"flow_out\":true", pf->out);
    }
    xp_tj_args(pf);
}

static void xp_tj_instant(struct xp_pf *pf, const struct xp_track *t, const char *name,
                          int name_len, const char *cat, int64_t t_ns)
{
    xp_tj_ev(pf, name, name_len, cat, "i", t_ns, t->tid);
    fputs(",\"s\":\"t\"", pf->out);
    xp_tj_args(pf);
}

/* Async events ("b"/"e", matched by cat and id): a range may end on
 * another thread. */
static void xp_tj_async(struct xp_pf *pf, const struct xp_track *t, const char *name,
                        int name_len, const char *cat, bool begin, uint64_t id, int64_t t_ns)
{
    xp_tj_ev(pf, name, name_len, cat, begin ? "b" : "e", t_ns, t->tid);
    fprintf(pf->out, ",\"id\":\"0x%" PRIx64 "\"", id);
    xp_tj_args(pf);
}

static void xp_tj_counter(struct xp_pf *pf, const char *name, int64_t id, bool first,
                          int64_t t_ns, int64_t value)
{
    (void)first;
    xp_tj_ev(pf, name, -1, "memory", "C", t_ns, pf->pid);
    if (id >= 0)
        fprintf(pf->out, ",\"id\":\"%" PRId64 "\"", id);
    xp_tj_args(pf);
    xp_tj_arg_i64(pf, "bytes", value);
    xp_tj_end(pf);
}

/* The end of the events, and the trace's "metadata" object: every meta row
 * about the run as a string (not the analyzer's own bookkeeping of the
 * frames it stored, which a `report` in between changes: the same run
 * exports the same trace). */
static int xp_tj_finish(struct xp_pf *pf, sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *st;
    int rc, n = 0;
    fputs("\n],\n\"displayTimeUnit\":\"ns\"", pf->out);
    if (sqlite3_prepare_v2(db,
                           "SELECT key, value FROM meta WHERE key NOT LIKE 'stack!_frames!_%' "
                           "ESCAPE '!' ORDER BY key",
                           -1, &st, NULL) !=
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
    fputs("}\n", pf->out);
    return 0;
}

const struct xp_tr_ops xp_tr_json_ops = {
    .start = xp_tj_start,
    .process = xp_tj_process,
    .track = xp_tj_track,
    .slice = xp_tj_slice,
    .slice_end = NULL, /* complete events */
    .instant = xp_tj_instant,
    .async = xp_tj_async,
    .counter = xp_tj_counter,
    .arg_i64 = xp_tj_arg_i64,
    .arg_hex = xp_tj_arg_hex,
    .arg_str = xp_tj_arg_str,
    .end = xp_tj_end,
    .finish = xp_tj_finish,
};
