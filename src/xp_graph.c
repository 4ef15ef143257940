/* xp_graph.c: the program's CUDA graphs as far as traffic goes: which copy
 * and memset nodes each graph and each executable graph holds (from stream
 * capture, explicit adds, clones, child graphs and parameter updates), so
 * that each launch records the copies it runs (docs/schema.md, graph_nodes). */
#include "xp_graph.h"
#include "xp_engine_int.h"

#include <cuda.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_journal.h"
#include "xp_window.h"

_Atomic unsigned xp_graph_captures;

/* A copy or memset node as a launch runs it, and what made it. */
typedef struct gnode {
    uint64_t handle;          /* 0: not known (a child graph's copy, an unnamed capture) */
    uint64_t id;              /* its GRAPH_NODE node_id */
    uint64_t stack_id;        /* the stack of the call that made it */
    uint64_t graph, stream;   /* where it was made (stream: a capture's) */
    xp_api api;
    uint8_t op;               /* xp_gnode_op */
    uint8_t via;              /* xp_gnode_via */
    xp_copy_call copy;        /* a copy's parameters (api and stream are set at each run) */
    uint64_t dst, bytes;      /* a memset's */
    int value;
} gnode;

typedef struct node_list {
    gnode *v;
    size_t n, cap;
} node_list;

/* A graph, or an executable graph (its own copy of the nodes, made when it
 * was instantiated or updated: a launch only reads it). */
typedef struct gobj {
    uint64_t handle;
    node_list nodes;
    bool incomplete;          /* an exec whose node list could not be copied */
    struct gobj *next;        /* in its hash bucket */
} gobj;

#define BUCKETS 256u
/* The tables, owned by this file.  `lock` is held for bookkeeping only:
 * never across a CUDA call, never while a record is written.  A call from a
 * signal handler (which may have interrupted the holder) only tries it. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static gobj *graphs[BUCKETS], *execs[BUCKETS];
static _Atomic uint64_t next_node_id = 1;
/* Node runs (or nodes) not recorded: see xp_graph_lost. */
static _Atomic uint64_t untracked;

static bool lock_for(const xp_scope *s)
{
    if (s->foreign ? pthread_mutex_trylock(&lock) == 0 : pthread_mutex_lock(&lock) == 0)
        return true;
    atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
    return false;
}

static gobj **bucket(gobj **table, uint64_t handle)
{
    return &table[((handle >> 4) ^ (handle >> 12)) & (BUCKETS - 1)];
}

static gobj *find(gobj **table, uint64_t handle)
{
    for (gobj *o = *bucket(table, handle); o != NULL; o = o->next)
        if (o->handle == handle)
            return o;
    return NULL;
}

/* The object of handle, added empty if new; NULL for want of memory. */
static gobj *obtain(gobj **table, uint64_t handle)
{
    gobj *o = find(table, handle);
    if (o == NULL && (o = calloc(1, sizeof *o)) != NULL) {
        gobj **b = bucket(table, handle);
        o->handle = handle;
        o->next = *b;
        *b = o;
    }
    return o;
}

static void drop(gobj **table, uint64_t handle)
{
    for (gobj **p = bucket(table, handle); *p != NULL; p = &(*p)->next)
        if ((*p)->handle == handle) {
            gobj *o = *p;
            *p = o->next;
            free(o->nodes.v);
            free(o);
            return;
        }
}

static bool push(node_list *l, const gnode *v, size_t n)
{
    if (l->n + n > l->cap) {
        size_t cap = l->cap ? l->cap : 8;
        while (cap < l->n + n)
            cap *= 2;
        gnode *grown = realloc(l->v, cap * sizeof *grown);
        if (grown == NULL)
            return false;
        l->v = grown;
        l->cap = cap;
    }
    memcpy(l->v + l->n, v, n * sizeof *v);
    l->n += n;
    return true;
}

static gnode *find_node(node_list *l, uint64_t handle)
{
    for (size_t i = 0; handle != 0 && i < l->n; i++)
        if (l->v[i].handle == handle)
            return &l->v[i];
    return NULL;
}

/* ---- the nodes' records ----------------------------------------------------- */

/* Writes n's GRAPH_NODE record as call s made it (via), its stack the
 * call's own, or n's for a set.  Returns the record's stack id. */
static uint64_t write_node(const xp_scope *s, xp_api api, const gnode *n, uint8_t via)
{
    uint8_t dir = 0, host_mem;
    int device;
    if (n->op == XP_GNODE_COPY) {
        xp_copy_facts f;
        xp_copy_classify(&n->copy, &f);
        dir = f.direction;
        host_mem = f.host_mem;
        device = f.device;
    } else {
        host_mem = xp_memset_host_mem(n->dst, &device);
    }
    xp_rec_graph_node *r = xp_reserve_call(XP_REC_GRAPH_NODE, api, sizeof *r, s, 0, device,
                                           via == XP_GNODE_SET ? &n->stack_id : NULL);
    if (r == NULL)
        return 0;
    r->node_id = n->id;
    r->graph = n->graph;
    r->handle = n->handle;
    r->stream = n->stream;
    r->src = n->op == XP_GNODE_COPY ? n->copy.src : 0;
    r->dst = n->op == XP_GNODE_COPY ? n->copy.dst : n->dst;
    r->bytes = n->op == XP_GNODE_COPY ? n->copy.bytes : n->bytes;
    r->value = n->value;
    r->op = n->op;
    r->via = via;
    r->direction = dir;
    r->host_mem = host_mem;
    r->kind = n->op == XP_GNODE_COPY && n->copy.kind >= 0 && n->copy.kind < 255
                  ? (uint8_t)n->copy.kind : 255;
    memset(r->reserved, 0, sizeof r->reserved);
    uint64_t stack = r->c.stack_id;
    xp_journal_commit(r);
    return stack;
}

/* A new node (captured or added): its record, then its place in its graph. */
static void add_node(const xp_scope *s, gnode *n)
{
    n->id = atomic_fetch_add_explicit(&next_node_id, 1, memory_order_relaxed);
    n->stack_id = write_node(s, n->api, n, n->via);
    if (!lock_for(s))
        return;
    gobj *g = obtain(graphs, n->graph);
    bool ok = g != NULL && push(&g->nodes, n, 1);
    pthread_mutex_unlock(&lock);
    if (!ok)
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
}

/* New parameters for a node: of its graph (a SET record: later instances
 * run them), or of one exec's copy of it (only that exec's launches). */
static void set_node(const xp_scope *s, xp_gnode_target t, uint64_t owner, uint64_t node,
                     const gnode *params)
{
    if (!lock_for(s))
        return;
    gnode *n = NULL;
    if (t == XP_GT_EXEC_SET) {
        gobj *e = find(execs, owner);
        n = e != NULL ? find_node(&e->nodes, node) : NULL;
    } else {
        for (unsigned b = 0; n == NULL && b < BUCKETS; b++)
            for (gobj *g = graphs[b]; n == NULL && g != NULL; g = g->next)
                n = find_node(&g->nodes, node);
    }
    gnode now;
    if (n != NULL && n->op == params->op) {
        n->copy = params->copy;
        n->dst = params->dst;
        n->bytes = params->bytes;
        n->value = params->value;
        now = *n;
    }
    bool found = n != NULL && n->op == params->op;
    pthread_mutex_unlock(&lock);
    if (found && t == XP_GT_SET)
        write_node(s, params->api, &now, XP_GNODE_SET);
}

static void node_params(const xp_scope *s, xp_gnode_target t, uint64_t owner, uint64_t node,
                        gnode *n, int status)
{
    if (!s->recording)
        return;
    /* A failure is an error row like any call's (and forgets the thread's
     * last copy, as any call between a copy and a sync does). */
    xp_record_call(s, n->api, owner, status);
    if (status != 0)
        return;
    if (t == XP_GT_ADD) {
        n->handle = node;
        n->graph = owner;
        n->via = XP_GNODE_ADD;
        add_node(s, n);
    } else {
        set_node(s, t, owner, node, n);
    }
}

/* A node's copy: what a launch hands xp_record_copy, less the launch's api
 * and stream; never complete when the launch returns. */
static void node_copy(gnode *n, const xp_copy_call *c)
{
    n->op = XP_GNODE_COPY;
    n->api = c->api;
    n->copy = *c;
    n->copy.async = true;
    n->copy.stream = 0;
}

void xp_record_graph_copy_node(const xp_scope *s, xp_gnode_target t, uint64_t owner,
                               uint64_t node, const xp_copy_call *c, int status)
{
    gnode n = {0};
    node_copy(&n, c);
    node_params(s, t, owner, node, &n, status);
}

void xp_record_graph_memset_node(const xp_scope *s, xp_api api, xp_gnode_target t,
                                 uint64_t owner, uint64_t node, uint64_t dst, int value,
                                 uint64_t bytes, int status)
{
    gnode n = {.op = XP_GNODE_MEMSET, .api = api, .dst = dst, .value = value, .bytes = bytes};
    node_params(s, t, owner, node, &n, status);
}

/* ---- stream capture ------------------------------------------------------------ */

/* The per-thread forms take stream 0 for the thread's default stream. */
static bool per_thread(xp_api api)
{
    const char *name = xp_api_name(api);
    size_t n = name != NULL ? strlen(name) : 0;
    return n > 5 && (strcmp(name + n - 5, "_ptsz") == 0 || strcmp(name + n - 5, "_ptds") == 0);
}

typedef CUresult (*info_v3_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                               const CUgraphNode **, const CUgraphEdgeData **, size_t *);
typedef CUresult (*info_v2_fn)(CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *,
                               const CUgraphNode **, size_t *);
static _Atomic(void *) info_fn;
static _Atomic int info_v3;   /* info_fn is cuStreamGetCaptureInfo_v3 (else _v2) */

/* Whether `stream` is capturing, asked of the driver (no runtime state
 * touched); then the graph it captures into and (OUT) the node the call just
 * made: the one node the stream's next capture would depend on, 0 if not
 * one. */
static bool capturing(xp_api api, uint64_t stream, uint64_t *graph, uint64_t *node)
{
    if (stream == 0 && per_thread(api))
        stream = (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
    /* The legacy stream never captures, and asking about it while another
     * stream captures in global mode would end that capture. */
    if (stream == 0 || stream == (uint64_t)(uintptr_t)CU_STREAM_LEGACY)
        return false;
    void *fn = atomic_load_explicit(&info_fn, memory_order_acquire);
    if (fn == NULL) {
        bool v3 = (fn = xp_driver_symbol("cuStreamGetCaptureInfo_v3")) != NULL;
        if (!v3 && (fn = xp_driver_symbol("cuStreamGetCaptureInfo_v2")) == NULL)
            return false;
        atomic_store_explicit(&info_v3, v3, memory_order_relaxed);
        atomic_store_explicit(&info_fn, fn, memory_order_release);
    }
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    cuuint64_t id = 0;
    CUgraph g = NULL;
    const CUgraphNode *deps = NULL;
    size_t ndeps = 0;
    xp_guard guard = xp_guard_enter((uintptr_t)fn);
    CUresult rc = atomic_load_explicit(&info_v3, memory_order_relaxed)
                      ? ((info_v3_fn)fn)((CUstream)(uintptr_t)stream, &st, &id, &g, &deps, NULL,
                                         &ndeps)
                      : ((info_v2_fn)fn)((CUstream)(uintptr_t)stream, &st, &id, &g, &deps,
                                         &ndeps);
    xp_guard_leave(guard);
    if (rc != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_ACTIVE)
        return false;
    *graph = (uint64_t)(uintptr_t)g;
    *node = ndeps == 1 && deps != NULL ? (uint64_t)(uintptr_t)deps[0] : 0;
    return true;
}

bool xp_graph_capture_copy(const xp_scope *s, const xp_copy_call *c)
{
    gnode n = {.via = XP_GNODE_CAPTURE, .stream = c->stream};
    if (!capturing(c->api, c->stream, &n.graph, &n.handle))
        return false;
    node_copy(&n, c);
    add_node(s, &n);
    return true;
}

bool xp_graph_capture_memset(const xp_scope *s, xp_api api, uint64_t dst, int value,
                             uint64_t bytes, uint64_t stream)
{
    gnode n = {.via = XP_GNODE_CAPTURE, .stream = stream, .op = XP_GNODE_MEMSET, .api = api,
               .dst = dst, .value = value, .bytes = bytes};
    if (!capturing(api, stream, &n.graph, &n.handle))
        return false;
    add_node(s, &n);
    return true;
}

/* ---- graphs and their instances ----------------------------------------------------- */

/* exec runs graph's nodes as they are now (instantiation, or an update). */
static void instantiate(const xp_scope *s, uint64_t exec, uint64_t graph)
{
    if (!lock_for(s))
        return;
    gobj *g = find(graphs, graph), *e = obtain(execs, exec);
    if (e != NULL) {
        e->nodes.n = 0;
        e->incomplete = g != NULL && !push(&e->nodes, g->nodes.v, g->nodes.n);
    }
    pthread_mutex_unlock(&lock);
    if (e == NULL)
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
}

/* The node of a clone that stands for `original` (the driver's answer), 0. */
static uint64_t node_in_clone(uint64_t original, uint64_t clone)
{
    static _Atomic(void *) slot;
    void *fn = atomic_load_explicit(&slot, memory_order_acquire);
    if (fn == NULL && (fn = xp_driver_symbol("cuGraphNodeFindInClone")) != NULL)
        atomic_store_explicit(&slot, fn, memory_order_release);
    if (fn == NULL || original == 0)
        return 0;
    CUgraphNode found = NULL;
    xp_guard guard = xp_guard_enter((uintptr_t)fn);
    CUresult rc = ((CUresult (*)(CUgraphNode *, CUgraphNode, CUgraph))fn)(
        &found, (CUgraphNode)(uintptr_t)original, (CUgraph)(uintptr_t)clone);
    xp_guard_leave(guard);
    return rc == CUDA_SUCCESS ? (uint64_t)(uintptr_t)found : 0;
}

/* The nodes of `from` appended to graph `to` (a clone: handles mapped by
 * the driver; a child graph: none, its copies are the parent's to run). */
static void copy_nodes(const xp_scope *s, uint64_t to, uint64_t from, bool clone)
{
    node_list l = {0};
    if (!lock_for(s))
        return;
    gobj *f = find(graphs, from);
    bool ok = f == NULL || push(&l, f->nodes.v, f->nodes.n);
    pthread_mutex_unlock(&lock);
    for (size_t i = 0; i < l.n; i++) {
        l.v[i].graph = to;
        /* Outside the lock: a CUDA call. */
        l.v[i].handle = clone ? node_in_clone(l.v[i].handle, to) : 0;
    }
    if (ok && l.n > 0 && lock_for(s)) {
        gobj *t = obtain(graphs, to);
        ok = t != NULL && push(&t->nodes, l.v, l.n);
        pthread_mutex_unlock(&lock);
    }
    free(l.v);
    if (!ok)
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
}

static void drop_node(const xp_scope *s, uint64_t node)
{
    if (node == 0 || !lock_for(s))
        return;
    for (unsigned b = 0; b < BUCKETS; b++)
        for (gobj *g = graphs[b]; g != NULL; g = g->next) {
            gnode *n = find_node(&g->nodes, node);
            if (n != NULL) {
                memmove(n, n + 1, (size_t)(g->nodes.v + g->nodes.n - (n + 1)) * sizeof *n);
                g->nodes.n--;
                pthread_mutex_unlock(&lock);
                return;
            }
        }
    pthread_mutex_unlock(&lock);
}

/* A launch: a COPY or MEMSET record per node of the exec, with the node's
 * stack (where the copy was written) and the launch's.  Reads the exec's
 * list without the lock: CUDA forbids using an exec while another thread
 * destroys or updates it, and the list changes only then. */
static void launch(const xp_scope *s, xp_api api, uint64_t exec, uint64_t stream)
{
    if (!lock_for(s))
        return;
    gobj *e = find(execs, exec);
    const gnode *v = e != NULL ? e->nodes.v : NULL;
    size_t n = e != NULL ? e->nodes.n : 0;
    if (e != NULL && e->incomplete)
        atomic_fetch_add_explicit(&untracked, 1, memory_order_relaxed);
    pthread_mutex_unlock(&lock);
    if (n == 0)
        return;
    xp_graph_run run = {.stream = stream};
    run.launch_stack = xp_stack_capture(xp_sess.journal, xp_sess.cfg.stack_depth, &s->site);
    for (size_t i = 0; i < n; i++) {
        run.node_id = v[i].id;
        run.node_stack = v[i].stack_id;
        if (v[i].op == XP_GNODE_COPY) {
            if (xp_window_skip(s->start_ns, XP_WIN_COPY))
                continue;
            xp_copy_call c = v[i].copy;
            c.api = api;
            c.stream = stream;
            xp_record_graph_copy_run(s, &c, &run);
        } else if (!xp_window_skip(s->start_ns, XP_WIN_MEMSET)) {
            xp_record_graph_memset_run(s, api, v[i].dst, v[i].value, v[i].bytes, &run);
        }
    }
}

void xp_record_graph_op(const xp_scope *s, xp_api api, xp_graph_op op, uint64_t a, uint64_t b,
                        uint64_t c, int status)
{
    if (!s->recording)
        return;
    xp_record_call(s, api, a, status);
    if (op == XP_GOP_CAPTURE_BEGIN && status == 0)
        atomic_fetch_add_explicit(&xp_graph_captures, 1, memory_order_relaxed);
    /* Ended, with its graph or invalidated (cudaErrorStreamCaptureInvalidated
     * and CUDA_ERROR_STREAM_CAPTURE_INVALIDATED are both 901); any other
     * failure left it going, or there was none. */
    if (op == XP_GOP_CAPTURE_END && (status == 0 || status == 901)) {
        unsigned n = atomic_load_explicit(&xp_graph_captures, memory_order_relaxed);
        while (n > 0 && !atomic_compare_exchange_weak_explicit(&xp_graph_captures, &n, n - 1,
                                                               memory_order_relaxed,
                                                               memory_order_relaxed)) {
        }
    }
    if (status != 0)
        return;
    switch (op) {
    case XP_GOP_CAPTURE_BEGIN:
    case XP_GOP_CAPTURE_END:
        break;
    case XP_GOP_INSTANTIATE:
    case XP_GOP_EXEC_UPDATE:
        instantiate(s, a, b);
        break;
    case XP_GOP_LAUNCH:
        launch(s, api, a, b);
        break;
    case XP_GOP_EXEC_DESTROY:
    case XP_GOP_DESTROY:
        if (lock_for(s)) {
            drop(op == XP_GOP_DESTROY ? graphs : execs, a);
            pthread_mutex_unlock(&lock);
        }
        break;
    case XP_GOP_CLONE:
        copy_nodes(s, a, b, true);
        break;
    case XP_GOP_DESTROY_NODE:
        drop_node(s, a);
        break;
    case XP_GOP_ADD_CHILD:
        copy_nodes(s, b, c, false);
        break;
    }
}

uint64_t xp_graph_lost(char *why, size_t n)
{
    uint64_t lost = atomic_load_explicit(&untracked, memory_order_relaxed);
    snprintf(why, n,
             "%" PRIu64 " CUDA graph node(s) or launch(es) not followed (out of memory, or a "
             "signal handler's graph call while its thread was in the profiler's graph table)",
             lost);
    return lost;
}

void xp_graph_after_fork(void)
{
    /* The parent's CUDA is no use to the child, nor its captures; the lock
     * may have been held by a thread the child does not have. */
    pthread_mutex_init(&lock, NULL);
    atomic_store_explicit(&xp_graph_captures, 0, memory_order_relaxed);
}
