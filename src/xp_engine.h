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
#include "xp_clock.h"
#include "xp_format.h"
#include "xp_inflight.h"
#include "xp_stack.h"
#include "xp_tls.h"

/* Nesting depth of hooked calls on this thread: a runtime call that reaches
 * another hooked function (or our own CUDA calls) is not recorded twice. */
#define xp_depth (xp_tls.depth)

/* What the thread runs while xp_depth > 0, so that a hook entered then can
 * tell a call made by that code (really nested: the runtime calling the
 * driver) from a call made by a signal handler that interrupted it (a
 * "foreign" call: docs/interposition.md, "Signal handlers"):
 * - xp_callee: the CUDA function a hook (or the preload itself) is inside
 *   of; 0 while the thread runs code of ours (a hook's bookkeeping);
 *   XP_CALLEE_OURS on threads of ours, where any hooked call is nested.
 * - xp_callee_clean: whether nothing of ours is half done beneath it (the
 *   real call of a hook, not a driver query made in the middle of writing
 *   a record): only then may a foreign call be recorded.
 * Written by the thread itself and by signal handlers on it, each restoring
 * what it found, hence plain thread-locals. */
#define xp_callee (xp_tls.callee)
#define xp_callee_clean (xp_tls.callee_clean)
#define XP_CALLEE_OURS ((uintptr_t)1)

/* A hooked call in progress. */
typedef struct xp_scope {
    bool recording;
    bool foreign;             /* entered from a signal handler (xp_scope_enter_deeper) */
    bool clean_before;        /* xp_callee_clean and xp_callee as found at entry */
    bool set_aside;           /* a foreign call's: it set the thread's state aside */
    uintptr_t callee_before;
    xp_inflight_slot *slot;   /* where a recorded call is counted in flight (xp_inflight.h) */
    uint64_t start_ns;
    xp_call_site site;        /* set by the hook before xp_scope_enter: where it was called from */
} xp_scope;

/* True when this call is to be recorded: the profiler is on (initialized on
 * first use) and not stopping. */
bool xp_engine_ready(void);

/* The session's state (xp_engine.c's: XP_ENGINE_ON when on), read inline by
 * every hook (issue 15), and the pid of a vfork child that called exit() in
 * our memory (0: none), which the in-flight gate's XP_GATE_VFORK says to
 * the hooks. */
#define XP_ENGINE_ON 2
extern _Atomic int xp_engine_state __attribute__((visibility("hidden")));
extern _Atomic int xp_vfork_exited_child __attribute__((visibility("hidden")));

/* xp_engine_enter past its common case (out of line). */
xp_inflight_slot *xp_engine_enter_slow(void) __attribute__((visibility("hidden")));

/* A call's out-of-line entry while XP_GATE_VFORK is set
 * (xp_inflight_vfork_hook): on the main thread, once the child is gone, the
 * session's end is armed again and the gate cleared. */
void xp_engine_after_vfork(void) __attribute__((visibility("hidden")));

/* xp_engine_ready for a hooked call, which is then counted in flight until
 * xp_scope_leave (xp_inflight.h): exit waits for it or cuts it off.  The
 * thread's in-flight slot, or NULL when the call is not recorded.  The
 * common case (the session on) is one load before the in-flight count's
 * (a vfork child gone shows in its gate). */
static inline xp_inflight_slot *xp_engine_enter(void)
{
    if (__builtin_expect(atomic_load_explicit(&xp_engine_state, memory_order_acquire) ==
                             XP_ENGINE_ON,
                         1))
        return xp_inflight_enter();
    return xp_engine_enter_slow();
}

/* xp_scope_enter's decision for a hook entered while xp_depth was already
 * above 0 (out of line: the uncommon case).  Whether to record it. */
bool xp_scope_enter_deeper(xp_scope *s);

/* A hook, before calling real (its s->site set): whether to record the
 * call, and from here to xp_scope_returned the thread runs real. */
static inline __attribute__((always_inline)) void xp_scope_enter(xp_scope *s, uintptr_t real)
{
    /* Deeper first: a signal arriving from here on finds the thread busy. */
    int depth = xp_depth++;
    s->foreign = false;
    if (__builtin_expect(depth == 0, 1)) {
        /* Outside any hook: whatever an earlier call left there is void,
         * and from xp_scope_leave on the thread is in our code again. */
        s->callee_before = 0;
        s->clean_before = false;
        s->slot = xp_engine_enter();
        s->recording = s->slot != NULL;
        s->start_ns = s->recording ? xp_now_ns() : 0;
        /* Nothing of ours is half done inside real... */
        xp_callee_clean = true;
    } else {
        s->callee_before = xp_callee;
        s->clean_before = xp_callee_clean;
        /* A copy in, so that s itself never escapes: the hottest hooks keep
         * it in registers (issue 15). */
        xp_scope t = *s;
        bool recording = xp_scope_enter_deeper(&t);
        *s = t;
        s->recording = recording;
        s->start_ns = s->recording ? xp_now_ns() : 0;
        /* ...unless this call is nested in our own work (then what was
         * beneath stays as unclean as it was).  Set in each branch: the
         * common one then needs no test (issue 15). */
        xp_callee_clean = s->recording || s->clean_before;
    }
    xp_callee = real;
}

/* After the real call returned: whether to write its records.  False when
 * the call is not recorded, or when the process's exit cut it off while it
 * ran (it was then counted as lost, and the journal may be gone). */
static inline __attribute__((always_inline)) bool xp_scope_returned(xp_scope *s)
{
    if (s->recording) {
        /* Writing its records: ours, and not to be disturbed. */
        xp_callee = 0;
        xp_callee_clean = false;
        if (!xp_inflight_returned(s->slot))
            s->recording = false;
    } else {
        xp_callee = s->callee_before;
        xp_callee_clean = s->clean_before;
    }
    return s->recording;
}

/* A foreign call's end (xp_scope.c): gives the interrupted call back the
 * thread's state the recording of this one changed. */
void xp_scope_leave_foreign(const xp_scope *s);

static inline __attribute__((always_inline)) void xp_scope_leave(const xp_scope *s)
{
    if (__builtin_expect(s->recording && !s->foreign, 1)) {
        /* An outermost call (only a foreign one is recorded deeper): what
         * xp_scope_returned left in xp_callee and xp_callee_clean, 0 and
         * false, is what its entry found there (issue 15: no restore). */
        xp_inflight_leave(s->slot);
    } else {
        xp_callee = s->callee_before;
        xp_callee_clean = s->clean_before;
        if (s->recording)
            xp_inflight_leave(s->slot);
        if (s->foreign) {
            const xp_scope t = *s;   /* s does not escape (xp_scope_enter) */
            xp_scope_leave_foreign(&t);
        }
    }
    xp_depth--;
}

/* Around a CUDA call the preload makes itself (a driver query while
 * writing a record, a lookup hook's real call): one level deeper, with the
 * function noted, so that hooks it reaches are nested and a signal handler
 * interrupting it finds the thread busy with work of ours. */
typedef struct xp_guard {
    uintptr_t callee;
    bool clean;
} xp_guard;

static inline xp_guard xp_guard_enter(uintptr_t fn)
{
    xp_guard g = {xp_callee, xp_callee_clean};
    xp_depth++;
    xp_callee_clean = false;
    xp_callee = fn;
    return g;
}

static inline void xp_guard_leave(xp_guard g)
{
    xp_callee = g.callee;
    xp_callee_clean = g.clean;
    xp_depth--;
}

/* The calling thread's current device, as last set through cudaSetDevice. */
#define xp_current_device (xp_tls.current_device)

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
/* A side that is a CUDA array: its address is the array handle (an `array`
 * allocation), device memory of the array's device. */
#define XP_SIDE_SRC_ARRAY 4u
#define XP_SIDE_DST_ARRAY 8u

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

/* A 1D copy hook's whole call, the real call included: one frame for the
 * hottest hooks (issue 15), whose own arguments come first, in the
 * registers they arrived in, so that the hook only adds its own.  real is
 * the resolved function: cudaMemcpy's ABI (two pointers, a size, the kind)
 * or, with XP_COPY_1D_ASYNC in how, cudaMemcpyAsync's (and the stream);
 * how: the API, and that flag; ret: the hook's return address.  Keeps the
 * program's errno as the real call left it.  Returns the real call's
 * status. */
typedef int (*xp_copy_real_fn)(void *dst, const void *src, size_t bytes, int kind);
typedef int (*xp_copy_async_real_fn)(void *dst, const void *src, size_t bytes, int kind,
                                     void *stream);
#define XP_COPY_1D_ASYNC 0x10000u
int xp_copy_1d(void *dst, const void *src, size_t bytes, int kind, void *stream,
               void (*real)(void), unsigned how, uintptr_t ret);

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

/* A copy's side that is the CUDA array `handle`: device memory of the
 * array's device as recorded (-1 for an array the profiler did not see). */
void xp_classify_array(uint64_t handle, xp_where *out);

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

/* A change of the calling thread's current context (cuCtxCreate,
 * cuCtxSetCurrent, cuCtxPushCurrent, cuCtxPopCurrent): on success the
 * thread's current device becomes the context's, so that what follows is
 * recorded on it; a failure is recorded like any failed call. */
void xp_record_context(const xp_scope *s, xp_api api, int status);

/* cuCtxDestroy: on success every allocation the driver no longer knows
 * afterwards (what the context owned and took with it) is recorded as freed
 * by this call, then as xp_record_context. */
void xp_record_context_destroy(const xp_scope *s, xp_api api, int status);

/* Any other hooked call: recorded only when it failed. */
void xp_record_call(const xp_scope *s, xp_api api, uint64_t arg0, int status);

/* cudaProfilerStart/Stop, cuProfilerStart/Stop (start: which): on success
 * the capture window opens or closes (xp_window.h); a failure is recorded
 * like any failed call. */
void xp_record_profiler(const xp_scope *s, xp_api api, bool start, int status);

/* A block a framework's caching allocator handed out (taken) or took back
 * (xp_blocks.c): allocator is xp_block_allocator, allocated and
 * reserved_bytes its totals after the event as it reported them.  Not an
 * allocation: the pointer registry is left as it is. */
void xp_record_block(const xp_scope *s, uint8_t allocator, bool taken, uint64_t ptr,
                     uint64_t bytes, uint64_t allocated, uint64_t reserved_bytes, int device);

/* For other writers in the engine (xp_nvtx.c): the session's journal,
 * starting the session on first use (NULL when the profiler is off,
 * disabled or stopping); the calling thread's id; a meta key/value. */
xp_journal *xp_engine_journal(void);
uint32_t xp_engine_tid(void);
void xp_engine_meta(const char *key, const char *value);

/* An entry point of the libcuda.so.1 the process has loaded (never loading
 * one ourselves), NULL when none is loaded or it lacks `name`. */
void *xp_driver_symbol(const char *name);

/* The size of the allocation at ptr as the driver's cuMemGetAddressRange_v2
 * answers it (no runtime state touched); 0 when it does not.  For what the
 * profiler cannot know from the call (memory opened from another process). */
uint64_t xp_driver_range_bytes(uint64_t ptr);

/* The driver's cuMemGetInfo_v2 for the current context (no runtime state
 * touched): 0 on success. */
int xp_driver_mem_info(uint64_t *free_bytes, uint64_t *total_bytes);

/* Called by the driver hooks for each call they record: the first one notes
 * in meta (runtime = static) when no libcudart.so is loaded, i.e. the
 * process's CUDA runtime, if any, is linked statically and its copies are
 * seen at the driver layer only. */
void xp_note_driver_call(void);

/* The session's state, for a call from a signal handler (xp_scope.c),
 * which must neither start the session nor wait for it to start: the
 * handler may have interrupted the start. */
typedef enum xp_session {
    XP_SESSION_NONE,          /* off, disabled, or never started */
    XP_SESSION_STARTING,
    XP_SESSION_ON,
    XP_SESSION_STOPPING,
} xp_session;
xp_session xp_engine_session(void);

/* A call from a signal handler not recorded because the handler
 * interrupted the profiler's own work on its thread (counted in
 * records_lost at exit, with that reason). */
void xp_engine_signal_call_lost(void);

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
