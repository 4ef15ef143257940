/* export_perfetto_proto.c: the protobuf emitter of `xferprof export --format perfetto-proto` (xp_tr_proto_ops): Perfetto's own trace format, TracePackets of TrackDescriptors and TrackEvents, smaller and faster to load than JSON for runs of millions of copies. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "export_trace.h"
#include "xp_json.h"
#include "xp_protowire.h"

/* Field numbers and enum values of Perfetto's protos
 * (protos/perfetto/trace/: trace.proto, trace_packet.proto,
 * track_event/track_event.proto, track_descriptor.proto,
 * process_descriptor.proto, thread_descriptor.proto,
 * counter_descriptor.proto, debug_annotation.proto). */
enum {
    TRACE_PACKET = 1,
    PACKET_TIMESTAMP = 8, PACKET_SEQ_ID = 10, PACKET_TRACK_EVENT = 11, PACKET_INTERNED_DATA = 12,
    PACKET_SEQ_FLAGS = 13, PACKET_TRACK_DESCRIPTOR = 60,
    SEQ_INCREMENTAL_STATE_CLEARED = 1, SEQ_NEEDS_INCREMENTAL_STATE = 2,
    ID_EVENT_CATEGORIES = 1, ID_EVENT_NAMES = 2, ID_DEBUG_ANNOTATION_NAMES = 3,
    ID_DEBUG_ANNOTATION_STRING_VALUES = 29, INTERNED_IID = 1, INTERNED_NAME = 2,
    TD_UUID = 1, TD_NAME = 2, TD_PROCESS = 3, TD_THREAD = 4, TD_PARENT_UUID = 5, TD_COUNTER = 8,
    PD_PID = 1, PD_PROCESS_NAME = 6,
    THD_PID = 1, THD_TID = 2, THD_THREAD_NAME = 5,
    CD_UNIT = 3, UNIT_SIZE_BYTES = 3,
    TE_CATEGORY_IIDS = 3, TE_DEBUG_ANNOTATIONS = 4, TE_TYPE = 9, TE_NAME_IID = 10,
    TE_TRACK_UUID = 11, TE_CATEGORIES = 22, TE_NAME = 23,
    TE_COUNTER_VALUE = 30, TE_FLOW_IDS = 47, TE_TERMINATING_FLOW_IDS = 48,
    TYPE_SLICE_BEGIN = 1, TYPE_SLICE_END = 2, TYPE_INSTANT = 3, TYPE_COUNTER = 4,
    DA_NAME_IID = 1, DA_INT_VALUE = 4, DA_STRING_VALUE = 6, DA_NAME = 10, DA_STRING_VALUE_IID = 17,
};

/* Every packet is on one sequence: the file is written by one writer. */
#define XP_PB_SEQ 1

/* Track uuids: a kind in the low bits, so tracks of different kinds never
 * share one; the key is a tid (threads and streams, whose synthetic tids
 * are apart from real ones), a device, or an NVTX range id. */
enum { XP_PB_PROCESS = 1, XP_PB_TID, XP_PB_DEVICE_MEM, XP_PB_PINNED_MEM, XP_PB_RANGE };
static uint64_t xp_pb_uuid(int kind, int64_t key)
{
    return (uint64_t)key << 3 | (uint64_t)kind;
}

/* Starts a packet (at t_ns unless has_ts is false) in pf->pw. */
static void xp_pb_packet(struct xp_pf *pf, bool has_ts, int64_t t_ns)
{
    struct xp_pw *w = &pf->pw;
    xp_pw_reset(w);
    pf->pw_packet = xp_pw_open(w, TRACE_PACKET);
    if (has_ts)
        xp_pw_uint(w, PACKET_TIMESTAMP, (uint64_t)xp_tr_rel(pf, t_ns));
    xp_pw_uint(w, PACKET_SEQ_ID, XP_PB_SEQ);
    /* Events name their strings by iid: they need the sequence's interned
     * data, which the first packet starts afresh. */
    if (pf->nevents++ == 0)
        xp_pw_uint(w, PACKET_SEQ_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
    else if (has_ts)
        xp_pw_uint(w, PACKET_SEQ_FLAGS, SEQ_NEEDS_INCREMENTAL_STATE);
}

/* A string field, valid UTF-8 as protobuf's string type wants: each byte
 * of ill-formed UTF-8 (a name from the database may hold anything) is one
 * U+FFFD, as in the JSON trace.  NULL: no field. */
static void xp_pb_str(struct xp_pw *w, uint32_t field, const char *s, int len)
{
    if (s == NULL)
        return;
    const unsigned char *p = (const unsigned char *)s;
    size_t n = len < 0 ? strlen(s) : (size_t)len, out = 0, i, k;
    for (i = 0; i < n; i += k ? k : 1)
        out += (k = xp_json_utf8_len(p + i, n - i)) ? k : 3;
    if (out == n) { /* all well-formed: the common case */
        xp_pw_bytes(w, field, s, n);
        return;
    }
    xp_pw_tag(w, field, XP_PW_LEN);
    xp_pw_varint(w, out);
    for (i = 0; i < n; i += k ? k : 1) {
        k = xp_json_utf8_len(p + i, n - i);
        xp_pw_raw(w, k ? p + i : (const unsigned char *)"\xEF\xBF\xBD", k ? k : 3);
    }
}


/* ---- interning ----------------------------------------------------------- */

/* Names, categories, arg names and arg strings repeat on most events: each is
 * written once, in the InternedData of the packet that first uses it, and
 * named by its iid after that (Perfetto's incremental state).  The table is
 * bounded, so memory does not grow with the run: past XP_PB_INTERN_MAX
 * strings (a run whose every NVTX range has a name of its own) new ones are
 * written in full. */
#define XP_PB_INTERN_MAX (1u << 16)

struct xp_pb_islot {
    uint64_t hash;
    char *s;               /* NULL: a free slot */
    size_t n;
    uint32_t iid;
    uint8_t kind;
};

struct xp_pb_intern {
    struct xp_pb_islot *v; /* open addressing, power-of-two capacity */
    size_t cap, n;
    uint32_t next_iid[4];  /* by kind: iids start at 1 */
    struct xp_pw data;     /* InternedData of the packet being built */
};

enum { XP_PB_I_CATEGORY, XP_PB_I_NAME, XP_PB_I_ARG, XP_PB_I_VALUE };
static const uint32_t xp_pb_ifield[] = {ID_EVENT_CATEGORIES, ID_EVENT_NAMES,
                                         ID_DEBUG_ANNOTATION_NAMES,
                                         ID_DEBUG_ANNOTATION_STRING_VALUES};

static struct xp_pb_islot *xp_pb_islot(struct xp_pb_islot *v, size_t cap, uint64_t h, int kind,
                                       const char *s, size_t n)
{
    size_t i = (size_t)h & (cap - 1);
    while (v[i].s && !(v[i].hash == h && v[i].kind == kind && v[i].n == n &&
                       memcmp(v[i].s, s, n) == 0))
        i = (i + 1) & (cap - 1);
    return &v[i];
}

/* The iid of s (n bytes) as a string of kind, interned now if new; 0 when
 * it is to be written in full (the table is full, or memory is out). */
static uint32_t xp_pb_iid(struct xp_pf *pf, int kind, const char *s, size_t n)
{
    struct xp_pb_intern *in = pf->intern;
    if (in == NULL && (in = pf->intern = calloc(1, sizeof *in)) == NULL)
        return 0;
    uint64_t h = XXH3_64bits(s, n) ^ (uint64_t)kind;
    if (in->cap) {
        struct xp_pb_islot *e = xp_pb_islot(in->v, in->cap, h, kind, s, n);
        if (e->s)
            return e->iid;
    }
    if (in->n >= XP_PB_INTERN_MAX)
        return 0;
    if ((in->n + 1) * 2 > in->cap) {
        size_t ncap = in->cap ? in->cap * 2 : 256;
        struct xp_pb_islot *nv = calloc(ncap, sizeof *nv);
        if (nv == NULL)
            return 0;
        for (size_t i = 0; i < in->cap; i++)
            if (in->v[i].s)
                *xp_pb_islot(nv, ncap, in->v[i].hash, in->v[i].kind, in->v[i].s, in->v[i].n) =
                    in->v[i];
        free(in->v);
        in->v = nv;
        in->cap = ncap;
    }
    char *copy = malloc(n + 1);
    if (copy == NULL)
        return 0;
    memcpy(copy, s, n);
    copy[n] = '\0';
    struct xp_pb_islot *e = xp_pb_islot(in->v, in->cap, h, kind, s, n);
    *e = (struct xp_pb_islot){h, copy, n, ++in->next_iid[kind], (uint8_t)kind};
    in->n++;
    size_t m = xp_pw_open(&in->data, xp_pb_ifield[kind]);
    xp_pw_uint(&in->data, INTERNED_IID, e->iid);
    xp_pb_str(&in->data, INTERNED_NAME, s, (int)n);
    xp_pw_close(&in->data, m);
    return e->iid;
}

/* A string field by iid (iid_field) when it can be interned, else in full. */
static void xp_pb_istr(struct xp_pf *pf, int kind, uint32_t iid_field, uint32_t field,
                       const char *s, int len)
{
    if (s == NULL)
        return;
    size_t n = len < 0 ? strlen(s) : (size_t)len;
    uint32_t iid = n <= INT32_MAX ? xp_pb_iid(pf, kind, s, n) : 0;
    if (iid)
        xp_pw_uint(&pf->pw, iid_field, iid);
    else
        xp_pb_str(&pf->pw, field, s, (int)n);
}

static void xp_pb_release(struct xp_pf *pf)
{
    struct xp_pb_intern *in = pf->intern;
    if (in == NULL)
        return;
    for (size_t i = 0; i < in->cap; i++)
        free(in->v[i].s);
    free(in->v);
    xp_pw_free(&in->data);
    free(in);
    pf->intern = NULL;
}

/* Ends the packet, with the strings it interned, and writes it (a Trace's
 * repeated field 1). */
static void xp_pb_put(struct xp_pf *pf)
{
    struct xp_pb_intern *in = pf->intern;
    if (in && in->data.len) {
        xp_pw_bytes(&pf->pw, PACKET_INTERNED_DATA, in->data.p, in->data.len);
        if (in->data.oom)
            pf->pw.oom = true;
        xp_pw_reset(&in->data);
    }
    xp_pw_close(&pf->pw, pf->pw_packet);
    if (pf->pw.oom)
        pf->oom = true;
    else
        fwrite_unlocked(pf->pw.p, 1, pf->pw.len, pf->out);
}

/* A TrackDescriptor packet: uuid under the process (parent 0: none), named
 * name unless NULL; the caller adds process/thread/counter and xp_pb_put. */
static struct xp_pw *xp_pb_track(struct xp_pf *pf, uint64_t uuid, uint64_t parent,
                                 const char *name, int len)
{
    struct xp_pw *w = &pf->pw;
    xp_pb_packet(pf, false, 0);
    pf->pw_event = xp_pw_open(w, PACKET_TRACK_DESCRIPTOR);
    xp_pw_uint(w, TD_UUID, uuid);
    if (parent)
        xp_pw_uint(w, TD_PARENT_UUID, parent);
    xp_pb_str(w, TD_NAME, name, len);
    return w;
}

static void xp_pb_track_put(struct xp_pf *pf)
{
    xp_pw_close(&pf->pw, pf->pw_event);
    xp_pb_put(pf);
}

/* Starts a TrackEvent of type on track uuid; xp_pb_end writes it. */
static void xp_pb_event(struct xp_pf *pf, int type, uint64_t uuid, int64_t t_ns, const char *name,
                        int len, const char *cat)
{
    struct xp_pw *w = &pf->pw;
    xp_pb_packet(pf, true, t_ns);
    pf->pw_event = xp_pw_open(w, PACKET_TRACK_EVENT);
    xp_pw_uint(w, TE_TYPE, (uint64_t)type);
    xp_pw_uint(w, TE_TRACK_UUID, uuid);
    xp_pb_istr(pf, XP_PB_I_CATEGORY, TE_CATEGORY_IIDS, TE_CATEGORIES, cat, -1);
    xp_pb_istr(pf, XP_PB_I_NAME, TE_NAME_IID, TE_NAME, name, len);
}

static void xp_pb_end(struct xp_pf *pf)
{
    xp_pw_close(&pf->pw, pf->pw_event);
    xp_pb_put(pf);
}

static void xp_pb_start(struct xp_pf *pf)
{
    (void)pf; /* a Trace has no header: it is its packets */
}

static void xp_pb_process(struct xp_pf *pf, const char *name, int len)
{
    struct xp_pw *w = xp_pb_track(pf, xp_pb_uuid(XP_PB_PROCESS, 0), 0, NULL, 0);
    size_t m = xp_pw_open(w, TD_PROCESS);
    xp_pw_int(w, PD_PID, pf->pid);
    xp_pb_str(w, PD_PROCESS_NAME, name, len);
    xp_pw_close(w, m);
    xp_pb_track_put(pf);
}

/* A thread is a thread track; a stream a named track of the process. */
static void xp_pb_track_of(struct xp_pf *pf, const struct xp_track *t, const char *name,
                           int64_t t_ns)
{
    (void)t_ns;
    uint64_t parent = xp_pb_uuid(XP_PB_PROCESS, 0);
    bool thread = t->kind == XP_TRACK_THREAD;
    struct xp_pw *w =
        xp_pb_track(pf, xp_pb_uuid(XP_PB_TID, t->tid), parent, thread ? NULL : name, -1);
    if (thread) {
        size_t m = xp_pw_open(w, TD_THREAD);
        xp_pw_int(w, THD_PID, pf->pid);
        xp_pw_int(w, THD_TID, t->tid);
        xp_pb_str(w, THD_THREAD_NAME, name, -1);
        xp_pw_close(w, m);
    }
    xp_pb_track_put(pf);
}

/* A slice begins here and ends with xp_pb_slice_end (time order); the flow
 * from the call to the async work is flow_ids on the call's slice and
 * terminating_flow_ids on the work's. */
static void xp_pb_slice(struct xp_pf *pf, const struct xp_track *t, const char *name, int len,
                        const char *cat, int64_t start, int64_t dur, struct xp_flow flow)
{
    (void)dur;
    xp_pb_event(pf, TYPE_SLICE_BEGIN, xp_pb_uuid(XP_PB_TID, t->tid), start, name, len, cat);
    if (flow.id)
        xp_pw_fixed64(&pf->pw, flow.in ? TE_TERMINATING_FLOW_IDS : TE_FLOW_IDS, flow.id);
}

static void xp_pb_slice_end(struct xp_pf *pf, const struct xp_track *t, int64_t end)
{
    xp_pb_event(pf, TYPE_SLICE_END, xp_pb_uuid(XP_PB_TID, t->tid), end, NULL, 0, NULL);
    xp_pb_end(pf);
}

static void xp_pb_instant(struct xp_pf *pf, const struct xp_track *t, const char *name, int len,
                          const char *cat, int64_t t_ns)
{
    xp_pb_event(pf, TYPE_INSTANT, xp_pb_uuid(XP_PB_TID, t->tid), t_ns, name, len, cat);
}

/* A range that may end on another thread: a track of its own under the
 * process, named after it, created at its begin. */
static void xp_pb_async(struct xp_pf *pf, const struct xp_track *t, const char *name, int len,
                        const char *cat, bool begin, uint64_t id, int64_t t_ns)
{
    (void)t;
    uint64_t uuid = xp_pb_uuid(XP_PB_RANGE, (int64_t)id);
    if (begin) {
        xp_pb_track(pf, uuid, xp_pb_uuid(XP_PB_PROCESS, 0), name ? name : "", len);
        xp_pb_track_put(pf);
        xp_pb_event(pf, TYPE_SLICE_BEGIN, uuid, t_ns, name, len, cat);
    } else
        xp_pb_event(pf, TYPE_SLICE_END, uuid, t_ns, NULL, 0, NULL);
}

static void xp_pb_counter(struct xp_pf *pf, const char *name, int64_t id, bool first,
                          int64_t t_ns, int64_t value)
{
    uint64_t uuid = id >= 0 ? xp_pb_uuid(XP_PB_DEVICE_MEM, id) : xp_pb_uuid(XP_PB_PINNED_MEM, 0);
    if (first) {
        char full[96];
        if (id >= 0)
            snprintf(full, sizeof full, "%s (device %" PRId64 ")", name, id);
        else
            snprintf(full, sizeof full, "%s", name);
        struct xp_pw *w = xp_pb_track(pf, uuid, xp_pb_uuid(XP_PB_PROCESS, 0), full, -1);
        size_t m = xp_pw_open(w, TD_COUNTER);
        xp_pw_uint(w, CD_UNIT, UNIT_SIZE_BYTES);
        xp_pw_close(w, m);
        xp_pb_track_put(pf);
    }
    xp_pb_event(pf, TYPE_COUNTER, uuid, t_ns, NULL, 0, NULL);
    xp_pw_int(&pf->pw, TE_COUNTER_VALUE, value);
    xp_pb_end(pf);
}

/* Each arg is a DebugAnnotation: its name and a value; none for null. */
static size_t xp_pb_arg(struct xp_pf *pf, const char *key)
{
    size_t m = xp_pw_open(&pf->pw, TE_DEBUG_ANNOTATIONS);
    xp_pb_istr(pf, XP_PB_I_ARG, DA_NAME_IID, DA_NAME, key, -1);
    return m;
}

static void xp_pb_arg_i64(struct xp_pf *pf, const char *key, int64_t v)
{
    size_t m = xp_pb_arg(pf, key);
    xp_pw_int(&pf->pw, DA_INT_VALUE, v);
    xp_pw_close(&pf->pw, m);
}

/* As in the JSON trace: a string "0x..." (a pointer_value would be shown
 * in hex too, but the JSON trace's readers compare strings). */
static void xp_pb_arg_hex(struct xp_pf *pf, const char *key, uint64_t v)
{
    char s[24];
    size_t m = xp_pb_arg(pf, key);
    xp_pb_str(&pf->pw, DA_STRING_VALUE, s, snprintf(s, sizeof s, "0x%" PRIx64, v));
    xp_pw_close(&pf->pw, m);
}

static void xp_pb_arg_str(struct xp_pf *pf, const char *key, const char *s, size_t len)
{
    size_t m = xp_pb_arg(pf, key);
    if (len <= INT32_MAX)
        xp_pb_istr(pf, XP_PB_I_VALUE, DA_STRING_VALUE_IID, DA_STRING_VALUE, s, (int)len);
    xp_pw_close(&pf->pw, m);
}

/* The JSON trace's metadata (meta rows) has no place in a TrackEvent
 * trace: the proto trace leaves it out (docs/export.md). */
static int xp_pb_finish(struct xp_pf *pf, sqlite3 *db, char *err, size_t errlen)
{
    (void)pf, (void)db, (void)err, (void)errlen;
    return 0;
}

const struct xp_tr_ops xp_tr_proto_ops = {
    .start = xp_pb_start,
    .process = xp_pb_process,
    .track = xp_pb_track_of,
    .slice = xp_pb_slice,
    .slice_end = xp_pb_slice_end,
    .instant = xp_pb_instant,
    .async = xp_pb_async,
    .counter = xp_pb_counter,
    .arg_i64 = xp_pb_arg_i64,
    .arg_hex = xp_pb_arg_hex,
    .arg_str = xp_pb_arg_str,
    .end = xp_pb_end,
    .finish = xp_pb_finish,
    .release = xp_pb_release,
};
