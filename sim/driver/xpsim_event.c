/* xpsim_event.c: events of the simulated device: the registry of handles, what each cuEventRecord captured, and queries, waits and timings on those captures. */
#include "xpsim_ipc_event.h"
#include "xpsim_stream_impl.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

/* Locking: g_event_lock guards the registry and each event's current
 * capture.  It is never held while taking another lock of the engine or
 * while waiting; captures are reference counted, so one outlives the lock. */

struct CUevent_st {
    unsigned int flags;
    xpsim_event_rec *rec;        /* g_event_lock; NULL until first recorded */
    /* An interprocess event's state shared with other processes (set at
     * creation, NULL for others): its records publish there, and queries
     * and waits look there, since another process may have recorded it. */
    xpsim_ipc_ref *ipc;
    struct CUevent_st *reg_next; /* g_event_lock */
};

static pthread_mutex_t g_event_lock = PTHREAD_MUTEX_INITIALIZER;
static struct CUevent_st *g_event_reg[XPSIM_REGISTRY_BUCKETS];   /* g_event_lock */

/* ---- registry (g_event_lock held) --------------------------------------- */

static bool event_reg_find(const void *h)
{
    for (struct CUevent_st *e = g_event_reg[xpsim_ptr_bucket(h)]; e; e = e->reg_next)
        if ((const void *)e == h)
            return true;
    return false;
}

static void event_reg_insert(CUevent e)
{
    size_t b = xpsim_ptr_bucket(e);
    e->reg_next = g_event_reg[b];
    g_event_reg[b] = e;
}

static bool event_reg_remove(const void *h)
{
    for (struct CUevent_st **pp = &g_event_reg[xpsim_ptr_bucket(h)]; *pp; pp = &(*pp)->reg_next) {
        if ((const void *)*pp == h) {
            *pp = (*pp)->reg_next;
            return true;
        }
    }
    return false;
}

/* ---- event captures ----------------------------------------------------- */

void xpsim_rec_unref(xpsim_event_rec *rec)
{
    if (atomic_fetch_sub_explicit(&rec->refs, 1, memory_order_acq_rel) == 1) {
        xpsim_stream_unref(rec->stream);
        free(rec);
    }
}

/* Looks the event up and takes a reference on its current capture and, if
 * ipc is not NULL, on its shared state (NULL for an event that has none).
 * Returns false for an unknown handle. */
static bool event_get(CUevent e, xpsim_event_rec **rec, unsigned int *flags, xpsim_ipc_ref **ipc)
{
    pthread_mutex_lock(&g_event_lock);
    bool found = event_reg_find(e);
    if (found) {
        *rec = e->rec;
        if (*rec)
            atomic_fetch_add_explicit(&(*rec)->refs, 1, memory_order_relaxed);
        if (flags)
            *flags = e->flags;
        if (ipc && (*ipc = e->ipc) != NULL)
            xpsim_ipc_ref_take(*ipc);
    }
    pthread_mutex_unlock(&g_event_lock);
    return found;
}

/* ---- interprocess events ------------------------------------------------ */

/* A record or a wait of an interprocess event, queued on a stream. */
typedef struct ipc_mark {
    xpsim_ipc_ref *ref;   /* holds a reference */
    uint32_t gen;
} ipc_mark;

static ipc_mark *ipc_mark_new(xpsim_ipc_ref *ref, uint32_t gen)
{
    ipc_mark *m = malloc(sizeof *m);
    if (m != NULL)
        *m = (ipc_mark){.ref = ref, .gen = gen};
    return m;
}

static void ipc_mark_free(void *arg)
{
    ipc_mark *m = arg;
    xpsim_ipc_ref_drop(m->ref);
    free(m);
}

/* A record's release: it runs when the stream has reached the record, also
 * past a sticky error (as the event of a faulted context completes). */
static void ipc_mark_publish(void *arg)
{
    ipc_mark *m = arg;
    xpsim_ipc_publish(m->ref, m->gen);
    ipc_mark_free(m);
}

/* A wait's run: the stream goes on once that record has completed. */
static void ipc_mark_wait(void *arg)
{
    ipc_mark *m = arg;
    xpsim_ipc_wait(m->ref, m->gen);
}

CUevent xpsim_event_open_ipc(xpsim_ipc_ref *ref)
{
    CUevent e = xpsim_event_create(CU_EVENT_INTERPROCESS | CU_EVENT_DISABLE_TIMING | XPSIM_EVENT_OPENED);
    if (e != NULL)
        e->ipc = ref;
    return e;
}

CUresult xpsim_event_ipc_name(CUevent event, xpsim_ipc_slot_name *out)
{
    xpsim_event_rec *rec = NULL;
    xpsim_ipc_ref *ipc = NULL;
    unsigned int flags = 0;
    if (!event_get(event, &rec, &flags, &ipc))
        return CUDA_ERROR_INVALID_HANDLE;
    if (rec)
        xpsim_rec_unref(rec);
    /* Created without CU_EVENT_INTERPROCESS: a handle CUDA does not share. */
    if (!(flags & CU_EVENT_INTERPROCESS))
        return CUDA_ERROR_INVALID_HANDLE;
    if (ipc == NULL)
        return CUDA_ERROR_NOT_SUPPORTED;   /* no shared state could be made */
    CUresult rc = xpsim_ipc_ref_name(ipc, out);
    xpsim_ipc_ref_drop(ipc);
    return rc;
}

/* ---- public: events ----------------------------------------------------- */

CUevent xpsim_event_create(unsigned int flags)
{
    CUevent e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->flags = flags & ~(unsigned)XPSIM_EVENT_OPENED;
    /* Its shared state is made now, not at export: a record made before the
     * export must be seen by the processes that open it. */
    if ((flags & (CU_EVENT_INTERPROCESS | XPSIM_EVENT_OPENED)) == CU_EVENT_INTERPROCESS)
        e->ipc = xpsim_ipc_ref_new();
    pthread_mutex_lock(&g_event_lock);
    event_reg_insert(e);
    pthread_mutex_unlock(&g_event_lock);
    return e;
}

CUresult xpsim_event_destroy(CUevent event)
{
    xpsim_event_rec *rec = NULL;
    pthread_mutex_lock(&g_event_lock);
    bool found = event_reg_remove(event);
    if (found) {
        rec = event->rec;
        event->rec = NULL;
    }
    pthread_mutex_unlock(&g_event_lock);
    if (!found)
        return CUDA_ERROR_INVALID_HANDLE;
    /* A pending marker keeps its own reference on the capture. */
    if (rec)
        xpsim_rec_unref(rec);
    if (event->ipc) {
        xpsim_ipc_ref_retire(event->ipc);
        xpsim_ipc_ref_drop(event->ipc);
    }
    free(event);
    return CUDA_SUCCESS;
}

bool xpsim_event_valid(CUevent event)
{
    pthread_mutex_lock(&g_event_lock);
    bool found = event_reg_find(event);
    pthread_mutex_unlock(&g_event_lock);
    return found;
}

CUresult xpsim_event_record(CUevent event, CUstream stream)
{
    xpsim_event_rec *prev = NULL;
    xpsim_ipc_ref *ipc = NULL;
    if (!stream || !event_get(event, &prev, NULL, &ipc))
        return CUDA_ERROR_INVALID_HANDLE;
    if (prev)
        xpsim_rec_unref(prev);
    xpsim_event_rec *rec = calloc(1, sizeof *rec);
    ipc_mark *mark = ipc && rec ? ipc_mark_new(ipc, 0) : NULL;
    if (!rec || (ipc && !mark)) {
        free(rec);
        if (ipc)
            xpsim_ipc_ref_drop(ipc);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    atomic_init(&rec->refs, 2);   /* the event's and the marker's */
    rec->stream = stream;
    xpsim_stream_ref(stream);

    /* An interprocess event's record also publishes to every process. */
    if (mark)
        mark->gen = xpsim_ipc_issue(ipc);
    const xpsim_work marker = { .what = "eventRecord", .lane = XPSIM_LANE_NONE, .fault = CUDA_SUCCESS,
                                .release = mark ? ipc_mark_publish : NULL, .ctx = mark };
    rec->ticket = xpsim_stream_push(stream, &marker, NULL, 0, rec);

    xpsim_event_rec *old;
    pthread_mutex_lock(&g_event_lock);
    if (event_reg_find(event)) {
        old = event->rec;
        event->rec = rec;
    } else {
        old = rec;   /* destroyed meanwhile: drop the event's reference */
    }
    pthread_mutex_unlock(&g_event_lock);
    if (old)
        xpsim_rec_unref(old);
    return CUDA_SUCCESS;
}

CUresult xpsim_event_query(CUevent event)
{
    xpsim_event_rec *rec = NULL;
    xpsim_ipc_ref *ipc = NULL;
    if (!event_get(event, &rec, NULL, &ipc))
        return CUDA_ERROR_INVALID_HANDLE;
    bool done = true;
    if (ipc) {   /* the latest record of any process */
        done = xpsim_ipc_done(ipc, xpsim_ipc_latest(ipc));
        xpsim_ipc_ref_drop(ipc);
    }
    if (!rec)
        return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
    /* The sticky error of the recording stream's device takes precedence, as
     * with cuEventQuery.  Read after the completion check: a fault raised by
     * work before the event happened before its completion was published. */
    if (!ipc)
        done = xpsim_stream_ticket_done(rec->stream, rec->ticket);
    CUresult sticky = xpsim_device_sticky_error(xpsim_stream_device(rec->stream));
    xpsim_rec_unref(rec);
    if (sticky != CUDA_SUCCESS)
        return sticky;
    return done ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult xpsim_event_synchronize(CUevent event)
{
    xpsim_event_rec *rec = NULL;
    xpsim_ipc_ref *ipc = NULL;
    if (!event_get(event, &rec, NULL, &ipc))
        return CUDA_ERROR_INVALID_HANDLE;
    if (ipc) {
        xpsim_ipc_wait(ipc, xpsim_ipc_latest(ipc));
        xpsim_ipc_ref_drop(ipc);
    }
    if (!rec)
        return CUDA_SUCCESS;
    if (!ipc)
        xpsim_stream_wait_ticket(rec->stream, rec->ticket);
    CUresult sticky = xpsim_device_sticky_error(xpsim_stream_device(rec->stream));
    xpsim_rec_unref(rec);
    return sticky;
}

CUresult xpsim_event_elapsed(float *out_ms, CUevent start, CUevent end)
{
    if (!out_ms)
        return CUDA_ERROR_INVALID_VALUE;
    xpsim_event_rec *a = NULL, *b = NULL;
    unsigned int fa = 0, fb = 0;
    CUresult rc = CUDA_SUCCESS;
    if (!event_get(start, &a, &fa, NULL) || !event_get(end, &b, &fb, NULL))
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if ((fa | fb) & CU_EVENT_DISABLE_TIMING)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!a || !b)
        rc = CUDA_ERROR_INVALID_HANDLE;
    else if (!xpsim_stream_ticket_done(a->stream, a->ticket) || !xpsim_stream_ticket_done(b->stream, b->ticket))
        rc = CUDA_ERROR_NOT_READY;
    else {
        /* ts_ns was written before completion was published under the
         * stream mutex that xpsim_stream_ticket_done just took. */
        int64_t ns = (int64_t)(b->ts_ns - a->ts_ns);
        *out_ms = (float)((double)ns / 1e6);
    }
    if (a)
        xpsim_rec_unref(a);
    if (b)
        xpsim_rec_unref(b);
    return rc;
}

CUresult xpsim_stream_wait_event(CUstream stream, CUevent event)
{
    if (!stream)
        return CUDA_ERROR_INVALID_HANDLE;
    xpsim_event_rec *rec = NULL;
    xpsim_ipc_ref *ipc = NULL;
    if (!event_get(event, &rec, NULL, &ipc))
        return CUDA_ERROR_INVALID_HANDLE;
    if (ipc) {
        /* Whoever recorded it last, in whichever process: the stream waits
         * on its worker for that record's publication. */
        if (rec)
            xpsim_rec_unref(rec);
        uint32_t gen = xpsim_ipc_latest(ipc);
        ipc_mark *m = xpsim_ipc_done(ipc, gen) ? NULL : ipc_mark_new(ipc, gen);
        if (m == NULL) {
            bool done = xpsim_ipc_done(ipc, gen);
            xpsim_ipc_ref_drop(ipc);
            return done ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
        }
        const xpsim_work w = {.run = ipc_mark_wait, .release = ipc_mark_free, .ctx = m,
                              .what = "streamWaitEvent(ipc)", .lane = XPSIM_LANE_NONE,
                              .fault = CUDA_SUCCESS};
        (void)xpsim_stream_enqueue(stream, &w);
        return CUDA_SUCCESS;
    }
    if (!rec)
        return CUDA_SUCCESS;
    /* Same stream: already ordered.  Already complete: nothing to wait for. */
    if (rec->stream != stream && !xpsim_stream_ticket_done(rec->stream, rec->ticket)) {
        const xpsim_work barrier = { .what = "streamWaitEvent", .lane = XPSIM_LANE_NONE,
                                     .fault = CUDA_SUCCESS };
        (void)xpsim_stream_push(stream, &barrier, rec->stream, rec->ticket, NULL);
    }
    xpsim_rec_unref(rec);
    return CUDA_SUCCESS;
}
