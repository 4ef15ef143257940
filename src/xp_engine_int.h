/* xp_engine_int.h: what the engine's own files share among themselves
 * (xp_engine.c the session's life, xp_record.c the call records,
 * xp_runtime_note.c the note on the runtime, xp_window.c the capture
 * window); included by those files only. */
#ifndef XP_ENGINE_INT_H
#define XP_ENGINE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "xp_config.h"
#include "xp_engine.h"
#include "xp_ingest.h"
#include "xp_journal.h"

/* Hidden on the declarations too: the records reach the session and the
 * thread id directly, not through the GOT (-fvisibility=hidden applies to
 * definitions only). */
#pragma GCC visibility push(hidden)

/* The process's profiling session (xp_engine.c).  Written by whoever starts
 * it (under the ST_STARTING state), read by the hooks once state is ST_ON;
 * torn down at exit by the destructor, and forgotten (not freed) in a
 * forked child. */
typedef struct xp_sess_state {
    pid_t pid;
    xp_config cfg;
    char db_path[PATH_MAX];
    xp_journal *journal;
    xp_ingest *ingest;
    xp_journal_reader *reader;
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
    bool stop;
} xp_sess_state;
extern xp_sess_state xp_sess;

/* The calling thread's id, asked of the kernel once per thread (reset in a
 * forked child); inline: every record carries it. */
#define xp_cached_tid (xp_tls.tid)

static inline uint32_t xp_my_tid(void)
{
    if (xp_cached_tid == 0)
        xp_cached_tid = (uint32_t)syscall(SYS_gettid);
    return xp_cached_tid;
}

/* A meta key/value into the session's journal (the session is on). */
void xp_session_put_meta(const char *key, const char *value);

/* In a forked child, from the session's atfork handler: each file forgets
 * the parent's session state it keeps (xp_record.c: the thread's last copy
 * and the launch counts; xp_runtime_note.c: whether the first driver call
 * was looked at; xp_blocks.c: the block events' numbering). */
void xp_record_after_fork(void);
void xp_blocks_after_fork(void);
void xp_runtime_note_after_fork(void);
void xp_graph_after_fork(void);

/* Reserves a call record of `type` for hooked call s (xp_record.c): its
 * header, times, status and device filled, its stack the one *stack_id
 * names, or the call's own (captured now) when stack_id is NULL.  NULL when
 * the journal had no room (the call is then counted as lost). */
void *xp_reserve_call(uint16_t type, xp_api api, uint32_t size, const xp_scope *s, int status,
                      int device, const uint64_t *stack_id);

/* What a copy is, from its sides' addresses and the API's kind. */
typedef struct xp_copy_facts {
    xp_where ws, wd;          /* the sides as classified (device-only sides forced) */
    uint8_t direction;        /* xp_direction */
    uint8_t host_mem;         /* xp_host_mem of the host side */
    int device;               /* the device it is recorded on, -1 none */
} xp_copy_facts;
void xp_copy_classify(const xp_copy_call *c, xp_copy_facts *f);

/* The xp_host_mem of a memset's target, and (OUT) the device it is on. */
uint8_t xp_memset_host_mem(uint64_t dst, int *device);

/* One copy or memset node a graph launch runs (xp_graph.c). */
typedef struct xp_graph_run {
    uint64_t node_id;         /* the node's GRAPH_NODE id */
    uint64_t node_stack;      /* the stack of its capture or add call: the record's stack */
    uint64_t launch_stack;    /* the launch call's stack */
    uint64_t stream;          /* the launch's stream */
} xp_graph_run;

/* The COPY (MEMSET) record of one node of launch s; c's api and stream are
 * the launch's, its parameters the node's as the launched graph has them. */
void xp_record_graph_copy_run(const xp_scope *s, const xp_copy_call *c, const xp_graph_run *run);
void xp_record_graph_memset_run(const xp_scope *s, xp_api api, uint64_t dst, int value,
                                uint64_t bytes, const xp_graph_run *run);

#pragma GCC visibility pop

#endif
