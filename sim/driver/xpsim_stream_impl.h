/* xpsim_stream_impl.h: what the execution engine's two files (xpsim_stream.c: streams and workers; xpsim_event.c: events) share, and nothing else sees. */
#ifndef XPSIM_STREAM_IMPL_H
#define XPSIM_STREAM_IMPL_H

#include "xpsim_stream.h"

#include <stdatomic.h>
#include <stddef.h>

/* Handle registries are small chained hash sets keyed by pointer value. */
#define XPSIM_REGISTRY_BUCKETS 256u

/* Only pointer values are hashed and compared: an arbitrary handle from the
 * application is never dereferenced before it is found in a registry. */
static inline size_t xpsim_ptr_bucket(const void *p)
{
    uint64_t v = (uint64_t)(uintptr_t)p;
    v ^= v >> 29;
    v *= 0x9E3779B97F4A7C15ull;
    return (size_t)(v >> 56) % XPSIM_REGISTRY_BUCKETS;
}

/* What one cuEventRecord captured.  Shared by the event (until it is
 * re-recorded or destroyed) and by the marker item (until it completes), so
 * either may go away first. */
typedef struct xpsim_event_rec {
    atomic_int refs;
    CUstream stream;   /* holds a stream reference */
    uint64_t ticket;   /* set before the capture is published to the event */
    uint64_t ts_ns;    /* written by the worker before it publishes completion */
} xpsim_event_rec;

/* Drops one reference on a capture; the last frees it and its stream
 * reference (xpsim_event.c). */
void xpsim_rec_unref(xpsim_event_rec *rec);

/* A reference keeps a stream's memory alive (not its handle valid). */
void xpsim_stream_ref(CUstream s);
void xpsim_stream_unref(CUstream s);

/* Whether the stream has completed the item with this ticket. */
bool xpsim_stream_ticket_done(CUstream s, uint64_t ticket);

/* Queues one item, after waiting for room in the stream's queue.  dep (if
 * any): the item first waits for dep to complete dep_ticket (it takes its
 * own reference on dep).  rec (if any): an event marker, which must come
 * with a reference for the item.  Returns the item's ticket. */
uint64_t xpsim_stream_push(CUstream s, const xpsim_work *work, CUstream dep, uint64_t dep_ticket,
                           xpsim_event_rec *rec);

#endif
