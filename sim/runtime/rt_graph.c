/* rt_graph.c: CUDA graphs in the runtime API: the cudaGraph* entry points, their parameter structs converted to the driver's, passed to the driver's cuGraph*. */
/* cudaGraph_t, cudaGraphNode_t, cudaGraphExec_t are the driver's handles;
 * cudaGraphNodeType, cudaGraphExecUpdateResult and cudaGraphInstantiateResult
 * have the CU_* values. */
#include "rt_internal.h"

#include <string.h>

static inline CUgraph cu_graph(cudaGraph_t g)
{
    return (CUgraph)g;
}

static inline const CUgraphNode *cu_nodes(const cudaGraphNode_t *n)
{
    return (const CUgraphNode *)n;
}

static cudaError_t enter(const xprt_drv **d)
{
    return xprt_enter(XPRT_LEGACY, d);
}

/* The current context, which the driver's node calls take. */
static CUcontext current_ctx(void)
{
    CUcontext ctx = NULL;
    xprt_primary_ctx(xprt_current_device(), &ctx);
    return ctx;
}

XPRT_EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphCreate, (CUgraph *)pGraph, flags));
}

XPRT_EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphDestroy, cu_graph(graph)));
}

XPRT_EXPORT cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphClone, (CUgraph *)pGraphClone,
                                    cu_graph(originalGraph)));
}

/* ---- memcpy nodes ---------------------------------------------------------- */

/* Where a memcpy node's parameters go: a new node, a node, or an executable
 * graph's node. */
typedef enum copy_op { COPY_ADD, COPY_SET, COPY_EXEC_SET } copy_op;

typedef struct copy_target {
    copy_op op;
    cudaGraphNode_t *out;
    cudaGraph_t graph;
    const cudaGraphNode_t *deps;
    size_t ndeps;
    cudaGraphNode_t node;
    cudaGraphExec_t exec;
} copy_target;

#define ADD_TO(pNode, g, pDeps, nDeps)                                         \
    (&(copy_target){.op = COPY_ADD, .out = (pNode), .graph = (g), .deps = (pDeps),   \
                    .ndeps = (nDeps)})
#define SET_ON(n) (&(copy_target){.op = COPY_SET, .node = (n)})
#define EXEC_SET_ON(x, n) (&(copy_target){.op = COPY_EXEC_SET, .exec = (x), .node = (n)})

static cudaError_t apply_copy(const xprt_drv *d, const copy_target *t, const CUDA_MEMCPY3D *c)
{
    CUresult r;
    switch (t->op) {
    case COPY_ADD:
        r = XPRT_CALL(d, cuGraphAddMemcpyNode, (CUgraphNode *)t->out, cu_graph(t->graph),
                      cu_nodes(t->deps), t->ndeps, c, current_ctx());
        break;
    case COPY_SET:
        r = XPRT_CALL(d, cuGraphMemcpyNodeSetParams, (CUgraphNode)t->node, c);
        break;
    default:
        r = XPRT_CALL(d, cuGraphExecMemcpyNodeSetParams, (CUgraphExec)t->exec,
                      (CUgraphNode)t->node, c, current_ctx());
        break;
    }
    return xprt_map_error(r);
}

static cudaError_t copy_3d(const copy_target *t, const struct cudaMemcpy3DParms *p)
{
    const xprt_drv *d;
    CUDA_MEMCPY3D c;
    cudaError_t e = enter(&d);
    if (e == cudaSuccess && (e = xprt_memcpy3d_params(d, p, &c)) == cudaSuccess)
        e = apply_copy(d, t, &c);
    return xprt_result(e);
}

static cudaError_t copy_1d(const copy_target *t, void *dst, const void *src, size_t count,
                           enum cudaMemcpyKind kind)
{
    const xprt_drv *d;
    CUDA_MEMCPY3D c;
    cudaError_t e = enter(&d);
    if (e == cudaSuccess && (e = xprt_memcpy1d_params(d, dst, src, count, kind, &c)) == cudaSuccess)
        e = apply_copy(d, t, &c);
    return xprt_result(e);
}

/* To (to_symbol) or from a __device__ variable: mem is the other side. */
static cudaError_t copy_symbol(const copy_target *t, bool to_symbol, const void *symbol, void *mem,
                               size_t count, size_t offset, enum cudaMemcpyKind kind)
{
    const xprt_drv *d;
    CUDA_MEMCPY3D c;
    void *var = NULL;
    cudaError_t e = enter(&d);
    if (e == cudaSuccess)
        e = xprt_symbol_at(d, symbol, count, offset, kind, to_symbol, &var);
    if (e == cudaSuccess)
        e = to_symbol ? xprt_memcpy1d_params(d, var, mem, count, kind, &c)
                      : xprt_memcpy1d_params(d, mem, var, count, kind, &c);
    if (e == cudaSuccess)
        e = apply_copy(d, t, &c);
    return xprt_result(e);
}

XPRT_EXPORT cudaError_t cudaGraphAddMemcpyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies,
                                               size_t numDependencies,
                                               const struct cudaMemcpy3DParms *pCopyParams)
{
    return copy_3d(ADD_TO(pGraphNode, graph, pDependencies, numDependencies), pCopyParams);
}

XPRT_EXPORT cudaError_t cudaGraphAddMemcpyNode1D(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                 const cudaGraphNode_t *pDependencies,
                                                 size_t numDependencies, void *dst,
                                                 const void *src, size_t count,
                                                 enum cudaMemcpyKind kind)
{
    return copy_1d(ADD_TO(pGraphNode, graph, pDependencies, numDependencies), dst, src, count,
                   kind);
}

XPRT_EXPORT cudaError_t cudaGraphAddMemcpyNodeToSymbol(cudaGraphNode_t *pGraphNode,
                                                       cudaGraph_t graph,
                                                       const cudaGraphNode_t *pDependencies,
                                                       size_t numDependencies,
                                                       const void *symbol, const void *src,
                                                       size_t count, size_t offset,
                                                       enum cudaMemcpyKind kind)
{
    return copy_symbol(ADD_TO(pGraphNode, graph, pDependencies, numDependencies), true, symbol,
                       (void *)(uintptr_t)src, count, offset, kind);
}

XPRT_EXPORT cudaError_t cudaGraphAddMemcpyNodeFromSymbol(cudaGraphNode_t *pGraphNode,
                                                         cudaGraph_t graph,
                                                         const cudaGraphNode_t *pDependencies,
                                                         size_t numDependencies, void *dst,
                                                         const void *symbol, size_t count,
                                                         size_t offset, enum cudaMemcpyKind kind)
{
    return copy_symbol(ADD_TO(pGraphNode, graph, pDependencies, numDependencies), false, symbol,
                       dst, count, offset, kind);
}

XPRT_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams(cudaGraphNode_t node,
                                                     const struct cudaMemcpy3DParms *pNodeParams)
{
    return copy_3d(SET_ON(node), pNodeParams);
}

XPRT_EXPORT cudaError_t cudaGraphMemcpyNodeSetParams1D(cudaGraphNode_t node, void *dst,
                                                       const void *src, size_t count,
                                                       enum cudaMemcpyKind kind)
{
    return copy_1d(SET_ON(node), dst, src, count, kind);
}

XPRT_EXPORT cudaError_t cudaGraphMemcpyNodeSetParamsToSymbol(cudaGraphNode_t node,
                                                             const void *symbol, const void *src,
                                                             size_t count, size_t offset,
                                                             enum cudaMemcpyKind kind)
{
    return copy_symbol(SET_ON(node), true, symbol, (void *)(uintptr_t)src, count, offset, kind);
}

XPRT_EXPORT cudaError_t cudaGraphMemcpyNodeSetParamsFromSymbol(cudaGraphNode_t node, void *dst,
                                                               const void *symbol, size_t count,
                                                               size_t offset,
                                                               enum cudaMemcpyKind kind)
{
    return copy_symbol(SET_ON(node), false, symbol, dst, count, offset, kind);
}

XPRT_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams(cudaGraphExec_t hGraphExec,
                                                         cudaGraphNode_t node,
                                                         const struct cudaMemcpy3DParms *pNodeParams)
{
    return copy_3d(EXEC_SET_ON(hGraphExec, node), pNodeParams);
}

XPRT_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParams1D(cudaGraphExec_t hGraphExec,
                                                           cudaGraphNode_t node, void *dst,
                                                           const void *src, size_t count,
                                                           enum cudaMemcpyKind kind)
{
    return copy_1d(EXEC_SET_ON(hGraphExec, node), dst, src, count, kind);
}

XPRT_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParamsToSymbol(cudaGraphExec_t hGraphExec,
                                                                 cudaGraphNode_t node,
                                                                 const void *symbol,
                                                                 const void *src, size_t count,
                                                                 size_t offset,
                                                                 enum cudaMemcpyKind kind)
{
    return copy_symbol(EXEC_SET_ON(hGraphExec, node), true, symbol, (void *)(uintptr_t)src, count,
                       offset, kind);
}

XPRT_EXPORT cudaError_t cudaGraphExecMemcpyNodeSetParamsFromSymbol(cudaGraphExec_t hGraphExec,
                                                                   cudaGraphNode_t node,
                                                                   void *dst, const void *symbol,
                                                                   size_t count, size_t offset,
                                                                   enum cudaMemcpyKind kind)
{
    return copy_symbol(EXEC_SET_ON(hGraphExec, node), false, symbol, dst, count, offset, kind);
}

/* The runtime's view of a memcpy node: the kind its memory types stand for
 * (cudaMemcpyDefault where either side is unified), each side's pointer,
 * pitch and slice height, and its position. */
static enum cudaMemcpyKind kind_of(CUmemorytype src, CUmemorytype dst)
{
    if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED)
        return cudaMemcpyDefault;
    if (src == CU_MEMORYTYPE_HOST)
        return dst == CU_MEMORYTYPE_HOST ? cudaMemcpyHostToHost : cudaMemcpyHostToDevice;
    return dst == CU_MEMORYTYPE_HOST ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
}

#define PITCHED_OF(c, side, width)                                                       \
    ((struct cudaPitchedPtr){.ptr = (c).side##MemoryType == CU_MEMORYTYPE_HOST               \
                                        ? (void *)(uintptr_t)(c).side##Host                  \
                                        : (void *)(uintptr_t)(c).side##Device,               \
                             .pitch = (c).side##Pitch, .xsize = (width),                     \
                             .ysize = (c).side##Height})

XPRT_EXPORT cudaError_t cudaGraphMemcpyNodeGetParams(cudaGraphNode_t node,
                                                     struct cudaMemcpy3DParms *pNodeParams)
{
    if (pNodeParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_MEMCPY3D c;
    CUresult r = XPRT_CALL(d, cuGraphMemcpyNodeGetParams, (CUgraphNode)node, &c);
    if (r != CUDA_SUCCESS)
        return xprt_result_cu(r);
    memset(pNodeParams, 0, sizeof *pNodeParams);
    pNodeParams->srcPos = (struct cudaPos){c.srcXInBytes, c.srcY, c.srcZ};
    pNodeParams->srcPtr = PITCHED_OF(c, src, c.WidthInBytes);
    pNodeParams->dstPos = (struct cudaPos){c.dstXInBytes, c.dstY, c.dstZ};
    pNodeParams->dstPtr = PITCHED_OF(c, dst, c.WidthInBytes);
    pNodeParams->extent = (struct cudaExtent){c.WidthInBytes, c.Height, c.Depth};
    pNodeParams->kind = kind_of(c.srcMemoryType, c.dstMemoryType);
    return cudaSuccess;
}

/* ---- memset nodes ---------------------------------------------------------- */

static CUDA_MEMSET_NODE_PARAMS memset_params(const struct cudaMemsetParams *p)
{
    return (CUDA_MEMSET_NODE_PARAMS){.dst = (CUdeviceptr)(uintptr_t)p->dst, .pitch = p->pitch,
                                     .value = p->value, .elementSize = p->elementSize,
                                     .width = p->width, .height = p->height};
}

XPRT_EXPORT cudaError_t cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies,
                                               size_t numDependencies,
                                               const struct cudaMemsetParams *pMemsetParams)
{
    if (pMemsetParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_MEMSET_NODE_PARAMS m = memset_params(pMemsetParams);
    return xprt_result_cu(XPRT_CALL(d, cuGraphAddMemsetNode, (CUgraphNode *)pGraphNode,
                                    cu_graph(graph), cu_nodes(pDependencies), numDependencies,
                                    &m, current_ctx()));
}

XPRT_EXPORT cudaError_t cudaGraphMemsetNodeGetParams(cudaGraphNode_t node,
                                                     struct cudaMemsetParams *pNodeParams)
{
    if (pNodeParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_MEMSET_NODE_PARAMS m;
    CUresult r = XPRT_CALL(d, cuGraphMemsetNodeGetParams, (CUgraphNode)node, &m);
    if (r == CUDA_SUCCESS)
        *pNodeParams = (struct cudaMemsetParams){
            .dst = (void *)(uintptr_t)m.dst, .pitch = m.pitch, .value = m.value,
            .elementSize = m.elementSize, .width = m.width, .height = m.height};
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaGraphMemsetNodeSetParams(cudaGraphNode_t node,
                                                     const struct cudaMemsetParams *pNodeParams)
{
    if (pNodeParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_MEMSET_NODE_PARAMS m = memset_params(pNodeParams);
    return xprt_result_cu(XPRT_CALL(d, cuGraphMemsetNodeSetParams, (CUgraphNode)node, &m));
}

XPRT_EXPORT cudaError_t cudaGraphExecMemsetNodeSetParams(cudaGraphExec_t hGraphExec,
                                                         cudaGraphNode_t node,
                                                         const struct cudaMemsetParams *pNodeParams)
{
    if (pNodeParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_MEMSET_NODE_PARAMS m = memset_params(pNodeParams);
    return xprt_result_cu(XPRT_CALL(d, cuGraphExecMemsetNodeSetParams, (CUgraphExec)hGraphExec,
                                    (CUgraphNode)node, &m, current_ctx()));
}

/* ---- kernel, host, empty, child graph and event nodes ---------------------- */

/* A kernel node's runtime parameters as the driver's: the host function
 * registered for the kernel becomes its CUfunction. */
static cudaError_t kernel_params(const xprt_drv **d, const struct cudaKernelNodeParams *p,
                                 CUDA_KERNEL_NODE_PARAMS *k)
{
    if (p == NULL)
        return cudaErrorInvalidValue;
    CUfunction fn = NULL;
    cudaError_t e = enter(d);
    if (e == cudaSuccess)
        e = xprt_function_of(*d, p->func, &fn);
    if (e != cudaSuccess)
        return e;
    *k = (CUDA_KERNEL_NODE_PARAMS){
        .func = fn, .gridDimX = p->gridDim.x, .gridDimY = p->gridDim.y, .gridDimZ = p->gridDim.z,
        .blockDimX = p->blockDim.x, .blockDimY = p->blockDim.y, .blockDimZ = p->blockDim.z,
        .sharedMemBytes = p->sharedMemBytes, .kernelParams = p->kernelParams, .extra = p->extra};
    return cudaSuccess;
}

XPRT_EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                               const cudaGraphNode_t *pDependencies,
                                               size_t numDependencies,
                                               const struct cudaKernelNodeParams *pNodeParams)
{
    const xprt_drv *d;
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = kernel_params(&d, pNodeParams, &k);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphAddKernelNode, (CUgraphNode *)pGraphNode,
                                    cu_graph(graph), cu_nodes(pDependencies), numDependencies,
                                    &k));
}

XPRT_EXPORT cudaError_t cudaGraphKernelNodeSetParams(cudaGraphNode_t node,
                                                     const struct cudaKernelNodeParams *pNodeParams)
{
    const xprt_drv *d;
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = kernel_params(&d, pNodeParams, &k);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphKernelNodeSetParams, (CUgraphNode)node, &k));
}

XPRT_EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec,
                                                         cudaGraphNode_t node,
                                                         const struct cudaKernelNodeParams *pNodeParams)
{
    const xprt_drv *d;
    CUDA_KERNEL_NODE_PARAMS k;
    cudaError_t e = kernel_params(&d, pNodeParams, &k);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphExecKernelNodeSetParams, (CUgraphExec)hGraphExec,
                                    (CUgraphNode)node, &k));
}

XPRT_EXPORT cudaError_t cudaGraphAddHostNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                             const cudaGraphNode_t *pDependencies,
                                             size_t numDependencies,
                                             const struct cudaHostNodeParams *pNodeParams)
{
    if (pNodeParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_HOST_NODE_PARAMS h = {.fn = pNodeParams->fn, .userData = pNodeParams->userData};
    return xprt_result_cu(XPRT_CALL(d, cuGraphAddHostNode, (CUgraphNode *)pGraphNode,
                                    cu_graph(graph), cu_nodes(pDependencies), numDependencies,
                                    &h));
}

XPRT_EXPORT cudaError_t cudaGraphHostNodeGetParams(cudaGraphNode_t node,
                                                   struct cudaHostNodeParams *pNodeParams)
{
    if (pNodeParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_HOST_NODE_PARAMS h;
    CUresult r = XPRT_CALL(d, cuGraphHostNodeGetParams, (CUgraphNode)node, &h);
    if (r == CUDA_SUCCESS)
        *pNodeParams = (struct cudaHostNodeParams){.fn = h.fn, .userData = h.userData};
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaGraphHostNodeSetParams(cudaGraphNode_t node,
                                                   const struct cudaHostNodeParams *pNodeParams)
{
    if (pNodeParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_HOST_NODE_PARAMS h = {.fn = pNodeParams->fn, .userData = pNodeParams->userData};
    return xprt_result_cu(XPRT_CALL(d, cuGraphHostNodeSetParams, (CUgraphNode)node, &h));
}

XPRT_EXPORT cudaError_t cudaGraphExecHostNodeSetParams(cudaGraphExec_t hGraphExec,
                                                       cudaGraphNode_t node,
                                                       const struct cudaHostNodeParams *pNodeParams)
{
    if (pNodeParams == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_HOST_NODE_PARAMS h = {.fn = pNodeParams->fn, .userData = pNodeParams->userData};
    return xprt_result_cu(XPRT_CALL(d, cuGraphExecHostNodeSetParams, (CUgraphExec)hGraphExec,
                                    (CUgraphNode)node, &h));
}

XPRT_EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                              const cudaGraphNode_t *pDependencies,
                                              size_t numDependencies)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphAddEmptyNode, (CUgraphNode *)pGraphNode,
                                    cu_graph(graph), cu_nodes(pDependencies), numDependencies));
}

XPRT_EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                   const cudaGraphNode_t *pDependencies,
                                                   size_t numDependencies, cudaGraph_t childGraph)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphAddChildGraphNode, (CUgraphNode *)pGraphNode,
                                    cu_graph(graph), cu_nodes(pDependencies), numDependencies,
                                    cu_graph(childGraph)));
}

static cudaError_t add_event_node(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                  const cudaGraphNode_t *deps, size_t ndeps, cudaEvent_t event,
                                  bool record)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUresult r = record ? XPRT_CALL(d, cuGraphAddEventRecordNode, (CUgraphNode *)pGraphNode,
                                    cu_graph(graph), cu_nodes(deps), ndeps, (CUevent)event)
                        : XPRT_CALL(d, cuGraphAddEventWaitNode, (CUgraphNode *)pGraphNode,
                                    cu_graph(graph), cu_nodes(deps), ndeps, (CUevent)event);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaGraphAddEventRecordNode(cudaGraphNode_t *pGraphNode,
                                                    cudaGraph_t graph,
                                                    const cudaGraphNode_t *pDependencies,
                                                    size_t numDependencies, cudaEvent_t event)
{
    return add_event_node(pGraphNode, graph, pDependencies, numDependencies, event, true);
}

XPRT_EXPORT cudaError_t cudaGraphAddEventWaitNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
                                                  const cudaGraphNode_t *pDependencies,
                                                  size_t numDependencies, cudaEvent_t event)
{
    return add_event_node(pGraphNode, graph, pDependencies, numDependencies, event, false);
}

/* ---- graph structure ------------------------------------------------------- */

static cudaError_t list_nodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *num, bool roots)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUresult r = roots ? XPRT_CALL(d, cuGraphGetRootNodes, cu_graph(graph), (CUgraphNode *)nodes,
                                   num)
                       : XPRT_CALL(d, cuGraphGetNodes, cu_graph(graph), (CUgraphNode *)nodes, num);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes,
                                          size_t *numNodes)
{
    return list_nodes(graph, nodes, numNodes, false);
}

XPRT_EXPORT cudaError_t cudaGraphGetRootNodes(cudaGraph_t graph, cudaGraphNode_t *pRootNodes,
                                              size_t *pNumRootNodes)
{
    return list_nodes(graph, pRootNodes, pNumRootNodes, true);
}

XPRT_EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphNodeGetType, (CUgraphNode)node,
                                    (CUgraphNodeType *)pType));
}

XPRT_EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphDestroyNode, (CUgraphNode)node));
}

/* ---- executable graphs ----------------------------------------------------- */

static cudaError_t instantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                               unsigned long long flags)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphInstantiate, (CUgraphExec *)pGraphExec,
                                    cu_graph(graph), flags));
}

XPRT_EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                             unsigned long long flags)
{
    return instantiate(pGraphExec, graph, flags);
}

XPRT_EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec,
                                                      cudaGraph_t graph, unsigned long long flags)
{
    return instantiate(pGraphExec, graph, flags);
}

static cudaError_t instantiate_with_params(xprt_api api, cudaGraphExec_t *pGraphExec,
                                           cudaGraph_t graph, cudaGraphInstantiateParams *p)
{
    if (p == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUDA_GRAPH_INSTANTIATE_PARAMS c = {.flags = p->flags,
                                       .hUploadStream = (CUstream)p->uploadStream};
    CUresult r = XPRT_CALL(d, cuGraphInstantiateWithParams, (CUgraphExec *)pGraphExec,
                           cu_graph(graph), &c);
    p->errNode_out = (cudaGraphNode_t)c.hErrNode_out;
    p->result_out = (cudaGraphInstantiateResult)c.result_out;
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec,
                                                       cudaGraph_t graph,
                                                       cudaGraphInstantiateParams *instantiateParams)
{
    return instantiate_with_params(XPRT_LEGACY, pGraphExec, graph, instantiateParams);
}

XPRT_EXPORT cudaError_t cudaGraphInstantiateWithParams_ptsz(
    cudaGraphExec_t *pGraphExec, cudaGraph_t graph, cudaGraphInstantiateParams *instantiateParams)
{
    return instantiate_with_params(XPRT_PTDS, pGraphExec, graph, instantiateParams);
}

XPRT_EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    return xprt_result_cu(XPRT_CALL(d, cuGraphExecDestroy, (CUgraphExec)graphExec));
}

static cudaError_t launch(xprt_api api, cudaGraphExec_t graphExec, cudaStream_t stream,
                          bool upload)
{
    const xprt_drv *d;
    cudaError_t e = xprt_enter(api, &d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUresult r = upload ? XPRT_CALL(d, cuGraphUpload, (CUgraphExec)graphExec, (CUstream)stream)
                        : XPRT_CALL(d, cuGraphLaunch, (CUgraphExec)graphExec, (CUstream)stream);
    return xprt_result_cu(r);
}

XPRT_EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return launch(XPRT_LEGACY, graphExec, stream, false);
}

XPRT_EXPORT cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return launch(XPRT_PTDS, graphExec, stream, false);
}

XPRT_EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return launch(XPRT_LEGACY, graphExec, stream, true);
}

XPRT_EXPORT cudaError_t cudaGraphUpload_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
    return launch(XPRT_PTDS, graphExec, stream, true);
}

XPRT_EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
                                            cudaGraphExecUpdateResultInfo *resultInfo)
{
    if (resultInfo == NULL)
        return xprt_result(cudaErrorInvalidValue);
    const xprt_drv *d;
    cudaError_t e = enter(&d);
    if (e != cudaSuccess)
        return xprt_result(e);
    CUgraphExecUpdateResultInfo info = {.result = CU_GRAPH_EXEC_UPDATE_ERROR};
    CUresult r = XPRT_CALL(d, cuGraphExecUpdate, (CUgraphExec)hGraphExec, cu_graph(hGraph),
                           &info);
    resultInfo->result = (enum cudaGraphExecUpdateResult)info.result;
    resultInfo->errorNode = (cudaGraphNode_t)info.errorNode;
    resultInfo->errorFromNode = (cudaGraphNode_t)info.errorFromNode;
    return xprt_result_cu(r);
}
