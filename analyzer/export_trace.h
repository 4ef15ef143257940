/* export_trace.h: the trace's tracks and events, written through a format's emitter (JSON: export_trace_json.c, protobuf: export_perfetto_proto.c), for the sources of export_perfetto.c. */
#ifndef XP_EXPORT_TRACE_H
#define XP_EXPORT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "xp_export.h"
#include "xp_protowire.h"

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

/* A flow arrow between two slices (Perfetto's flow events v2: the flow's
 * id is the slices' bind_id); none when id is 0. */
struct xp_flow {
    uint64_t id;
    bool in;               /* this slice is where the arrow ends */
};
#define XP_TR_NO_FLOW ((struct xp_flow){0, false})

struct xp_pf;

/* What a trace format writes.  Events (slice, instant, async) open their
 * args; arg_* add one each; end closes the event.  process, track and
 * counter are complete.  Times are absolute ns (the writer subtracts
 * base_ns); name_len -1: strlen. */
struct xp_tr_ops {
    void (*start)(struct xp_pf *pf);
    /* The process, named (its command line). */
    void (*process)(struct xp_pf *pf, const char *name, int name_len);
    /* Track t named, before its first event at t_ns. */
    void (*track)(struct xp_pf *pf, const struct xp_track *t, const char *name, int64_t t_ns);
    /* A slice of dur on t (already nested). */
    void (*slice)(struct xp_pf *pf, const struct xp_track *t, const char *name, int name_len,
                  const char *cat, int64_t start, int64_t dur, struct xp_flow flow);
    /* The end of t's innermost slice, at end; NULL when slices are written
     * complete (then nothing is written when they end). */
    void (*slice_end)(struct xp_pf *pf, const struct xp_track *t, int64_t end);
    /* An instant on thread track t. */
    void (*instant)(struct xp_pf *pf, const struct xp_track *t, const char *name, int name_len,
                    const char *cat, int64_t t_ns);
    /* The begin or end of async range id, issued from thread track t. */
    void (*async)(struct xp_pf *pf, const struct xp_track *t, const char *name, int name_len,
                  const char *cat, bool begin, uint64_t id, int64_t t_ns);
    /* Counter name (of device id, -1: none) now value; first: its first value. */
    void (*counter)(struct xp_pf *pf, const char *name, int64_t id, bool first, int64_t t_ns,
                    int64_t value);
    void (*arg_i64)(struct xp_pf *pf, const char *key, int64_t v);
    void (*arg_hex)(struct xp_pf *pf, const char *key, uint64_t v);
    /* A string arg; s NULL: null. */
    void (*arg_str)(struct xp_pf *pf, const char *key, const char *s, size_t len);
    void (*end)(struct xp_pf *pf);
    /* After the last event: the format's trailer.  0, or -1 with err set. */
    int (*finish)(struct xp_pf *pf, sqlite3 *db, char *err, size_t errlen);
    /* Frees what the format kept (after finish, or on an error); may be NULL. */
    void (*release)(struct xp_pf *pf);
};

extern const struct xp_tr_ops xp_tr_json_ops, xp_tr_proto_ops;

/* The output's state.  Owned by one xp_export_perfetto call. */
struct xp_pf {
    FILE *out;
    const struct xp_tr_ops *ops;
    int64_t pid, base_ns;
    uint64_t nevents;
    int nargs;
    struct xp_track *tracks; /* open addressing, power-of-two capacity */
    size_t cap, ntracks, nstreams;
    int64_t next_end;        /* slice_end formats: no open slice ends before this */
    struct xp_track *unpushed; /* slice_end formats: the open slice is too deep to */
    int64_t unpushed_end;      /* be remembered: it ends here, once its args are written */
    struct { int64_t device, live; } *devs; /* live device bytes per device */
    size_t ndevs;
    int64_t pinned_live;
    bool pinned_seen;
    bool oom;
    const struct xp_sites *sites; /* call-site names by stack id, may be NULL */
    struct xp_pw pw;         /* protobuf: the packet being built */
    size_t pw_packet, pw_event; /* protobuf: marks of the open packet and TrackEvent */
    struct xp_pb_intern *intern; /* protobuf: the strings interned so far */
};

/* t - base without overflow on any input (a corrupt row may hold anything). */
int64_t xp_tr_rel(const struct xp_pf *pf, int64_t t);

void xp_tr_arg_i64(struct xp_pf *pf, const char *key, int64_t v);
void xp_tr_arg_hex(struct xp_pf *pf, const char *key, int64_t v);
void xp_tr_arg_str(struct xp_pf *pf, const char *key, const char *s);

/* Column i of st as a string arg, null when NULL. */
void xp_tr_arg_col(struct xp_pf *pf, const char *key, sqlite3_stmt *st, int i);

/* "site": the name of the call site whose stacks.id is column i, and
 * "findings": the rules the report finds there, when known. */
void xp_tr_arg_site(struct xp_pf *pf, sqlite3_stmt *st, int i);

/* Column i as an integer arg, null when NULL. */
void xp_tr_arg_coli(struct xp_pf *pf, const char *key, sqlite3_stmt *st, int i);

/* Closes the args and the event. */
void xp_tr_end(struct xp_pf *pf);

/* The process (first); an instant on t; async range id's begin or end; a
 * counter's new value (xp_tr_ops). */
void xp_tr_process(struct xp_pf *pf, const char *name, int name_len);
void xp_tr_instant(struct xp_pf *pf, struct xp_track *t, const char *name, const char *cat,
                   int64_t t_ns);
void xp_tr_async(struct xp_pf *pf, struct xp_track *t, const char *name, int name_len,
                 const char *cat, bool begin, uint64_t id, int64_t t_ns);
void xp_tr_counter(struct xp_pf *pf, const char *name, int64_t id, bool first, int64_t t_ns,
                   int64_t value);

/* After the last event: ends the slices still open and writes the trailer. */
int xp_tr_finish(struct xp_pf *pf, sqlite3 *db, char *err, size_t errlen);

/* The track of thread tid, named ("tid N") at its first event. */
struct xp_track *xp_tr_thread(struct xp_pf *pf, int64_t tid, int64_t t_ns);

/* The pseudo-thread of the stream an async operation was issued on.  The
 * per-thread default stream is one stream per thread (and per device);
 * cudaStreamLegacy is the legacy default stream, 0. */
struct xp_track *xp_tr_stream(struct xp_pf *pf, int64_t device, int64_t stream,
                              const char *api, int64_t tid, int64_t t_ns);

/* Starts a complete event on track t: nests it (xp_tr_nest), writes its head,
 * dur and flow and opens its args; xp_tr_slice_end closes it. */
void xp_tr_slice(struct xp_pf *pf, struct xp_track *t, const char *name, int name_len,
                 const char *cat, int64_t start, int64_t dur, struct xp_flow flow,
                 bool *clamped);

/* xp_tr_slice on the thread of column tid_col, at columns start_col and
 * dur_col.  Returns false, having written nothing, when out of memory. */
bool xp_tr_thread_slice(struct xp_pf *pf, sqlite3_stmt *st, int tid_col, int start_col,
                        int dur_col, const char *name, int name_len, const char *cat,
                        struct xp_flow flow, bool *clamped);

void xp_tr_slice_end(struct xp_pf *pf, bool clamped);

#endif
