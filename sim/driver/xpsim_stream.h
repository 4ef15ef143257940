/* xpsim_stream.h: the simulated device's execution engine: streams that run
 * their work asynchronously on worker threads, events, and the cross-stream
 * ordering rules of CUDA's legacy default stream.
 *
 * Everything here is in CUDA driver terms (CUstream, CUevent, CUresult); the
 * exported cu* functions in drv_stream.c validate arguments and call in. */
#ifndef XPSIM_STREAM_H
#define XPSIM_STREAM_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

/* Copy engines.  Work on the same lane of one device runs one item at a time
 * across all streams (a GPU has one engine per direction), so two concurrent
 * host-to-device copies take twice as long as one; other work runs as soon
 * as its stream reaches it. */
typedef enum xpsim_lane {
    XPSIM_LANE_NONE = 0,
    XPSIM_LANE_H2D,
    XPSIM_LANE_D2H,
    XPSIM_LANE_COUNT
} xpsim_lane;

/* One unit of device work.  The engine copies the struct; ctx stays owned by
 * the caller's release function. */
typedef struct xpsim_work {
    /* Moves the bytes.  Called on the stream's worker thread at the start of
     * the work's modeled window, once its dependencies are met (earlier work
     * of its stream, legacy-stream ordering, stream waits on events) and its
     * lane is free; the worker then sleeps out the rest of the window.  So a
     * host that reads the destination before synchronizing may already see
     * the bytes, as with a real DMA in flight.  Completion (query,
     * synchronize, events, tickets) is still published only at the modeled
     * end, and never before run has returned. */
    void (*run)(void *ctx);
    /* Frees ctx once the work is complete (also when run was skipped because
     * the device is in a sticky error state).  May be NULL. */
    void (*release)(void *ctx);
    void *ctx;
    uint64_t duration_ns;   /* modeled device time */
    xpsim_lane lane;
    /* Not CUDA_SUCCESS: executing this work corrupts the device's context
     * with this sticky error (an injected kernel fault). */
    CUresult fault;
    const char *what;       /* a static name for the debug log ("memcpyHtoD") */
} xpsim_work;

/* Called once from cuInit, before any other function here. */
void xpsim_streams_init(int device_count);

/* Creates a stream on device.  flags: CU_STREAM_DEFAULT (synchronizes with the
 * legacy default stream) or CU_STREAM_NON_BLOCKING.  Returns NULL only when
 * out of memory or threads. */
CUstream xpsim_stream_create(int device, unsigned int flags, int priority);

/* Work already enqueued still completes; the handle is invalid at once.
 * CUDA_ERROR_INVALID_HANDLE for a handle that is not a live created stream
 * (including the default streams, which cannot be destroyed). */
CUresult xpsim_stream_destroy(CUstream stream);

/* Turns an API stream handle into an engine stream.
 *   NULL (0)             -> device's legacy default stream, or the calling
 *                           thread's per-thread default stream when
 *                           per_thread_default (the _ptds/_ptsz variants)
 *   CU_STREAM_LEGACY     -> legacy default stream of device
 *   CU_STREAM_PER_THREAD -> calling thread's per-thread stream for device
 *   anything else        -> itself, if it is a live created stream
 * CUDA_ERROR_INVALID_HANDLE otherwise.  *out is set on success only. */
CUresult xpsim_stream_resolve(CUstream handle, bool per_thread_default, int device,
                              CUstream *out);

int xpsim_stream_device(CUstream stream);
unsigned int xpsim_stream_flags(CUstream stream);
int xpsim_stream_priority(CUstream stream);
bool xpsim_stream_is_default(CUstream stream);  /* legacy or per-thread */

/* Queues work.  Ordering: after all earlier work of the stream; if the
 * stream is the legacy default stream, also after all earlier work of every
 * blocking (non-CU_STREAM_NON_BLOCKING) stream of the device, per-thread
 * default streams included; if it is a blocking stream, also after all
 * earlier work of the legacy default stream.  Returns a ticket for
 * xpsim_stream_wait_ticket. */
uint64_t xpsim_stream_enqueue(CUstream stream, const xpsim_work *work);

/* Blocks the host until the work with this ticket has completed. */
void xpsim_stream_wait_ticket(CUstream stream, uint64_t ticket);

/* Blocks until all work enqueued so far has completed.  Returns the device's
 * sticky error, or CUDA_SUCCESS. */
CUresult xpsim_stream_synchronize(CUstream stream);

/* CUDA_SUCCESS when all enqueued work has completed, CUDA_ERROR_NOT_READY
 * otherwise (the sticky error, if any, takes precedence). */
CUresult xpsim_stream_query(CUstream stream);

/* Waits for all streams of the device.  Returns the sticky error, if any. */
CUresult xpsim_device_synchronize(int device);

/* The device's sticky error (CUDA_SUCCESS while healthy). */
CUresult xpsim_device_sticky_error(int device);

/* Waits for all work of the device, then clears its sticky error
 * (cuDevicePrimaryCtxReset / cudaDeviceReset). */
void xpsim_device_reset(int device);

/* Events.  flags: CU_EVENT_DEFAULT, CU_EVENT_BLOCKING_SYNC,
 * CU_EVENT_DISABLE_TIMING, CU_EVENT_INTERPROCESS. */
CUevent xpsim_event_create(unsigned int flags);
CUresult xpsim_event_destroy(CUevent event);   /* INVALID_HANDLE if unknown */
bool xpsim_event_valid(CUevent event);

/* Interprocess events (xpsim_ipc_event.h): one created with
 * CU_EVENT_INTERPROCESS keeps its state where other processes can open it;
 * records of it by any process publish there, and queries, synchronizes and
 * stream waits on it in any process see the latest of them. */
typedef struct xpsim_ipc_ref xpsim_ipc_ref;
typedef struct xpsim_ipc_slot_name xpsim_ipc_slot_name;

/* For xpsim_event_create: the event is another process's, opened here
 * (xpsim_event_open_ipc), so it gets no shared state of its own. */
#define XPSIM_EVENT_OPENED 0x80000000u

/* The name another process opens.  CUDA_ERROR_INVALID_HANDLE for an unknown
 * event or one created without CU_EVENT_INTERPROCESS; CUDA_ERROR_NOT_SUPPORTED
 * when its shared state could not be made; CUDA_ERROR_MAP_FAILED when this
 * process's file of them was closed under us. */
CUresult xpsim_event_ipc_name(CUevent event, xpsim_ipc_slot_name *out);

/* An event of this process over a slot opened from another (it takes the
 * reference); NULL when out of memory. */
CUevent xpsim_event_open_ipc(xpsim_ipc_ref *ref);

/* Captures the stream's work so far: the event completes when that work has.
 * Its timestamp is the modeled time the device reached it. */
CUresult xpsim_event_record(CUevent event, CUstream stream);

/* CUDA_SUCCESS if complete or never recorded, CUDA_ERROR_NOT_READY if not.
 * For a recorded event, the sticky error of the device of the stream it was
 * recorded on, if any, takes precedence (whether or not it has completed). */
CUresult xpsim_event_query(CUevent event);
CUresult xpsim_event_synchronize(CUevent event);

/* Milliseconds between two completed events.  CUDA_ERROR_INVALID_HANDLE if
 * either was created with CU_EVENT_DISABLE_TIMING or never recorded,
 * CUDA_ERROR_NOT_READY if either has not completed. */
CUresult xpsim_event_elapsed(float *out_ms, CUevent start, CUevent end);

/* Later work of stream waits until the event's captured work has completed
 * (a no-op for a never-recorded event). */
CUresult xpsim_stream_wait_event(CUstream stream, CUevent event);

/* Kernel launches executed so far on the device (for tests and XFERPROF_SIM_DEBUG). */
uint64_t xpsim_device_kernel_count(int device);
void xpsim_device_count_kernel(int device);

#endif
