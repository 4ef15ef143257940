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
#include "xp_inflight.h"
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
 * first use) and not stopping. */
bool xp_engine_ready(void);

/* xp_engine_ready for a hooked call, which is then counted in flight until
 * xp_scope_leave (xp_inflight.h): exit waits for it or cuts it off. */
bool xp_engine_enter(void);

static inline void xp_scope_enter(xp_scope *s)
{
    s->recording = xp_depth == 0 && xp_engine_enter();
    xp_depth++;
    s->start_ns = s->recording ? xp_now_ns() : 0;
}

/* After the real call returned: whether to write its records.  False when
 * the call is not recorded, or when the process's exit cut it off while it
 * ran (it was then counted as lost, and the journal may be gone). */
static inline bool xp_scope_returned(xp_scope *s)
{
    if (s->recording && !xp_inflight_returned())
        s->recording = false;
    return s->recording;
}

static inline void xp_scope_leave(const xp_scope *s)
{
    xp_depth--;
    if (s->recording)
        xp_inflight_leave();
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

/* Sides of a copy known to be device memory whatever the registry says (a
 * module variable, a peer copy): xp_copy_call.device_sides. */
#define XP_SIDE_SRC_DEVICE 1u
#define XP_SIDE_DST_DEVICE 2u

/* A copy, as the hook saw it.  kind 255: the API has no cudaMemcpyKind.
 * Fields left zero keep their plain meaning: a 1D copy of `bytes`, sides
 * classified by address, device worked out from the pointers.  (A hot hook
 * sets every field itself: gcc zeroes a struct this size with `rep stos`
 * for a designated initializer, measured at ~10 ns a call.) */
typedef struct xp_copy_call {
    xp_api api;
    int kind;                 /* cudaMemcpyKind */
    uint64_t dst, src, bytes, stream;
    /* A 2D copy: `height` rows of `width` bytes (bytes = width * height),
     * rows spitch / dpitch bytes apart.  height 0: a 1D copy. */
    uint64_t width, height, spitch, dpitch;
    /* A 3D copy: `depth` such 2D boxes (bytes = width * height * depth),
     * slices sslice / dslice bytes apart.  depth 0 or 1: one slice (sslice
     * and dslice are then not read). */
    uint64_t depth, sslice, dslice;
    /* A prefetch of managed memory (nothing is copied, pages migrate): the
     * way they go, XP_DIR_H2D to a device or XP_DIR_D2H to the host; the
     * host side is managed memory, the call asynchronous, and there is no
     * fingerprint.  0: a copy. */
    uint8_t migrate;
    bool async;               /* the API's nature */
    uint8_t device_sides;     /* XP_SIDE_* */
    bool has_device;          /* record `device` rather than work it out (peer copies) */
    int device;
} xp_copy_call;

/* Records a copy.  On success its content fingerprint is taken from host
 * memory only (the setting XFERPROF_FINGERPRINT): the source of H2D and H2H
 * copies, the destination of D2H copies by synchronous APIs; never device or
 * managed memory. */
void xp_record_copy(const xp_scope *s, const xp_copy_call *c, int status);

/* A memset of `bytes` bytes at dst to (the low byte of) value. */
void xp_record_memset(const xp_scope *s, xp_api api, uint64_t dst, int value, uint64_t bytes,
                      uint64_t stream, bool async, int status);

/* A kernel launch: a successful one only counts (per device, the current
 * one: copies carry the count as kernel_seq); a failed one is recorded as an
 * error with func as its detail. */
void xp_record_launch(const xp_scope *s, xp_api api, uint64_t func, int status);

/* Successful launches counted so far on device (0 for a device out of range). */
uint64_t xp_kernel_seq(int device);

/* xp_record_alloc_on's device: the one the kind implies (the current
 * device for device memory, -1 for host memory and address space). */
#define XP_DEVICE_OF_KIND (-2)

/* An allocation on `device` (or XP_DEVICE_OF_KIND): ptr is what the call
 * returned (ignored when it failed).  Reserved ranges and physical handles
 * are kept apart from the memory that copies are classified by
 * (XP_TABLE_HANDLES). */
void xp_record_alloc_on(const xp_scope *s, xp_api api, uint8_t kind, uint64_t ptr,
                        uint64_t bytes, int device, int status);

static inline void xp_record_alloc(const xp_scope *s, xp_api api, uint8_t kind, uint64_t ptr,
                                   uint64_t bytes, int status)
{
    xp_record_alloc_on(s, api, kind, ptr, bytes, XP_DEVICE_OF_KIND, status);
}

/* The device of the physical allocation `handle` (cuMemCreate) as recorded,
 * else XP_DEVICE_OF_KIND. */
int xp_physical_device(uint64_t handle);

/* A free of the allocations of the given kinds (bitmask of
 * 1 << xp_alloc_kind) that start at ptr and, when span is larger than the
 * first, follow it without a gap up to ptr + span (cuMemUnmap may end
 * several adjacent mappings at once): one free record each, the first
 * written whether or not it was known. */
void xp_record_free_span(const xp_scope *s, xp_api api, unsigned kinds, uint64_t ptr,
                         uint64_t span, int status);

/* A free of the one allocation at ptr. */
static inline void xp_record_free(const xp_scope *s, xp_api api, unsigned kinds, uint64_t ptr,
                                  int status)
{
    xp_record_free_span(s, api, kinds, ptr, 0, status);
}

void xp_record_sync(const xp_scope *s, xp_api api, uint64_t handle, int status);

/* Any other hooked call: recorded only when it failed. */
void xp_record_call(const xp_scope *s, xp_api api, uint64_t arg0, int status);

/* For other writers in the engine (xp_nvtx.c): the session's journal,
 * starting the session on first use (NULL when the profiler is off,
 * disabled or stopping); the calling thread's id; a meta key/value. */
xp_journal *xp_engine_journal(void);
uint32_t xp_engine_tid(void);
void xp_engine_meta(const char *key, const char *value);

/* An entry point of the libcuda.so.1 the process has loaded (never loading
 * one ourselves), NULL when none is loaded or it lacks `name`. */
void *xp_driver_symbol(const char *name);

/* The driver's cuMemGetInfo_v2 for the current context (no runtime state
 * touched): 0 on success. */
int xp_driver_mem_info(uint64_t *free_bytes, uint64_t *total_bytes);

/* Called by the driver hooks for each call they record: the first one notes
 * in meta (runtime = static) when no libcudart.so is loaded, i.e. the
 * process's CUDA runtime, if any, is linked statically and its copies are
 * seen at the driver layer only. */
void xp_note_driver_call(void);

/* A call whose record did not fit in the journal (counted in records_lost
 * at exit, with the journal's reason). */
void xp_engine_call_lost(void);

/* Writes n bytes to stderr without raising SIGPIPE in the program (a pipe
 * nobody reads would kill it). */
void xp_write_stderr(const char *buf, size_t n);

/* Called by the runtime hooks when one found the real runtime function it
 * forwards to: the process uses a shared runtime (for the note above). */
void xp_note_runtime_resolved(void);

#endif
