/* xp_engine.h: what the hooks call: entering and leaving a recorded call,
 * classifying pointers, and writing records.  Hooks stay thin; every fact
 * is turned into a record here. */
#ifndef XP_ENGINE_H
#define XP_ENGINE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "xp_api.h"
#include "xp_format.h"
#include "xp_stack.h"

/* Nesting depth of hooked calls on this thread: a runtime call that reaches
 * another hooked function (or our own CUDA calls) is not recorded twice. */
extern __thread int xp_depth __attribute__((tls_model("initial-exec")));

/* A hooked call in progress. */
typedef struct xp_scope {
    bool recording;
    uint64_t start_ns;
    xp_call_site site;        /* set by the hook: where it was called from */
} xp_scope;

static inline uint64_t xp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* True when this call is to be recorded: the profiler is on (initialized on
 * first use), not stopping, and this is not a nested call. */
bool xp_engine_ready(void);

static inline void xp_scope_enter(xp_scope *s)
{
    s->recording = xp_depth == 0 && xp_engine_ready();
    xp_depth++;
    s->start_ns = s->recording ? xp_now_ns() : 0;
}

static inline void xp_scope_leave(void)
{
    xp_depth--;
}

/* The calling thread's current device, as last set through cudaSetDevice. */
extern __thread int xp_current_device __attribute__((tls_model("initial-exec")));

/* What the preload knows about an address. */
typedef struct xp_where {
    uint8_t kind;             /* xp_alloc_kind of the allocation holding it, 0 if none */
    int32_t device;           /* the allocation's device, -1 for host memory */
} xp_where;

/* Classifies addr from the registry, asking the driver (not the runtime, so
 * the program's last-error state is untouched) only for addresses the
 * registry does not know, with a per-thread cache of the answers. */
void xp_classify(uint64_t addr, xp_where *out);

/* A copy, as the hook saw it.  kind 255: the API has no cudaMemcpyKind. */
typedef struct xp_copy_call {
    xp_api api;
    uint64_t dst, src, bytes, stream;
    int kind;                 /* cudaMemcpyKind */
    bool async;               /* the API's nature */
} xp_copy_call;

void xp_record_copy(const xp_scope *s, const xp_copy_call *c, int status);

/* An allocation: ptr is what the call returned (ignored when it failed). */
void xp_record_alloc(const xp_scope *s, xp_api api, uint8_t kind, uint64_t ptr, uint64_t bytes,
                     int status);

/* A free of ptr by an API that frees allocations of the given kinds
 * (bitmask of 1 << xp_alloc_kind). */
void xp_record_free(const xp_scope *s, xp_api api, unsigned kinds, uint64_t ptr, int status);

void xp_record_sync(const xp_scope *s, xp_api api, uint64_t handle, int status);

/* Any other hooked call: recorded only when it failed. */
void xp_record_call(const xp_scope *s, xp_api api, uint64_t arg0, int status);

/* The driver's cuMemGetInfo_v2 for the current context (no runtime state
 * touched): 0 on success. */
int xp_driver_mem_info(uint64_t *free_bytes, uint64_t *total_bytes);

#endif
