/* drv_graph.c: CUDA graph and node objects: creation, nodes of every simulated type, their parameters, cloning, destruction (executable graphs: drv_graph_exec.c). */
#include "xpsim_driver.h"
#include "xpsim_graph_impl.h"
#include "xpsim_stream.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * One lock guards every graph, node and executable graph, and the handle
 * registry.  It is never held while work is enqueued (a launch copies each
 * node's parameters under it, then enqueues without it), so a host node that
 * calls back into the driver cannot deadlock.  CUDA documents graph objects
 * as not thread-safe; the lock only keeps the simulator's own tables sound.
 *
 * Nodes can only depend on nodes that exist when they are added (there is no
 * cuGraphAddDependencies), so a graph's node array is always in a valid
 * topological order, and an executable graph keeps that order: node i of the
 * executable graph is node i of the graph it came from, which is also how
 * cuGraphExecUpdate pairs nodes (NVIDIA pairs them by creation order).
 */
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* ---- handle registry: application handles are looked up by value before
 * they are dereferenced. */

#define HBUCKETS 509u
static xpsim_hentry *g_handles[HBUCKETS];

static size_t hbucket(const void *p)
{
    return (size_t)(((uintptr_t)p >> 4) % HBUCKETS);
}

static void h_insert(xpsim_hentry *h, xpsim_hkind kind)
{
    h->kind = kind;
    size_t b = hbucket(h);
    h->next = g_handles[b];
    g_handles[b] = h;
}

void xpsim_h_remove(xpsim_hentry *h)
{
    for (xpsim_hentry **pp = &g_handles[hbucket(h)]; *pp; pp = &(*pp)->next)
        if (*pp == h) {
            *pp = h->next;
            return;
        }
}

bool xpsim_h_valid(const void *p, xpsim_hkind kind)
{
    if (p == NULL)
        return false;
    for (xpsim_hentry *h = g_handles[hbucket(p)]; h; h = h->next)
        if ((const void *)h == p)
            return h->kind == kind;
    return false;
}

void xpsim_h_insert_exec(CUgraphExec x)
{
    h_insert(&x->h, XPSIM_H_EXEC);
}

void xpsim_graph_lock(void)
{
    pthread_mutex_lock(&g_lock);
}

void xpsim_graph_unlock(void)
{
    pthread_mutex_unlock(&g_lock);
}

/* ---- objects --------------------------------------------------------------- */

static void node_free(CUgraphNode nd)
{
    xpsim_h_remove(&nd->h);
    if (nd->p.type == CU_GRAPH_NODE_TYPE_GRAPH)
        xpsim_graph_free_locked(nd->p.u.child);
    free(nd->deps);
    free(nd);
}

static CUgraph graph_new_locked(void)
{
    CUgraph g = calloc(1, sizeof *g);
    if (g != NULL)
        h_insert(&g->h, XPSIM_H_GRAPH);
    return g;
}

void xpsim_graph_free_locked(CUgraph g)
{
    xpsim_h_remove(&g->h);
    for (size_t i = 0; i < g->n; i++)
        node_free(g->nodes[i]);
    free(g->nodes);
    free(g);
}

CUgraph xpsim_graph_new(void)
{
    pthread_mutex_lock(&g_lock);
    CUgraph g = graph_new_locked();
    pthread_mutex_unlock(&g_lock);
    return g;
}

void xpsim_graph_free(CUgraph g)
{
    pthread_mutex_lock(&g_lock);
    xpsim_graph_free_locked(g);
    pthread_mutex_unlock(&g_lock);
}

bool xpsim_graph_valid(CUgraph h)
{
    pthread_mutex_lock(&g_lock);
    bool ok = xpsim_h_valid(h, XPSIM_H_GRAPH);
    pthread_mutex_unlock(&g_lock);
    return ok;
}

void xpsim_graph_set_capturing(CUgraph g, bool capturing)
{
    pthread_mutex_lock(&g_lock);
    g->capturing = capturing;
    pthread_mutex_unlock(&g_lock);
}

size_t xpsim_graph_index_of(CUgraph g, CUgraphNode nd)
{
    for (size_t i = 0; i < g->n; i++)
        if (g->nodes[i] == nd)
            return i;
    return (size_t)-1;
}

static CUresult add_locked(CUgraph g, const CUgraphNode *deps, size_t ndeps,
                           const xpsim_node_params *p, CUgraphNode *out)
{
    if (ndeps > 0 && deps == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < ndeps; i++) {
        if (!xpsim_h_valid(deps[i], XPSIM_H_NODE) || deps[i]->graph != g)
            return CUDA_ERROR_INVALID_VALUE;
        for (size_t j = 0; j < i; j++)
            if (deps[j] == deps[i])
                return CUDA_ERROR_INVALID_VALUE;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? 2 * g->cap : 8;
        CUgraphNode *grown = realloc(g->nodes, cap * sizeof *grown);
        if (grown == NULL)
            return CUDA_ERROR_OUT_OF_MEMORY;
        g->nodes = grown;
        g->cap = cap;
    }
    CUgraphNode nd = calloc(1, sizeof *nd);
    if (nd == NULL || (ndeps > 0 && (nd->deps = malloc(ndeps * sizeof *deps)) == NULL)) {
        free(nd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (ndeps > 0)
        memcpy(nd->deps, deps, ndeps * sizeof *deps);
    nd->ndeps = ndeps;
    nd->graph = g;
    nd->p = *p;
    h_insert(&nd->h, XPSIM_H_NODE);
    g->nodes[g->n++] = nd;
    *out = nd;
    return CUDA_SUCCESS;
}

CUresult xpsim_graph_add(CUgraph g, const CUgraphNode *deps, size_t ndeps,
                         const xpsim_node_params *p, CUgraphNode *out)
{
    pthread_mutex_lock(&g_lock);
    CUresult rc = xpsim_h_valid(g, XPSIM_H_GRAPH) ? add_locked(g, deps, ndeps, p, out)
                                      : CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

bool xpsim_graph_leaves_in(CUgraph g, const CUgraphNode *set, size_t n)
{
    pthread_mutex_lock(&g_lock);
    bool ok = true;
    for (size_t i = 0; i < g->n && ok; i++) {
        CUgraphNode nd = g->nodes[i];
        bool leaf = true;
        for (size_t j = i + 1; j < g->n && leaf; j++)
            for (size_t k = 0; k < g->nodes[j]->ndeps; k++)
                if (g->nodes[j]->deps[k] == nd)
                    leaf = false;
        if (!leaf)
            continue;
        bool found = false;
        for (size_t k = 0; k < n && !found; k++)
            found = set[k] == nd;
        ok = found;
    }
    pthread_mutex_unlock(&g_lock);
    return ok;
}

/* A deep copy: nodes in the same order, dependencies mapped by index, child
 * graphs cloned too. */
CUgraph xpsim_graph_clone_locked(CUgraph g)
{
    CUgraph c = graph_new_locked();
    if (c == NULL)
        return NULL;
    for (size_t i = 0; i < g->n; i++) {
        CUgraphNode src = g->nodes[i];
        xpsim_node_params p = src->p;
        CUgraphNode out = NULL;
        if (p.type == CU_GRAPH_NODE_TYPE_GRAPH &&
            (p.u.child = xpsim_graph_clone_locked(src->p.u.child)) == NULL)
            goto fail;
        if (add_locked(c, NULL, 0, &p, &out) != CUDA_SUCCESS ||
            (src->ndeps > 0 && (out->deps = malloc(src->ndeps * sizeof *out->deps)) == NULL)) {
            if (out == NULL && p.type == CU_GRAPH_NODE_TYPE_GRAPH)
                xpsim_graph_free_locked(p.u.child);
            goto fail;
        }
        for (size_t k = 0; k < src->ndeps; k++)
            out->deps[k] = c->nodes[xpsim_graph_index_of(g, src->deps[k])];
        out->ndeps = src->ndeps;
    }
    return c;
fail:
    xpsim_graph_free_locked(c);
    return NULL;
}

/* ---- graphs and nodes ------------------------------------------------------ */

XPSIM_API CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (phGraph == NULL || flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraph g = xpsim_graph_new();
    if (g == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraph = g;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuGraphDestroy(CUgraph hGraph)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    pthread_mutex_lock(&g_lock);
    /* "All operations other than destroy and node removal are permitted on
     * the graph while the capture sequence is in progress." */
    if (!xpsim_h_valid(hGraph, XPSIM_H_GRAPH) || hGraph->capturing)
        rc = CUDA_ERROR_INVALID_VALUE;
    else
        xpsim_graph_free_locked(hGraph);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

static CUresult add_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                         const xpsim_node_params *p)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return xpsim_graph_add(g, deps, ndeps, p, out);
}

XPSIM_API CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                        const CUgraphNode *dependencies, size_t numDependencies,
                                        const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    (void)ctx;   /* one primary context per device: the pointers say which */
    CUresult rc = copyParams ? xpdrv_copy3d_check(copyParams) : CUDA_ERROR_INVALID_VALUE;
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_MEMCPY, .u.copy = *copyParams};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

XPSIM_API CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                        const CUgraphNode *dependencies, size_t numDependencies,
                                        const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
    (void)ctx;
    CUresult rc = memsetParams ? xpdrv_memset_check(memsetParams) : CUDA_ERROR_INVALID_VALUE;
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_MEMSET, .u.memset = *memsetParams};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

static CUresult add_kernel(CUgraphNode *out, CUgraph g, const CUgraphNode *deps, size_t ndeps,
                           const CUDA_KERNEL_NODE_PARAMS *k)
{
    CUresult rc = xpdrv_kernel_check(k);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_KERNEL, .u.kernel = *k};
    return add_node(out, g, deps, ndeps, &p);
}

XPSIM_API CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
                                           const CUgraphNode *dependencies, size_t numDependencies,
                                           const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return add_kernel(phGraphNode, hGraph, dependencies, numDependencies, nodeParams);
}

/* The CUDA 10 ABI: the same fields without kern and ctx. */
#undef cuGraphAddKernelNode
XPSIM_API CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                        const CUgraphNode *dependencies, size_t numDependencies,
                                        const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
XPSIM_API CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                        const CUgraphNode *dependencies, size_t numDependencies,
                                        const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS k = xpdrv_kernel_params_v1(nodeParams);
    return add_kernel(phGraphNode, hGraph, dependencies, numDependencies, &k);
}

XPSIM_API CUresult cuGraphAddHostNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                      const CUgraphNode *dependencies, size_t numDependencies,
                                      const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    if (nodeParams == NULL || nodeParams->fn == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_HOST, .u.host = *nodeParams};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

XPSIM_API CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                       const CUgraphNode *dependencies, size_t numDependencies)
{
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_EMPTY};
    return add_node(phGraphNode, hGraph, dependencies, numDependencies, &p);
}

static CUresult add_event_node(CUgraphNode *out, CUgraph g, const CUgraphNode *deps,
                               size_t ndeps, CUevent e, CUgraphNodeType type)
{
    if (!xpsim_event_valid(e))
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = type, .u.event = e};
    return add_node(out, g, deps, ndeps, &p);
}

XPSIM_API CUresult cuGraphAddEventRecordNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                             const CUgraphNode *dependencies,
                                             size_t numDependencies, CUevent event)
{
    return add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event,
                          CU_GRAPH_NODE_TYPE_EVENT_RECORD);
}

XPSIM_API CUresult cuGraphAddEventWaitNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                           const CUgraphNode *dependencies,
                                           size_t numDependencies, CUevent event)
{
    return add_event_node(phGraphNode, hGraph, dependencies, numDependencies, event,
                          CU_GRAPH_NODE_TYPE_WAIT_EVENT);
}

/* "The node executes an embedded child graph. The child graph is cloned in
 * this call." */
XPSIM_API CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
                                            const CUgraphNode *dependencies,
                                            size_t numDependencies, CUgraph childGraph)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (phGraphNode == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_GRAPH};
    if (!xpsim_h_valid(childGraph, XPSIM_H_GRAPH) || childGraph == hGraph || !xpsim_h_valid(hGraph, XPSIM_H_GRAPH))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((p.u.child = xpsim_graph_clone_locked(childGraph)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else if ((rc = add_locked(hGraph, dependencies, numDependencies, &p, phGraphNode)) !=
             CUDA_SUCCESS)
        xpsim_graph_free_locked(p.u.child);
    pthread_mutex_unlock(&g_lock);
    return rc;
}

XPSIM_API CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode hNode, CUgraph *phGraph)
{
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (phGraph != NULL && xpsim_h_valid(hNode, XPSIM_H_NODE) && hNode->p.type == CU_GRAPH_NODE_TYPE_GRAPH) {
        *phGraph = hNode->p.u.child;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* cuGraphGetNodes and cuGraphGetRootNodes: "If numNodes is higher than the
 * actual number of nodes, the remaining entries in nodes will be set to NULL,
 * and the number of nodes actually obtained will be returned in numNodes." */
static CUresult list_nodes(CUgraph g, CUgraphNode *out, size_t *num, bool roots_only)
{
    if (num == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_SUCCESS;
    if (!xpsim_h_valid(g, XPSIM_H_GRAPH)) {
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        size_t k = 0;
        for (size_t i = 0; i < g->n; i++) {
            if (roots_only && g->nodes[i]->ndeps > 0)
                continue;
            if (out != NULL && k < *num)
                out[k] = g->nodes[i];
            k++;
        }
        if (out != NULL) {
            for (size_t i = k; i < *num; i++)
                out[i] = NULL;
            if (k > *num)
                k = *num;
        }
        *num = k;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

XPSIM_API CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    return list_nodes(hGraph, nodes, numNodes, false);
}

XPSIM_API CUresult cuGraphGetRootNodes(CUgraph hGraph, CUgraphNode *rootNodes,
                                       size_t *numRootNodes)
{
    return list_nodes(hGraph, rootNodes, numRootNodes, true);
}

XPSIM_API CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (type != NULL && xpsim_h_valid(hNode, XPSIM_H_NODE)) {
        *type = hNode->p.type;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

/* Reads (set false) or replaces (set true) the parameters of a node of the
 * given type; INVALID_VALUE for any other node. */
CUresult xpdrv_node_check(const xpsim_node_params *p)
{
    switch (p->type) {
    case CU_GRAPH_NODE_TYPE_MEMCPY: return xpdrv_copy3d_check(&p->u.copy);
    case CU_GRAPH_NODE_TYPE_MEMSET: return xpdrv_memset_check(&p->u.memset);
    case CU_GRAPH_NODE_TYPE_KERNEL: return xpdrv_kernel_check(&p->u.kernel);
    case CU_GRAPH_NODE_TYPE_HOST: return p->u.host.fn ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default: return CUDA_SUCCESS;
    }
}

static CUresult node_params(CUgraphNode nd, CUgraphNodeType type, xpsim_node_params *p, bool set)
{
    CUresult checked = set ? xpdrv_node_check(p) : CUDA_SUCCESS;
    if (checked != CUDA_SUCCESS)
        return checked;
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (xpsim_h_valid(nd, XPSIM_H_NODE) && nd->p.type == type) {
        if (set)
            nd->p = *p;
        else
            *p = nd->p;
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

XPSIM_API CUresult cuGraphMemcpyNodeGetParams(CUgraphNode hNode, CUDA_MEMCPY3D *nodeParams)
{
    xpsim_node_params p;
    CUresult rc = nodeParams ? node_params(hNode, CU_GRAPH_NODE_TYPE_MEMCPY, &p, false)
                             : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *nodeParams = p.u.copy;
    return rc;
}

XPSIM_API CUresult cuGraphMemcpyNodeSetParams(CUgraphNode hNode, const CUDA_MEMCPY3D *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_MEMCPY, .u.copy = *nodeParams};
    return node_params(hNode, p.type, &p, true);
}

XPSIM_API CUresult cuGraphMemsetNodeGetParams(CUgraphNode hNode,
                                              CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    xpsim_node_params p;
    CUresult rc = nodeParams ? node_params(hNode, CU_GRAPH_NODE_TYPE_MEMSET, &p, false)
                             : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *nodeParams = p.u.memset;
    return rc;
}

XPSIM_API CUresult cuGraphMemsetNodeSetParams(CUgraphNode hNode,
                                              const CUDA_MEMSET_NODE_PARAMS *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_MEMSET, .u.memset = *nodeParams};
    return node_params(hNode, p.type, &p, true);
}

XPSIM_API CUresult cuGraphKernelNodeGetParams_v2(CUgraphNode hNode,
                                                 CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    xpsim_node_params p;
    CUresult rc = nodeParams ? node_params(hNode, CU_GRAPH_NODE_TYPE_KERNEL, &p, false)
                             : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *nodeParams = p.u.kernel;
    return rc;
}

XPSIM_API CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
                                                 const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_KERNEL, .u.kernel = *nodeParams};
    return node_params(hNode, p.type, &p, true);
}

/* The CUDA 10 ABI of the two: the same fields without kern and ctx. */
#undef cuGraphKernelNodeGetParams
#undef cuGraphKernelNodeSetParams
XPSIM_API CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode,
                                              CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
XPSIM_API CUresult cuGraphKernelNodeGetParams(CUgraphNode hNode,
                                              CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    CUDA_KERNEL_NODE_PARAMS k;
    CUresult rc = nodeParams ? cuGraphKernelNodeGetParams_v2(hNode, &k) : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *nodeParams = (CUDA_KERNEL_NODE_PARAMS_v1){
            .func = k.func, .gridDimX = k.gridDimX, .gridDimY = k.gridDimY,
            .gridDimZ = k.gridDimZ, .blockDimX = k.blockDimX, .blockDimY = k.blockDimY,
            .blockDimZ = k.blockDimZ, .sharedMemBytes = k.sharedMemBytes,
            .kernelParams = k.kernelParams, .extra = k.extra};
    return rc;
}

XPSIM_API CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode,
                                              const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
XPSIM_API CUresult cuGraphKernelNodeSetParams(CUgraphNode hNode,
                                              const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS k = xpdrv_kernel_params_v1(nodeParams);
    return cuGraphKernelNodeSetParams_v2(hNode, &k);
}

XPSIM_API CUresult cuGraphHostNodeGetParams(CUgraphNode hNode, CUDA_HOST_NODE_PARAMS *nodeParams)
{
    xpsim_node_params p;
    CUresult rc = nodeParams ? node_params(hNode, CU_GRAPH_NODE_TYPE_HOST, &p, false)
                             : CUDA_ERROR_INVALID_VALUE;
    if (rc == CUDA_SUCCESS)
        *nodeParams = p.u.host;
    return rc;
}

XPSIM_API CUresult cuGraphHostNodeSetParams(CUgraphNode hNode,
                                            const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_HOST, .u.host = *nodeParams};
    return node_params(hNode, p.type, &p, true);
}

/* "Removes hNode from its graph. This operation also severs any dependencies
 * of other nodes on hNode, and vice versa." */
XPSIM_API CUresult cuGraphDestroyNode(CUgraphNode hNode)
{
    pthread_mutex_lock(&g_lock);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (xpsim_h_valid(hNode, XPSIM_H_NODE) && !hNode->graph->capturing) {
        CUgraph g = hNode->graph;
        size_t at = xpsim_graph_index_of(g, hNode);
        memmove(&g->nodes[at], &g->nodes[at + 1], (g->n - at - 1) * sizeof *g->nodes);
        g->n--;
        for (size_t i = 0; i < g->n; i++) {
            CUgraphNode nd = g->nodes[i];
            size_t k = 0;
            for (size_t j = 0; j < nd->ndeps; j++)
                if (nd->deps[j] != hNode)
                    nd->deps[k++] = nd->deps[j];
            nd->ndeps = k;
        }
        if (hNode->p.type == CU_GRAPH_NODE_TYPE_GRAPH)
            xpsim_graph_free_locked(hNode->p.u.child);
        hNode->p.type = CU_GRAPH_NODE_TYPE_EMPTY;
        node_free(hNode);
        rc = CUDA_SUCCESS;
    }
    pthread_mutex_unlock(&g_lock);
    return rc;
}

XPSIM_API CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    if (phGraphClone == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    pthread_mutex_lock(&g_lock);
    CUgraph c = NULL;
    if (!xpsim_h_valid(originalGraph, XPSIM_H_GRAPH))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((c = xpsim_graph_clone_locked(originalGraph)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else
        *phGraphClone = c;
    pthread_mutex_unlock(&g_lock);
    return rc;
}

