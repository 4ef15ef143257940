/* export_trace.c: the trace of `xferprof export --format perfetto|perfetto-proto` apart from its format: events and their args handed to the format's emitter, the tracks of threads and streams, and slices kept nested. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "export_trace.h"

/* ---- events, through the format's emitter ------------------------------- */

/* t - base without overflow on any input (a corrupt row may hold anything). */
int64_t xp_tr_rel(const struct xp_pf *pf, int64_t t)
{
    int64_t r;
    if (__builtin_sub_overflow(t, pf->base_ns, &r))
        r = t < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

/* Formats that end slices with an event of their own (protobuf) need the
 * events in time order: before anything at t, every slice that ended by t
 * ends, earliest first.  Tracks are few (threads and streams), so a scan
 * finds the earliest. */
static void xp_tr_advance(struct xp_pf *pf, int64_t t)
{
    if (pf->ops->slice_end == NULL)
        return;
    while (pf->next_end <= t) {
        struct xp_track *m = NULL;
        for (size_t i = 0; i < pf->cap; i++) {
            struct xp_track *c = &pf->tracks[i];
            if (c->kind != 0 && c->depth > 0 &&
                (m == NULL || c->ends[c->depth - 1] < m->ends[m->depth - 1]))
                m = c;
        }
        pf->next_end = m ? m->ends[m->depth - 1] : INT64_MAX;
        if (m == NULL || pf->next_end > t)
            break;
        m->depth--;
        pf->ops->slice_end(pf, m, pf->next_end);
    }
}

void xp_tr_arg_i64(struct xp_pf *pf, const char *key, int64_t v)
{
    pf->ops->arg_i64(pf, key, v);
}

void xp_tr_arg_hex(struct xp_pf *pf, const char *key, int64_t v)
{
    pf->ops->arg_hex(pf, key, (uint64_t)v);
}

void xp_tr_arg_str(struct xp_pf *pf, const char *key, const char *s)
{
    pf->ops->arg_str(pf, key, s, s ? strlen(s) : 0);
}

/* Column i of st as a JSON string, null when NULL. */
void xp_tr_arg_col(struct xp_pf *pf, const char *key, sqlite3_stmt *st, int i)
{
    const char *s = (const char *)sqlite3_column_text(st, i);
    pf->ops->arg_str(pf, key, s, s ? (size_t)sqlite3_column_bytes(st, i) : 0);
}

/* "site": the name of the call site whose stacks.id is column i, and
 * "findings": the rules the report finds there, when known. */
void xp_tr_arg_site(struct xp_pf *pf, sqlite3_stmt *st, int i)
{
    int64_t id = sqlite3_column_int64(st, i);
    if (!pf->sites || id <= 0 || (uint64_t)id >= pf->sites->n)
        return;
    if (pf->sites->name[id])
        xp_tr_arg_str(pf, "site", pf->sites->name[id]);
    if (pf->sites->findings[id])
        xp_tr_arg_str(pf, "findings", pf->sites->findings[id]);
}

/* Column i as a JSON integer, null when NULL. */
void xp_tr_arg_coli(struct xp_pf *pf, const char *key, sqlite3_stmt *st, int i)
{
    if (sqlite3_column_type(st, i) == SQLITE_NULL)
        pf->ops->arg_str(pf, key, NULL, 0);
    else
        xp_tr_arg_i64(pf, key, sqlite3_column_int64(st, i));
}

void xp_tr_end(struct xp_pf *pf)
{
    pf->ops->end(pf);
}

void xp_tr_process(struct xp_pf *pf, const char *name, int name_len)
{
    pf->ops->process(pf, name, name_len);
}

void xp_tr_instant(struct xp_pf *pf, struct xp_track *t, const char *name, const char *cat,
                   int64_t t_ns)
{
    xp_tr_advance(pf, t_ns);
    pf->ops->instant(pf, t, name, -1, cat, t_ns);
}

void xp_tr_async(struct xp_pf *pf, struct xp_track *t, const char *name, int name_len,
                 const char *cat, bool begin, uint64_t id, int64_t t_ns)
{
    xp_tr_advance(pf, t_ns);
    pf->ops->async(pf, t, name, name_len, cat, begin, id, t_ns);
}

void xp_tr_counter(struct xp_pf *pf, const char *name, int64_t id, bool first, int64_t t_ns,
                   int64_t value)
{
    xp_tr_advance(pf, t_ns);
    pf->ops->counter(pf, name, id, first, t_ns, value);
}

int xp_tr_finish(struct xp_pf *pf, sqlite3 *db, char *err, size_t errlen)
{
    xp_tr_advance(pf, INT64_MAX);
    return pf->ops->finish(pf, db, err, errlen);
}

/* "4.0 MiB": the name of a copy or memset, short enough for a slice. */
/* ---- tracks --------------------------------------------------------------- */

static uint64_t xp_tr_track_hash(int kind, int64_t k1, int64_t k2)
{
    uint64_t h = (uint64_t)kind * 0x9E3779B97F4A7C15u;
    h ^= (uint64_t)k1 + 0x7F4A7C159E3779B9u + (h << 6) + (h >> 2);
    h ^= (uint64_t)k2 + 0x9E3779B97F4A7C15u + (h << 6) + (h >> 2);
    return h ^ (h >> 31);
}

static struct xp_track *xp_tr_track_slot(struct xp_track *v, size_t cap, int kind, int64_t k1,
                                         int64_t k2)
{
    size_t i = (size_t)xp_tr_track_hash(kind, k1, k2) & (cap - 1);
    while (v[i].kind != 0 && !(v[i].kind == kind && v[i].k1 == k1 && v[i].k2 == k2))
        i = (i + 1) & (cap - 1);
    return &v[i];
}

/* The track, created if new (*is_new set); NULL when out of memory. */
static struct xp_track *xp_tr_track_get(struct xp_pf *pf, int kind, int64_t k1, int64_t k2,
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
                *xp_tr_track_slot(nv, ncap, pf->tracks[i].kind, pf->tracks[i].k1,
                                  pf->tracks[i].k2) = pf->tracks[i];
        free(pf->tracks);
        pf->tracks = nv;
        pf->cap = ncap;
    }
    struct xp_track *t = xp_tr_track_slot(pf->tracks, pf->cap, kind, k1, k2);
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
struct xp_track *xp_tr_thread(struct xp_pf *pf, int64_t tid, int64_t t_ns)
{
    bool is_new;
    struct xp_track *t = xp_tr_track_get(pf, XP_TRACK_THREAD, tid, 0, &is_new);
    if (t && is_new) {
        char name[40];
        t->tid = tid;
        snprintf(name, sizeof name, "tid %" PRId64, tid);
        pf->ops->track(pf, t, name, t_ns);
    }
    return t;
}

/* The pseudo-thread of the stream an async operation was issued on.  The
 * per-thread default stream is one stream per thread (and per device);
 * cudaStreamLegacy is the legacy default stream, 0. */
struct xp_track *xp_tr_stream(struct xp_pf *pf, int64_t device, int64_t stream,
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
    struct xp_track *t = xp_tr_track_get(pf, kind, device, kind == XP_TRACK_STREAM ? stream : tid,
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
        pf->ops->track(pf, t, name, t_ns);
    }
    return t;
}

/* Keeps complete events on a track properly nested, which viewers need
 * (Perfetto drops slices that overlap without nesting): returns the dur to
 * write, shortened to end within the enclosing slice, and sets *clamped.
 * Calls of one thread never overlap; async operations issued to one stream
 * from two threads can. */
static int64_t xp_tr_nest(struct xp_track *t, int64_t start, int64_t dur, bool *clamped,
                          int64_t *end_out, bool *pushed)
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
    *pushed = t->depth < XP_NEST_MAX;
    if (*pushed)
        t->ends[t->depth++] = end;
    else if (dur > 0) {
        dur = 0;
        end = start;
        *clamped = true;
    }
    *end_out = end;
    return dur;
}

/* Starts a complete event on track t: nests it (xp_tr_nest), writes its head,
 * dur and flow and opens its args; xp_tr_slice_end closes it. */
void xp_tr_slice(struct xp_pf *pf, struct xp_track *t, const char *name, int name_len,
                 const char *cat, int64_t start, int64_t dur, struct xp_flow flow,
                 bool *clamped)
{
    bool pushed;
    int64_t end;
    xp_tr_advance(pf, start);
    dur = xp_tr_nest(t, start, dur, clamped, &end, &pushed);
    if (pushed && end < pf->next_end)
        pf->next_end = end;
    pf->unpushed = pushed ? NULL : t;
    pf->unpushed_end = end;
    pf->ops->slice(pf, t, name, name_len, cat, start, dur, flow);
}

/* xp_tr_slice on the thread of column tid_col, at columns start_col and
 * dur_col.  Returns false, having written nothing, when out of memory. */
bool xp_tr_thread_slice(struct xp_pf *pf, sqlite3_stmt *st, int tid_col, int start_col,
                        int dur_col, const char *name, int name_len, const char *cat,
                        struct xp_flow flow, bool *clamped)
{
    int64_t start = sqlite3_column_int64(st, start_col);
    struct xp_track *t = xp_tr_thread(pf, sqlite3_column_int64(st, tid_col), start);
    if (t == NULL)
        return false;
    xp_tr_slice(pf, t, name, name_len, cat, start, sqlite3_column_int64(st, dur_col), flow, clamped);
    return true;
}

void xp_tr_slice_end(struct xp_pf *pf, bool clamped)
{
    if (clamped)
        xp_tr_arg_i64(pf, "clamped", 1);
    xp_tr_end(pf);
    if (pf->unpushed && pf->ops->slice_end)
        pf->ops->slice_end(pf, pf->unpushed, pf->unpushed_end);
    pf->unpushed = NULL;
}
