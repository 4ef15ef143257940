/* xp_tls.h: the preload's hottest thread-locals, in one initial-exec block.
 *
 * Why one block: in a shared library each initial-exec thread-local is
 * reached through its offset, loaded from the GOT once in every function
 * that uses it; a copy's path used about ten of them, ten loads (and as many
 * registers holding them across the real call).  Fields of one block share
 * one offset: one load (issue 15).  Each module keeps its own name for its
 * field (a macro beside its documentation: xp_depth, xp_callee and
 * xp_callee_clean, xp_current_device in xp_engine.h; xp_cached_tid in
 * xp_engine_int.h; xp_inflight_self in xp_inflight.h; xp_writer_self in
 * xp_journal.h; xp_nvtx_top in xp_nvtx.h; xp_self in xp_thread.h).  Small on
 * purpose: static TLS comes out of every thread's stack (xp_thread.h keeps
 * the bulky per-thread state in mapped blocks instead). */
#ifndef XP_TLS_H
#define XP_TLS_H

#include <stdbool.h>
#include <stdint.h>

/* The calling thread's chunk of the journal: where its next record goes
 * (xp_journal.h, xp_journal_writer.c). */
typedef struct xp_writer_tls {
    char *next;                    /* where the next record goes */
    char *end;                     /* end of the chunk */
    uint64_t gen;                  /* the journal it belongs to; 0: none */
    uint64_t chunk;                /* its index + 1 (0: none yet) */
} xp_writer_tls;

struct xp_inflight_slot;
struct xp_thread;

typedef struct xp_tls_block {
    int depth;
    bool callee_clean;
    uintptr_t callee;
    int current_device;
    uint32_t tid;
    struct xp_inflight_slot *inflight;
    struct xp_thread *self;
    uint64_t nvtx_top;
    xp_writer_tls writer;
} xp_tls_block;

/* Defined in xp_thread.c.  Initial-exec: the preload is loaded at start-up,
 * so its thread-locals live in the static TLS block and are reached without
 * __tls_get_addr. */
extern __thread xp_tls_block xp_tls
    __attribute__((tls_model("initial-exec"), visibility("hidden")));

#endif
