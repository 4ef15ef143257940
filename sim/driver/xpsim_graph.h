/* xpsim_graph.h: CUDA graphs and stream capture inside the simulated driver:
 * what drv_graph.c (graphs, executable graphs, launches), drv_capture.c
 * (capture sequences) and the entry points that enqueue work share. */
#ifndef XPSIM_GRAPH_H
#define XPSIM_GRAPH_H

#include <cuda.h>
#include <stdbool.h>
#include <stddef.h>

/* What one node does: the parameters of the asynchronous call it stands
 * for.  Kept by value; a launch turns each node into that call again. */
typedef struct xpsim_node_params {
    CUgraphNodeType type;     /* KERNEL, MEMCPY, MEMSET, HOST, GRAPH, EMPTY, WAIT_EVENT, EVENT_RECORD */
    union {
        CUDA_MEMCPY3D copy;
        CUDA_MEMSET_NODE_PARAMS memset;
        CUDA_KERNEL_NODE_PARAMS kernel;
        CUDA_HOST_NODE_PARAMS host;
        CUevent event;
        CUgraph child;        /* GRAPH: the node's own copy of the child graph */
    } u;
} xpsim_node_params;

/* ---- drv_graph.c ---------------------------------------------------------- */

/* A new empty graph (NULL when out of memory). */
CUgraph xpsim_graph_new(void);

/* Frees a graph and its nodes (whatever they are part of). */
void xpsim_graph_free(CUgraph g);

/* Adds a node after deps (nodes of g).  CUDA_ERROR_INVALID_VALUE for a
 * dependency that is not a node of g or is named twice. */
CUresult xpsim_graph_add(CUgraph g, const CUgraphNode *deps, size_t ndeps,
                         const xpsim_node_params *p, CUgraphNode *out);

/* Whether every node of g that no other node depends on is in set (the
 * join rule of cuStreamEndCapture). */
bool xpsim_graph_leaves_in(CUgraph g, const CUgraphNode *set, size_t n);

/* Marks g as the target of a capture sequence (cuGraphDestroy refuses it). */
void xpsim_graph_set_capturing(CUgraph g, bool capturing);

/* Whether h is a live graph. */
bool xpsim_graph_valid(CUgraph h);

/* ---- drv_capture.c -------------------------------------------------------- */

/* Work an asynchronous entry point is about to enqueue on the resolved stream
 * s.  Returns with *captured false when it is to run as usual.  Otherwise it
 * was taken by a capture sequence (or refused): CUDA_SUCCESS (it became a
 * node of the capture graph), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (the
 * sequence of s was invalidated), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT (s is
 * the legacy stream while a blocking stream of its device captures; that
 * capture is invalidated), or an allocation failure. */
CUresult xpsim_capture_work(CUstream s, const xpsim_node_params *p, bool *captured);

/* A synchronous use of the resolved stream s (a synchronous copy or memset,
 * cuStreamSynchronize, cuStreamQuery): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * when s captures, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT when s is the legacy
 * stream and a blocking stream of its device captures (the captures
 * concerned are invalidated); CUDA_SUCCESS otherwise. */
CUresult xpsim_capture_sync(CUstream s);

/* A potentially unsafe call (allocation, freeing, registration, device
 * synchronization): CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED when the calling
 * thread's capture mode forbids it while the current captures run (those
 * captures are invalidated), CUDA_SUCCESS otherwise. */
CUresult xpsim_capture_unsafe(void);

/* cuEventRecord(WithFlags) on the resolved stream s: *captured as for
 * xpsim_capture_work.  In a capture the event remembers the stream's capture
 * position instead of being recorded (or, with CU_EVENT_RECORD_EXTERNAL,
 * becomes an event record node); outside one, any capture state it had is
 * forgotten and it is recorded as usual. */
CUresult xpsim_capture_event_record(CUevent e, CUstream s, unsigned int flags, bool *captured);

/* cuStreamWaitEvent: joins s to the capture that recorded e (fork), merges
 * e's position into a capturing s (join), or makes an event wait node
 * (CU_EVENT_WAIT_EXTERNAL); a capturing stream waiting on an event recorded
 * outside its capture is CUDA_ERROR_STREAM_CAPTURE_ISOLATION. */
CUresult xpsim_capture_wait_event(CUstream s, CUevent e, unsigned int flags, bool *captured);

/* CUDA_ERROR_CAPTURED_EVENT when e was last recorded in a capture sequence
 * that has not ended (cuEventQuery, cuEventSynchronize); CUDA_SUCCESS
 * otherwise. */
CUresult xpsim_capture_event_check(CUevent e);

/* Forgets a destroyed event or stream (a capture on the stream is
 * invalidated). */
void xpsim_capture_event_gone(CUevent e);
void xpsim_capture_stream_gone(CUstream s);

/* ---- the node kinds' asynchronous calls (drv_copy.c, drv_module.c,
 * drv_stream.c).  h and ptds name the stream as the API call did. */

/* Validates a memcpy node's parameters as cuMemcpy3DAsync would, without
 * copying; arrays are not simulated (CUDA_ERROR_NOT_SUPPORTED). */
CUresult xpdrv_copy3d_check(const CUDA_MEMCPY3D *p);
CUresult xpdrv_copy3d_enqueue(const CUDA_MEMCPY3D *p, CUstream h, bool ptds);

CUresult xpdrv_memset_check(const CUDA_MEMSET_NODE_PARAMS *p);
CUresult xpdrv_memset_enqueue(const CUDA_MEMSET_NODE_PARAMS *p, CUstream h, bool ptds);

CUresult xpdrv_kernel_check(const CUDA_KERNEL_NODE_PARAMS *p);

/* The check of a node's new parameters by its type (the one above for
 * memcpy, memset and kernel nodes; a host node needs its function): what
 * setting them, in a graph or an executable graph, first asks. */
CUresult xpdrv_node_check(const xpsim_node_params *p);

/* The CUDA 10 ABI's kernel node parameters (no kern, no ctx) in today's form. */
static inline CUDA_KERNEL_NODE_PARAMS xpdrv_kernel_params_v1(const CUDA_KERNEL_NODE_PARAMS_v1 *p)
{
    return (CUDA_KERNEL_NODE_PARAMS){
        .func = p->func, .gridDimX = p->gridDimX, .gridDimY = p->gridDimY,
        .gridDimZ = p->gridDimZ, .blockDimX = p->blockDimX, .blockDimY = p->blockDimY,
        .blockDimZ = p->blockDimZ, .sharedMemBytes = p->sharedMemBytes,
        .kernelParams = p->kernelParams, .extra = p->extra};
}
CUresult xpdrv_kernel_enqueue(const CUDA_KERNEL_NODE_PARAMS *p, CUstream h, bool ptds);

CUresult xpdrv_host_enqueue(const CUDA_HOST_NODE_PARAMS *p, CUstream h, bool ptds);

#endif
