/* drv_graph_exec.c: executable graphs: instantiation, launch (each node enqueued as its asynchronous call, in topological order, on the launch stream), upload, per-node parameter updates and cuGraphExecUpdate. */
#include "xpsim_driver.h"
#include "xpsim_graph_impl.h"
#include "xpsim_stream.h"

#include <stdlib.h>
#include <string.h>

static void exec_free_locked(CUgraphExec x)
{
    xpsim_h_remove(&x->h);
    for (size_t i = 0; i < x->n; i++) {
        if (x->nodes[i].child != NULL)
            exec_free_locked(x->nodes[i].child);
        free(x->nodes[i].deps);
    }
    free(x->nodes);
    free(x);
}

/* Node i of the executable graph is node i of g (see drv_graph.c). */
static CUgraphExec instantiate_locked(CUgraph g, cuuint64_t flags)
{
    CUgraphExec x = calloc(1, sizeof *x);
    if (x == NULL || (g->n > 0 && (x->nodes = calloc(g->n, sizeof *x->nodes)) == NULL)) {
        free(x);
        return NULL;
    }
    xpsim_h_insert_exec(x);
    x->flags = flags;
    for (size_t i = 0; i < g->n; i++, x->n++) {
        CUgraphNode nd = g->nodes[i];
        xpsim_exec_node *en = &x->nodes[i];
        *en = (xpsim_exec_node){.origin = nd, .paired = nd, .p = nd->p};
        if (nd->ndeps > 0 && (en->deps = malloc(nd->ndeps * sizeof *en->deps)) == NULL)
            goto fail;
        for (size_t k = 0; k < nd->ndeps; k++)
            en->deps[k] = xpsim_graph_index_of(g, nd->deps[k]);
        en->ndeps = nd->ndeps;
        if (nd->p.type == CU_GRAPH_NODE_TYPE_GRAPH) {
            en->p.u.child = NULL;
            if ((en->child = instantiate_locked(nd->p.u.child, flags)) == NULL)
                goto fail;
        }
    }
    return x;
fail:
    x->n++;
    exec_free_locked(x);
    return NULL;
}

#define KNOWN_INSTANTIATE_FLAGS                                                      \
    (CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD | \
     CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH | CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY)

static CUresult instantiate(CUgraphExec *out, CUgraph g, cuuint64_t flags)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (out == NULL || (flags & ~(cuuint64_t)KNOWN_INSTANTIATE_FLAGS))
        return CUDA_ERROR_INVALID_VALUE;
    /* Device-side launch is not simulated (no kernel runs on the device). */
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
        return CUDA_ERROR_NOT_SUPPORTED;
    xpsim_graph_lock();
    CUgraphExec x = NULL;
    if (!xpsim_h_valid(g, XPSIM_H_GRAPH))
        rc = CUDA_ERROR_INVALID_VALUE;
    else if ((x = instantiate_locked(g, flags)) == NULL)
        rc = CUDA_ERROR_OUT_OF_MEMORY;
    else
        *out = x;
    xpsim_graph_unlock();
    xpsim_debug("cuGraphInstantiate(%p, flags %#llx) -> %p", (void *)g, (unsigned long long)flags,
                (void *)x);
    return rc;
}

/* "CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD ... Only supported by
 * cuGraphInstantiateWithParams." */
XPSIM_API CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
                                               unsigned long long flags)
{
    if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD)
        return CUDA_ERROR_INVALID_VALUE;
    return instantiate(phGraphExec, hGraph, flags);
}

/* The CUDA 10 and 11 ABIs: no flags; the error node and log stay untouched
 * except for an empty log, as nothing here fails for a node's sake. */
static CUresult instantiate_legacy(CUgraphExec *out, CUgraph g, CUgraphNode *err_node, char *log,
                                   size_t log_size)
{
    CUresult rc = instantiate(out, g, 0);
    if (rc == CUDA_SUCCESS && log != NULL && log_size > 0)
        log[0] = '\0';
    if (err_node != NULL && rc == CUDA_SUCCESS)
        *err_node = NULL;
    return rc;
}

#undef cuGraphInstantiate
XPSIM_API CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                                      CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize);
XPSIM_API CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph,
                                      CUgraphNode *phErrorNode, char *logBuffer, size_t bufferSize)
{
    return instantiate_legacy(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

XPSIM_API CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                         CUgraphNode *phErrorNode, char *logBuffer,
                                         size_t bufferSize);
XPSIM_API CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph,
                                         CUgraphNode *phErrorNode, char *logBuffer,
                                         size_t bufferSize)
{
    return instantiate_legacy(phGraphExec, hGraph, phErrorNode, logBuffer, bufferSize);
}

static CUresult upload(CUgraphExec x, CUstream h, bool ptds);

static CUresult instantiate_with_params(CUgraphExec *out, CUgraph g,
                                        CUDA_GRAPH_INSTANTIATE_PARAMS *p, bool ptds)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    p->hErrNode_out = NULL;
    CUresult rc = instantiate(out, g, p->flags);
    if (rc == CUDA_SUCCESS && (p->flags & CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD) &&
        (rc = upload(*out, p->hUploadStream, ptds)) != CUDA_SUCCESS) {
        xpsim_graph_lock();
        exec_free_locked(*out);
        xpsim_graph_unlock();
    }
    p->result_out = rc == CUDA_SUCCESS ? CUDA_GRAPH_INSTANTIATE_SUCCESS : CUDA_GRAPH_INSTANTIATE_ERROR;
    return rc;
}

XPDRV_TWINS(cuGraphInstantiateWithParams, cuGraphInstantiateWithParams_ptsz,
            (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *params),
            instantiate_with_params(phGraphExec, hGraph, params, ptds))

XPSIM_API CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    CUresult rc = xpdrv_check_init();
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_graph_lock();
    if (xpsim_h_valid(hGraphExec, XPSIM_H_EXEC))
        exec_free_locked(hGraphExec);
    else
        rc = CUDA_ERROR_INVALID_VALUE;
    xpsim_graph_unlock();
    return rc;
}

XPSIM_API CUresult cuGraphExecGetFlags(CUgraphExec hGraphExec, cuuint64_t *flags)
{
    xpsim_graph_lock();
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (flags != NULL && xpsim_h_valid(hGraphExec, XPSIM_H_EXEC)) {
        *flags = hGraphExec->flags;
        rc = CUDA_SUCCESS;
    }
    xpsim_graph_unlock();
    return rc;
}

/* ---- launch ---------------------------------------------------------------- */

/* Enqueues every node of x on the stream, in order, each exactly as its
 * asynchronous call would be (so a memcpy node from pageable memory holds
 * the caller as cuMemcpyAsync does).  Running the nodes one after another on
 * one stream honours every dependency; it forgoes the concurrency of
 * independent branches. */
static CUresult launch_nodes(CUgraphExec x, CUstream h, bool ptds, CUstream s)
{
    for (size_t i = 0; i < x->n; i++) {
        xpsim_graph_lock();
        xpsim_node_params p = x->nodes[i].p;
        CUgraphExec child = x->nodes[i].child;
        xpsim_graph_unlock();
        CUresult rc = CUDA_SUCCESS;
        switch (p.type) {
        case CU_GRAPH_NODE_TYPE_MEMCPY: rc = xpdrv_copy3d_enqueue(&p.u.copy, h, ptds); break;
        case CU_GRAPH_NODE_TYPE_MEMSET: rc = xpdrv_memset_enqueue(&p.u.memset, h, ptds); break;
        case CU_GRAPH_NODE_TYPE_KERNEL: rc = xpdrv_kernel_enqueue(&p.u.kernel, h, ptds); break;
        case CU_GRAPH_NODE_TYPE_HOST: rc = xpdrv_host_enqueue(&p.u.host, h, ptds); break;
        case CU_GRAPH_NODE_TYPE_GRAPH: rc = launch_nodes(child, h, ptds, s); break;
        case CU_GRAPH_NODE_TYPE_EVENT_RECORD:
            rc = xpsim_event_valid(p.u.event) ? xpsim_event_record(p.u.event, s)
                                              : CUDA_ERROR_INVALID_HANDLE;
            break;
        case CU_GRAPH_NODE_TYPE_WAIT_EVENT:
            rc = xpsim_event_valid(p.u.event) ? xpsim_stream_wait_event(s, p.u.event)
                                              : CUDA_ERROR_INVALID_HANDLE;
            break;
        default: break;   /* EMPTY */
        }
        if (rc != CUDA_SUCCESS)
            return rc;
    }
    return CUDA_SUCCESS;
}

/* Checks the executable graph and the stream; *s: the engine stream. */
static CUresult enter_launch(CUgraphExec x, CUstream h, bool ptds, CUstream *s)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_graph_lock();
    bool ok = xpsim_h_valid(x, XPSIM_H_EXEC);
    xpsim_graph_unlock();
    if (!ok)
        return CUDA_ERROR_INVALID_VALUE;
    return xpsim_stream_resolve(h, ptds, dev, s);
}

/* Launching into a capturing stream (which CUDA turns into a child graph
 * node) is not simulated: it is refused like a synchronous use of the
 * stream, which also invalidates the capture. */
static CUresult launch(CUgraphExec x, CUstream h, bool ptds)
{
    CUstream s;
    CUresult rc = enter_launch(x, h, ptds, &s);
    if (rc == CUDA_SUCCESS)
        rc = xpsim_capture_sync(s);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_debug("cuGraphLaunch(%p) stream %p: %zu nodes", (void *)x, (void *)s, x->n);
    return launch_nodes(x, h, ptds, s);
}

/* Nothing to upload to a simulated device: validates the handles and the
 * stream's state. */
static CUresult upload(CUgraphExec x, CUstream h, bool ptds)
{
    CUstream s;
    CUresult rc = enter_launch(x, h, ptds, &s);
    return rc != CUDA_SUCCESS ? rc : xpsim_capture_sync(s);
}

XPDRV_TWINS(cuGraphLaunch, cuGraphLaunch_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
            launch(hGraphExec, hStream, ptds))
XPDRV_TWINS(cuGraphUpload, cuGraphUpload_ptsz, (CUgraphExec hGraphExec, CUstream hStream),
            upload(hGraphExec, hStream, ptds))

/* ---- per-node updates ------------------------------------------------------ */

/* The executable node instantiated from (or last updated from) node nd. */
static xpsim_exec_node *exec_node_of(CUgraphExec x, CUgraphNode nd)
{
    if (!xpsim_h_valid(x, XPSIM_H_EXEC) || !xpsim_h_valid(nd, XPSIM_H_NODE))
        return NULL;
    for (size_t i = 0; i < x->n; i++)
        if (x->nodes[i].origin == nd || x->nodes[i].paired == nd)
            return &x->nodes[i];
    return NULL;
}

/* "The node's type, position and dependencies stay; only its parameters
 * change, for later launches." */
static CUresult exec_set(CUgraphExec x, CUgraphNode nd, const xpsim_node_params *p)
{
    CUresult checked = xpdrv_node_check(p);
    if (checked != CUDA_SUCCESS)
        return checked;
    xpsim_graph_lock();
    xpsim_exec_node *en = exec_node_of(x, nd);
    CUresult rc = CUDA_ERROR_INVALID_VALUE;
    if (en != NULL && en->p.type == p->type) {
        en->p = *p;
        rc = CUDA_SUCCESS;
    }
    xpsim_graph_unlock();
    return rc;
}

XPSIM_API CUresult cuGraphExecMemcpyNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
    (void)ctx;
    if (copyParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_MEMCPY, .u.copy = *copyParams};
    return exec_set(hGraphExec, hNode, &p);
}

XPSIM_API CUresult cuGraphExecMemsetNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_MEMSET_NODE_PARAMS *memsetParams,
                                                  CUcontext ctx)
{
    (void)ctx;
    if (memsetParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_MEMSET, .u.memset = *memsetParams};
    return exec_set(hGraphExec, hNode, &p);
}

XPSIM_API CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                     const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_KERNEL, .u.kernel = *nodeParams};
    return exec_set(hGraphExec, hNode, &p);
}

/* The CUDA 10.1 ABI: the same fields without kern and ctx. */
#undef cuGraphExecKernelNodeSetParams
XPSIM_API CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams);
XPSIM_API CUresult cuGraphExecKernelNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                  const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_KERNEL_NODE_PARAMS k = xpdrv_kernel_params_v1(nodeParams);
    return cuGraphExecKernelNodeSetParams_v2(hGraphExec, hNode, &k);
}

XPSIM_API CUresult cuGraphExecHostNodeSetParams(CUgraphExec hGraphExec, CUgraphNode hNode,
                                                const CUDA_HOST_NODE_PARAMS *nodeParams)
{
    if (nodeParams == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_node_params p = {.type = CU_GRAPH_NODE_TYPE_HOST, .u.host = *nodeParams};
    return exec_set(hGraphExec, hNode, &p);
}

/* ---- whole-graph update ---------------------------------------------------- */

/* Whether node nd of g has the same dependencies as en (by position). */
static bool same_deps(CUgraph g, CUgraphNode nd, const xpsim_exec_node *en)
{
    if (nd->ndeps != en->ndeps)
        return false;
    for (size_t k = 0; k < nd->ndeps; k++) {
        size_t at = xpsim_graph_index_of(g, nd->deps[k]);
        bool found = false;
        for (size_t j = 0; j < en->ndeps && !found; j++)
            found = en->deps[j] == at;
        if (!found)
            return false;
    }
    return true;
}

/* The update rules the simulator applies: same number of nodes, paired by
 * position, each of the same type with the same dependencies; then every
 * node takes its new parameters (child graphs are instantiated again). */
static CUgraphExecUpdateResult update_locked(CUgraphExec x, CUgraph g, CUgraphNode *err_node,
                                             CUgraphNode *err_from)
{
    *err_node = *err_from = NULL;
    if (g->n != x->n)
        return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
    for (size_t i = 0; i < g->n; i++) {
        CUgraphNode nd = g->nodes[i];
        if (nd->p.type != x->nodes[i].p.type) {
            *err_node = nd;
            return CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
        }
        if (!same_deps(g, nd, &x->nodes[i])) {
            *err_node = nd;
            return CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
        }
    }
    CUgraphExec *children = calloc(g->n > 0 ? g->n : 1, sizeof *children);
    if (children == NULL)
        return CU_GRAPH_EXEC_UPDATE_ERROR;
    for (size_t i = 0; i < g->n; i++) {
        if (g->nodes[i]->p.type == CU_GRAPH_NODE_TYPE_GRAPH &&
            (children[i] = instantiate_locked(g->nodes[i]->p.u.child, x->flags)) == NULL) {
            for (size_t k = 0; k < i; k++)
                if (children[k] != NULL)
                    exec_free_locked(children[k]);
            free(children);
            return CU_GRAPH_EXEC_UPDATE_ERROR;
        }
    }
    for (size_t i = 0; i < g->n; i++) {
        xpsim_exec_node *en = &x->nodes[i];
        en->p = g->nodes[i]->p;
        en->paired = g->nodes[i];
        if (children[i] != NULL) {
            exec_free_locked(en->child);
            en->child = children[i];
            en->p.u.child = NULL;
        }
    }
    free(children);
    return CU_GRAPH_EXEC_UPDATE_SUCCESS;
}

static CUresult exec_update(CUgraphExec x, CUgraph g, CUgraphExecUpdateResult *result,
                            CUgraphNode *err_node, CUgraphNode *err_from)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    xpsim_graph_lock();
    if (!xpsim_h_valid(x, XPSIM_H_EXEC) || !xpsim_h_valid(g, XPSIM_H_GRAPH)) {
        *result = CU_GRAPH_EXEC_UPDATE_ERROR;
        *err_node = *err_from = NULL;
        rc = CUDA_ERROR_INVALID_VALUE;
    } else {
        *result = update_locked(x, g, err_node, err_from);
        rc = *result == CU_GRAPH_EXEC_UPDATE_SUCCESS ? CUDA_SUCCESS
                                                     : CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
    }
    xpsim_graph_unlock();
    return rc;
}

XPSIM_API CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
                                        CUgraphExecUpdateResultInfo *resultInfo)
{
    if (resultInfo == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    return exec_update(hGraphExec, hGraph, &resultInfo->result, &resultInfo->errorNode,
                       &resultInfo->errorFromNode);
}

/* The CUDA 10.2 ABI. */
#undef cuGraphExecUpdate
XPSIM_API CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                                     CUgraphNode *hErrorNode_out,
                                     CUgraphExecUpdateResult *updateResult_out);
XPSIM_API CUresult cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph,
                                     CUgraphNode *hErrorNode_out,
                                     CUgraphExecUpdateResult *updateResult_out)
{
    if (hErrorNode_out == NULL || updateResult_out == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    CUgraphNode from;
    return exec_update(hGraphExec, hGraph, updateResult_out, hErrorNode_out, &from);
}
