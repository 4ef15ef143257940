/* drv_capture.c: stream capture: capture sequences, the streams and events that take part in them, the thread capture modes, and the documented errors of what may not run while a stream captures. */
#include "xpsim_driver.h"
#include "xpsim_graph.h"
#include "xpsim_stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/*
 * A capture sequence starts at cuStreamBeginCapture on its origin stream and
 * owns a graph.  Each stream taking part (the origin, and every stream that
 * waited on an event recorded in the sequence) has a set of capture
 * dependencies: the nodes its next captured work will depend on.  An event
 * recorded in a capturing stream takes a copy of that set instead of being
 * recorded on the device.
 *
 * One lock guards all of it; graph objects are reached only through
 * xpsim_graph_* (which take the graph lock inside: capture lock first).
 * Every hook starts with a lock-free test of g_captures, so that streams pay
 * nothing while no capture exists (event states die with their sequence).
 */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int g_captures;          /* sequences in g_seqs */
static uint64_t g_next_id;             /* g_lock; ids start at 1 */

typedef struct sequence {
    struct sequence *next;
    uint64_t id;
    CUgraph graph;
    CUstream origin;
    CUstreamCaptureMode mode;
    pthread_t thread;                  /* that began it */
    bool invalid;
} sequence;

/* Capture dependencies of a stream or an event. */
typedef struct dep_set {
    CUgraphNode *nodes;
    CUgraphEdgeData *edges;            /* all zero: cuStreamGetCaptureInfo_v3 */
    size_t n, cap;
} dep_set;

typedef struct member {
    struct member *next;
    const void *handle;                /* CUstream or CUevent */
    sequence *seq;
    dep_set deps;
} member;

static sequence *g_seqs;
static member *g_streams;
static member *g_events;

/* The calling thread's capture interaction mode (cuThreadExchangeStreamCaptureMode). */
static _Thread_local CUstreamCaptureMode t_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

static bool no_captures(void)
{
    return atomic_load_explicit(&g_captures, memory_order_acquire) == 0;
}

static member *find(member *list, const void *handle)
{
    for (member *m = list; m; m = m->next)
        if (m->handle == handle)
            return m;
    return NULL;
}

static bool deps_reserve(dep_set *d, size_t n)
{
    if (n <= d->cap)
        return true;
    size_t cap = n < 4 ? 4 : 2 * n;
    CUgraphNode *nodes = realloc(d->nodes, cap * sizeof *nodes);
    if (nodes == NULL)
        return false;
    d->nodes = nodes;
    CUgraphEdgeData *edges = realloc(d->edges, cap * sizeof *edges);
    if (edges == NULL)
        return false;
    memset(edges, 0, cap * sizeof *edges);
    d->edges = edges;
    d->cap = cap;
    return true;
}

static bool deps_copy(dep_set *to, const dep_set *from)
{
    if (!deps_reserve(to, from->n))
        return false;
    if (from->n > 0)
        memcpy(to->nodes, from->nodes, from->n * sizeof *to->nodes);
    to->n = from->n;
    return true;
}

/* to := to U from (a join). */
static bool deps_merge(dep_set *to, const dep_set *from)
{
    if (!deps_reserve(to, to->n + from->n))
        return false;
    for (size_t i = 0; i < from->n; i++) {
        bool have = false;
        for (size_t k = 0; k < to->n && !have; k++)
            have = to->nodes[k] == from->nodes[i];
        if (!have)
            to->nodes[to->n++] = from->nodes[i];
    }
    return true;
}

static member *member_new(member **list, const void *handle, sequence *seq)
{
    member *m = calloc(1, sizeof *m);
    if (m == NULL)
        return NULL;
    m->handle = handle;
    m->seq = seq;
    m->next = *list;
    *list = m;
    return m;
}

static void member_free(member **list, member *m)
{
    for (member **pp = list; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    free(m->deps.nodes);
    free(m->deps.edges);
    free(m);
}

/* Ends a sequence: its streams stop capturing, its events forget it.  The
 * graph is the caller's (handed out, or freed). */
static void sequence_end_locked(sequence *seq)
{
    for (member **list = &g_streams; list != NULL; list = list == &g_streams ? &g_events : NULL)
        for (member *m = *list, *next; m; m = next) {
            next = m->next;
            if (m->seq == seq)
                member_free(list, m);
        }
    for (sequence **pp = &g_seqs; *pp; pp = &(*pp)->next)
        if (*pp == seq) {
            *pp = seq->next;
            break;
        }
    free(seq);
    atomic_fetch_sub_explicit(&g_captures, 1, memory_order_release);
}

static bool is_legacy(CUstream s)
{
    CUstream legacy;
    return xpsim_stream_resolve(CU_STREAM_LEGACY, false, xpsim_stream_device(s), &legacy) ==
               CUDA_SUCCESS && legacy == s;
}

/* The legacy stream s would depend on a capturing blocking stream of its
 * device: "the legacy stream is in an unusable state until the blocking
 * stream capture is terminated".  invalidate: also invalidate those captures
 * (every use but the capture status queries does). */
static bool implicit_locked(CUstream s, bool invalidate)
{
    if (!is_legacy(s))
        return false;
    bool hit = false;
    for (member *m = g_streams; m; m = m->next) {
        CUstream c = (CUstream)m->handle;
        if (xpsim_stream_device(c) == xpsim_stream_device(s) &&
            !(xpsim_stream_flags(c) & CU_STREAM_NON_BLOCKING)) {
            hit = true;
            if (invalidate)
                m->seq->invalid = true;
        }
    }
    return hit;
}

/* Adds a node after the stream's capture dependencies; they become it. */
static CUresult add_node_locked(member *sm, const xpsim_node_params *p)
{
    if (sm->seq->invalid)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    if (!deps_reserve(&sm->deps, 1))
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUgraphNode nd;
    CUresult rc = xpsim_graph_add(sm->seq->graph, sm->deps.nodes, sm->deps.n, p, &nd);
    if (rc != CUDA_SUCCESS)
        return rc;
    sm->deps.nodes[0] = nd;
    sm->deps.n = 1;
    xpsim_debug("capture %llu: stream %p adds node %p (type %d)",
                (unsigned long long)sm->seq->id, (void *)sm->handle, (void *)nd, (int)p->type);
    return CUDA_SUCCESS;
}

CUresult xpsim_capture_work(CUstream s, const xpsim_node_params *p, bool *captured)
{
    *captured = false;
    if (no_captures())
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    member *sm = find(g_streams, s);
    if (sm != NULL) {
        *captured = true;
        rc = add_node_locked(sm, p);
    } else if (implicit_locked(s, true)) {
        *captured = true;
        rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

CUresult xpsim_capture_sync(CUstream s)
{
    if (no_captures())
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    member *sm = find(g_streams, s);
    if (sm != NULL) {
        sm->seq->invalid = true;
        rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    } else if (implicit_locked(s, true)) {
        rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* cuThreadExchangeStreamCaptureMode's rules: in global mode a thread may not
 * make a potentially unsafe call while it has a capture of its own not begun
 * in relaxed mode, or while another thread has one begun in global mode; in
 * thread-local mode only its own count; in relaxed mode nothing does. */
CUresult xpsim_capture_unsafe(void)
{
    if (no_captures() || t_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    pthread_t self = pthread_self();
    pthread_mutex_lock(&g_lock);
    for (sequence *q = g_seqs; q; q = q->next) {
        bool own = pthread_equal(q->thread, self) && q->mode != CU_STREAM_CAPTURE_MODE_RELAXED;
        bool other = !pthread_equal(q->thread, self) && q->mode == CU_STREAM_CAPTURE_MODE_GLOBAL;
        if (own || (t_mode == CU_STREAM_CAPTURE_MODE_GLOBAL && other)) {
            q->invalid = true;
            rc = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

CUresult xpsim_capture_event_record(CUevent e, CUstream s, unsigned int flags, bool *captured)
{
    *captured = false;
    if (no_captures())
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    member *sm = find(g_streams, s);
    member *em = find(g_events, e);
    if (sm != NULL) {
        *captured = true;
        if (sm->seq->invalid) {
            rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else if (flags & CU_EVENT_RECORD_EXTERNAL) {
            xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_EVENT_RECORD, .u.event = e};
            rc = add_node_locked(sm, &p);
        } else {
            if (em != NULL && em->seq != sm->seq) {
                member_free(&g_events, em);
                em = NULL;
            }
            if (em == NULL && (em = member_new(&g_events, e, sm->seq)) == NULL)
                rc = CUDA_ERROR_OUT_OF_MEMORY;
            else if (!deps_copy(&em->deps, &sm->deps))
                rc = CUDA_ERROR_OUT_OF_MEMORY;
        }
    } else if (implicit_locked(s, true)) {
        *captured = true;
        rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    } else if (em != NULL) {
        member_free(&g_events, em);   /* recorded on the device again */
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* The "Cross-stream Dependencies and Events" rules of the programming guide:
 * a stream that waits on an event recorded in a capture joins it (fork); a
 * capturing stream that waits on one of its own capture's events takes on
 * its dependencies too (join); "the event being waited upon [must be]
 * recorded into the same capture graph". */
CUresult xpsim_capture_wait_event(CUstream s, CUevent e, unsigned int flags, bool *captured)
{
    *captured = false;
    if (no_captures())
        return CUDA_SUCCESS;
    CUresult rc = CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    member *sm = find(g_streams, s);
    member *em = find(g_events, e);
    if (sm != NULL) {
        *captured = true;
        if (sm->seq->invalid) {
            rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else if (flags & CU_EVENT_WAIT_EXTERNAL) {
            xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_WAIT_EVENT, .u.event = e};
            rc = add_node_locked(sm, &p);
        } else if (em != NULL && em->seq == sm->seq) {
            if (!deps_merge(&sm->deps, &em->deps))
                rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            sm->seq->invalid = true;
            if (em != NULL)
                em->seq->invalid = true;
            rc = CUDA_ERROR_STREAM_CAPTURE_ISOLATION;
        }
    } else if (em != NULL) {
        *captured = true;
        if (is_legacy(s)) {
            /* The legacy stream cannot capture (cuStreamBeginCapture says so). */
            em->seq->invalid = true;
            rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        } else if ((sm = member_new(&g_streams, s, em->seq)) == NULL ||
                   !deps_copy(&sm->deps, &em->deps)) {
            rc = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            xpsim_debug("capture %llu: stream %p joins", (unsigned long long)em->seq->id,
                        (void *)s);
        }
    } else if (implicit_locked(s, true)) {
        *captured = true;
        rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

CUresult xpsim_capture_event_check(CUevent e)
{
    if (no_captures())
        return CUDA_SUCCESS;
    pthread_mutex_lock(&g_lock);
    bool captured = find(g_events, e) != NULL;
    pthread_mutex_unlock(&g_lock);
    return captured ? CUDA_ERROR_CAPTURED_EVENT : CUDA_SUCCESS;
}

void xpsim_capture_event_gone(CUevent e)
{
    if (no_captures())
        return;
    pthread_mutex_lock(&g_lock);
    member *em = find(g_events, e);
    if (em != NULL)
        member_free(&g_events, em);
    pthread_mutex_unlock(&g_lock);
}

/* A destroyed origin ends its sequence (nobody can end it any more); another
 * destroyed member just leaves it, invalidated. */
void xpsim_capture_stream_gone(CUstream s)
{
    if (no_captures())
        return;
    pthread_mutex_lock(&g_lock);
    member *sm = find(g_streams, s);
    if (sm != NULL) {
        sequence *seq = sm->seq;
        seq->invalid = true;
        member_free(&g_streams, sm);
        if (seq->origin == s) {
            CUgraph g = seq->graph;
            sequence_end_locked(seq);
            xpsim_graph_set_capturing(g, false);
            xpsim_graph_free(g);
        }
    }
    pthread_mutex_unlock(&g_lock);
}

/* ---- entry points ---------------------------------------------------------- */

static CUresult enter_stream(CUstream h, bool ptds, CUstream *out)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    return xpsim_stream_resolve(h, ptds, dev, out);
}

static CUresult begin_capture(CUstream h, CUstreamCaptureMode mode, bool ptds)
{
    CUstream s;
    CUresult rc = enter_stream(h, ptds, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    /* "Capture may not be initiated if stream is CU_STREAM_LEGACY." */
    if (is_legacy(s))
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    sequence *seq = calloc(1, sizeof *seq);
    CUgraph g = xpsim_graph_new();
    if (seq == NULL || g == NULL) {
        free(seq);
        if (g != NULL)
            xpsim_graph_free(g);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_lock(&g_lock);
    /* "it may only be initiated if the stream is not already in capture mode" */
    if (find(g_streams, s) != NULL) {
        rc = CUDA_ERROR_ILLEGAL_STATE;
    } else if (member_new(&g_streams, s, seq) == NULL) {
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    } else {
        *seq = (sequence){.next = g_seqs, .id = ++g_next_id, .graph = g, .origin = s,
                          .mode = mode, .thread = pthread_self()};
        g_seqs = seq;
        xpsim_graph_set_capturing(g, true);
        atomic_fetch_add_explicit(&g_captures, 1, memory_order_release);
        xpsim_debug("cuStreamBeginCapture(%p, mode %d): capture %llu into graph %p", (void *)s,
                    (int)mode, (unsigned long long)seq->id, (void *)g);
        seq = NULL;
        g = NULL;
    }
    pthread_mutex_unlock(&g_lock);
    free(seq);
    if (g != NULL)
        xpsim_graph_free(g);
    return rc;
}

XPDRV_TWINS(cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz,
            (CUstream hStream, CUstreamCaptureMode mode), begin_capture(hStream, mode, ptds))

/* The CUDA 10.0 ABI, before modes: global mode. */
#undef cuStreamBeginCapture
XPDRV_TWINS(cuStreamBeginCapture, cuStreamBeginCapture_ptsz, (CUstream hStream),
            begin_capture(hStream, CU_STREAM_CAPTURE_MODE_GLOBAL, ptds))

static CUresult end_capture(CUstream h, CUgraph *phGraph, bool ptds)
{
    CUstream s;
    CUresult rc = enter_stream(h, ptds, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (phGraph == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    member *sm = no_captures() ? NULL : find(g_streams, s);
    sequence *seq = sm ? sm->seq : NULL;
    if (seq == NULL) {
        rc = CUDA_ERROR_ILLEGAL_STATE;
    } else if (seq->origin != s) {
        rc = CUDA_ERROR_STREAM_CAPTURE_UNMATCHED;
    } else if (seq->mode != CU_STREAM_CAPTURE_MODE_RELAXED &&
               !pthread_equal(seq->thread, pthread_self())) {
        rc = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    } else {
        CUgraph g = seq->graph;
        xpsim_graph_set_capturing(g, false);
        /* Every branch forked from the origin must have been joined back:
         * each last node of the graph is a capture dependency of the origin. */
        if (seq->invalid)
            rc = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        else if (!xpsim_graph_leaves_in(g, sm->deps.nodes, sm->deps.n))
            rc = CUDA_ERROR_STREAM_CAPTURE_UNJOINED;
        xpsim_debug("cuStreamEndCapture(%p): capture %llu -> %s", (void *)s,
                    (unsigned long long)seq->id, rc == CUDA_SUCCESS ? "graph" : "error");
        sequence_end_locked(seq);
        if (rc == CUDA_SUCCESS) {
            *phGraph = g;
        } else {
            *phGraph = NULL;
            xpsim_graph_free(g);
        }
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

XPDRV_TWINS(cuStreamEndCapture, cuStreamEndCapture_ptsz, (CUstream hStream, CUgraph *phGraph),
            end_capture(hStream, phGraph, ptds))

/* Every form of cuStreamGetCaptureInfo and cuStreamIsCapturing.  On the
 * legacy stream while a blocking stream captures: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT,
 * without invalidating that capture, as documented. */
static CUresult capture_info(CUstream h, bool ptds, CUstreamCaptureStatus *status, cuuint64_t *id,
                             CUgraph *graph, const CUgraphNode **deps,
                             const CUgraphEdgeData **edges, size_t *ndeps)
{
    CUstream s;
    CUresult rc = enter_stream(h, ptds, &s);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (status == NULL || (edges != NULL && deps == NULL))
        return CUDA_ERROR_INVALID_VALUE;
    if (no_captures()) {
        *status = CU_STREAM_CAPTURE_STATUS_NONE;
        return CUDA_SUCCESS;
    }
    pthread_mutex_lock(&g_lock);
    member *sm = find(g_streams, s);
    if (sm == NULL && implicit_locked(s, false)) {
        rc = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    } else if (sm == NULL) {
        *status = CU_STREAM_CAPTURE_STATUS_NONE;
    } else {
        *status = sm->seq->invalid ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                                   : CU_STREAM_CAPTURE_STATUS_ACTIVE;
        if (id != NULL)
            *id = sm->seq->id;
        if (graph != NULL)
            *graph = sm->seq->graph;
        if (deps != NULL)
            *deps = sm->deps.n > 0 ? sm->deps.nodes : NULL;
        if (edges != NULL)
            *edges = sm->deps.n > 0 ? sm->deps.edges : NULL;
        if (ndeps != NULL)
            *ndeps = sm->deps.n;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

XPDRV_TWINS(cuStreamIsCapturing, cuStreamIsCapturing_ptsz,
            (CUstream hStream, CUstreamCaptureStatus *captureStatus),
            capture_info(hStream, ptds, captureStatus, NULL, NULL, NULL, NULL, NULL))

#undef cuStreamGetCaptureInfo
XPDRV_TWINS(cuStreamGetCaptureInfo, cuStreamGetCaptureInfo_ptsz,
            (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out),
            capture_info(hStream, ptds, captureStatus_out, id_out, NULL, NULL, NULL, NULL))
XPDRV_TWINS(cuStreamGetCaptureInfo_v2, cuStreamGetCaptureInfo_v2_ptsz,
            (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
             CUgraph *graph_out, const CUgraphNode **dependencies_out,
             size_t *numDependencies_out),
            capture_info(hStream, ptds, captureStatus_out, id_out, graph_out, dependencies_out,
                         NULL, numDependencies_out))
XPDRV_TWINS(cuStreamGetCaptureInfo_v3, cuStreamGetCaptureInfo_v3_ptsz,
            (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
             CUgraph *graph_out, const CUgraphNode **dependencies_out,
             const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out),
            capture_info(hStream, ptds, captureStatus_out, id_out, graph_out, dependencies_out,
                         edgeData_out, numDependencies_out))

XPSIM_API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (mode == NULL || (*mode != CU_STREAM_CAPTURE_MODE_GLOBAL &&
                         *mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
                         *mode != CU_STREAM_CAPTURE_MODE_RELAXED))
        return CUDA_ERROR_INVALID_VALUE;
    CUstreamCaptureMode old = t_mode;
    t_mode = *mode;
    *mode = old;
    return CUDA_SUCCESS;
}
