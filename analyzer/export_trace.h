/* export_trace.h: the trace's tracks and events as export_trace.c writes them, for the sources of export_perfetto.c. */
#ifndef XP_EXPORT_TRACE_H
#define XP_EXPORT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sqlite3.h>

#include "xp_export.h"

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

/* A flow arrow between two slices (Perfetto's flow events v2: the flow's
 * id is the slices' bind_id); none when id is 0. */
struct xp_flow {
    uint64_t id;
    bool in;               /* this slice is where the arrow ends */
};
#define XP_TR_NO_FLOW ((struct xp_flow){0, false})

/* Starts an event: name, cat, ph, ts, pid, tid.  name_len -1: strlen. */
void xp_tr_ev(struct xp_pf *pf, const char *name, int name_len, const char *cat,
              const char *ph, int64_t t_ns, int64_t tid);

/* Then, in this order: its dur (slices), the args object opened, each arg
 * (key, then a value: an integer, a hex string, a string), the event closed. */
void xp_tr_dur(struct xp_pf *pf, int64_t dur_ns);
void xp_tr_args(struct xp_pf *pf);
void xp_tr_key(struct xp_pf *pf, const char *key);
void xp_tr_arg_i64(struct xp_pf *pf, const char *key, int64_t v);
void xp_tr_arg_hex(struct xp_pf *pf, const char *key, int64_t v);
void xp_tr_arg_str(struct xp_pf *pf, const char *key, const char *s);

/* Column i of st as a JSON string, null when NULL. */
void xp_tr_arg_col(struct xp_pf *pf, const char *key, sqlite3_stmt *st, int i);

/* "site": the name of the call site whose stacks.id is column i, and
 * "findings": the rules the report finds there, when known. */
void xp_tr_arg_site(struct xp_pf *pf, sqlite3_stmt *st, int i);

/* Column i as a JSON integer, null when NULL. */
void xp_tr_arg_coli(struct xp_pf *pf, const char *key, sqlite3_stmt *st, int i);

/* Closes the args and the event. */
void xp_tr_end(struct xp_pf *pf);

/* "4.0 MiB": the name of a copy or memset, short enough for a slice. */
void xp_tr_fmt_bytes(char *buf, size_t n, int64_t b);

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
