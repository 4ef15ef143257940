/* xpsim_graph_impl.h: what the graph files (drv_graph.c: graphs and nodes; drv_graph_exec.c: executable graphs) share, and nothing else sees. */
#ifndef XPSIM_GRAPH_IMPL_H
#define XPSIM_GRAPH_IMPL_H

#include "xpsim_graph.h"

#include <stdint.h>

/* Every graph, node and executable graph starts with one of these, linked
 * into a registry under the graph lock, so that an application handle is
 * found by value before it is dereferenced. */
typedef enum xpsim_hkind { XPSIM_H_GRAPH = 1, XPSIM_H_NODE, XPSIM_H_EXEC } xpsim_hkind;

typedef struct xpsim_hentry {
    struct xpsim_hentry *next;
    xpsim_hkind kind;
} xpsim_hentry;

struct CUgraphNode_st {
    xpsim_hentry h;           /* first: the handle is the node's address */
    CUgraph graph;
    xpsim_node_params p;
    CUgraphNode *deps;
    size_t ndeps;
};

struct CUgraph_st {
    xpsim_hentry h;
    CUgraphNode *nodes;       /* in creation order, which is topological */
    size_t n, cap;
    bool capturing;
};

typedef struct xpsim_exec_node {
    CUgraphNode origin;       /* compared by value only: the instantiated graph's node */
    CUgraphNode paired;       /* the node of the graph of the last cuGraphExecUpdate */
    xpsim_node_params p;      /* GRAPH: u.child unused, see child */
    CUgraphExec child;        /* GRAPH nodes: the child graph, instantiated */
    size_t *deps;             /* indices of the nodes it depends on, in order */
    size_t ndeps;
} xpsim_exec_node;

struct CUgraphExec_st {
    xpsim_hentry h;
    xpsim_exec_node *nodes;   /* in the graph's (topological) order */
    size_t n;
    cuuint64_t flags;
};

/* The lock every object above is guarded by (the *_locked functions and
 * the registry need it held). */
void xpsim_graph_lock(void);
void xpsim_graph_unlock(void);

bool xpsim_h_valid(const void *p, xpsim_hkind kind);
void xpsim_h_remove(xpsim_hentry *h);
void xpsim_h_insert_exec(CUgraphExec x);

void xpsim_graph_free_locked(CUgraph g);
CUgraph xpsim_graph_clone_locked(CUgraph g);
/* Position of nd in g's node array; (size_t)-1 if absent. */
size_t xpsim_graph_index_of(CUgraph g, CUgraphNode nd);

#endif
