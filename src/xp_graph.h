/* xp_graph.h: CUDA graphs as the hooks hand them to the engine: stream
 * capture, copy and memset nodes, instantiation, updates and launches. */
#ifndef XP_GRAPH_H
#define XP_GRAPH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "xp_engine.h"

#pragma GCC visibility push(hidden)

/* Stream captures begun and not yet ended, in the whole process (both
 * layers).  Only while it is above 0 does a copy ask the driver whether its
 * stream captures: an ordinary copy pays one relaxed load.  Too high (a
 * capture the program never ends) costs that question, never a wrong row. */
extern _Atomic unsigned xp_graph_captures;

/* A copy (memset) call that succeeded while a capture is active: when its
 * stream is capturing, the call made a graph node, recorded as such (true);
 * false for a copy that ran.  s is recording. */
bool xp_graph_capture_copy(const xp_scope *s, const xp_copy_call *c);
bool xp_graph_capture_memset(const xp_scope *s, xp_api api, uint64_t dst, int value,
                             uint64_t bytes, uint64_t stream);

/* The other graph calls, by what they do (a, b, c as the op says). */
typedef enum xp_graph_op {
    XP_GOP_CAPTURE_BEGIN,     /* a stream */
    XP_GOP_CAPTURE_END,       /* a stream */
    XP_GOP_INSTANTIATE,       /* a the new exec (read on success), b the graph */
    XP_GOP_EXEC_UPDATE,       /* a the exec, b the graph it now follows */
    XP_GOP_LAUNCH,            /* a the exec, b the stream */
    XP_GOP_EXEC_DESTROY,      /* a the exec */
    XP_GOP_DESTROY,           /* a the graph */
    XP_GOP_CLONE,             /* a the clone (read on success), b the original */
    XP_GOP_DESTROY_NODE,      /* a the node */
    XP_GOP_ADD_CHILD,         /* a the new node, b the graph, c the child graph */
} xp_graph_op;

void xp_record_graph_op(const xp_scope *s, xp_api api, xp_graph_op op, uint64_t a, uint64_t b,
                        uint64_t c, int status);

/* Where a node's parameters go. */
typedef enum xp_gnode_target {
    XP_GT_ADD,                /* a new node of graph `owner`; `node` its handle (on success) */
    XP_GT_SET,                /* node `node` of its graph */
    XP_GT_EXEC_SET,           /* node `node` as exec `owner` runs it (its graph unchanged) */
} xp_gnode_target;

/* A copy node's parameters (c: as a copy call on no stream would have them;
 * its api the adding or setting call's), or a memset node's. */
void xp_record_graph_copy_node(const xp_scope *s, xp_gnode_target t, uint64_t owner,
                               uint64_t node, const xp_copy_call *c, int status);
void xp_record_graph_memset_node(const xp_scope *s, xp_api api, xp_gnode_target t,
                                 uint64_t owner, uint64_t node, uint64_t dst, int value,
                                 uint64_t bytes, int status);

/* Node runs a launch could not record (the exec's node list could not be
 * made, for want of memory), for records_lost at exit: their number, and the
 * reason into why (OUT). */
uint64_t xp_graph_lost(char *why, size_t n);

#pragma GCC visibility pop

#endif
