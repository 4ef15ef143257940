/* xpsim_stream.c: the simulated device's execution engine: per-stream worker threads and their bounded queues, copy-engine lanes and legacy-default-stream ordering (events: xpsim_event.c). */
#include "xpsim_stream_impl.h"

#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xpsim_config.h"
#include "xpsim_log.h"
#include "xpsim_time.h"

/* A worker with nothing to do exits after this long, so that idle streams
 * (notably the retained per-thread streams of threads that have exited) do
 * not pin a thread each forever; the next enqueue starts a new one. */
#define XPSIM_WORKER_IDLE_NS 1000000000ull

/*
 * Locking, outermost first:
 *   g_lock        the stream registry, per-device stream lists, stream
 *                 reference counts, per-device enqueue sequence numbers
 *   stream->mu    one stream's queue and counters
 *   device lane_lock
 * No lock is held while sleeping, waiting for other streams, or calling a
 * work item's run/release.  A condition wait holds only the stream mutex
 * it waits on.
 *
 * Ordering model: every item pushed on a device gets a device-wide sequence
 * number (dseq), assigned under g_lock together with the push, so dseq order
 * is enqueue order.  "All earlier work of stream X" is then "X has no
 * incomplete item with a smaller dseq", which needs no per-item snapshot
 * list: the legacy barrier, device synchronize and the implicit wait of a
 * blocking stream on the legacy stream are all that one test.  Every wait
 * points at work enqueued earlier, so waits cannot form a cycle.
 */

typedef enum xpsim_stream_kind {
    XPSIM_STREAM_CREATED = 0,
    XPSIM_STREAM_LEGACY,
    XPSIM_STREAM_PER_THREAD,
} xpsim_stream_kind;

typedef struct xpsim_item {
    struct xpsim_item *next;
    xpsim_work work;
    uint64_t ticket;
    uint64_t dseq;
    bool legacy_barrier;   /* on the legacy stream: wait for blocking streams */
    bool wait_legacy;      /* on a blocking stream: wait for the legacy stream */
    CUstream dep_stream;   /* cuStreamWaitEvent: wait for dep_stream ... */
    uint64_t dep_ticket;   /* ... to complete this ticket (holds a reference) */
    xpsim_event_rec *rec;  /* event marker: timestamp goes here (holds a ref) */
    bool on_stack;         /* out-of-memory fallback: the enqueuer owns it */
} xpsim_item;

struct CUstream_st {
    int device;
    unsigned int flags;
    int priority;
    xpsim_stream_kind kind;

    pthread_mutex_t mu;
    pthread_cond_t work_cv;   /* new work or destroy, for the worker */
    pthread_cond_t done_cv;   /* an item completed, for waiters */
    xpsim_item *head;         /* the head stays queued until it completes */
    xpsim_item *tail;
    uint64_t submitted;
    uint64_t completed;
    uint64_t last_end_ns;     /* modeled end of the last completed item */
    bool running;             /* a worker (thread or inline drain) owns the queue */
    bool destroyed;

    /* g_lock */
    int refs;
    struct CUstream_st *dev_prev, *dev_next;
    struct CUstream_st *reg_next;
};

typedef struct xpsim_device_state {
    struct CUstream_st legacy;       /* never freed: holds a permanent ref */
    struct CUstream_st *streams;     /* g_lock: every stream still in memory */
    uint64_t next_dseq;              /* g_lock */
    pthread_mutex_t lane_lock;
    uint64_t lane_free_at[XPSIM_LANE_COUNT];
    atomic_int sticky;               /* CUresult */
    atomic_uint_fast64_t kernels;
} xpsim_device_state;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static bool g_initialized;                     /* g_lock */
static atomic_int g_device_count;              /* published last by init */
static xpsim_device_state g_dev[XPSIM_MAX_DEVICES];
static struct CUstream_st *g_stream_reg[XPSIM_REGISTRY_BUCKETS];  /* g_lock */
/* Per-thread default streams, one per device, created on first use.  The
 * streams outlive their thread (they stay on the device list), so pending
 * work of an exited thread still runs and device synchronize still sees it. */
static _Thread_local CUstream t_per_thread[XPSIM_MAX_DEVICES];

/* Nonzero while this thread runs a work item's run function (a host
 * function, on a stream's worker or in an inline drain).  Work enqueued from
 * there never waits for queue room: the worker that would make the room may
 * be this very thread, or may wait for work behind this item. */
static _Thread_local int t_running_work;

static bool device_ok(int device)
{
    return device >= 0 && device < atomic_load_explicit(&g_device_count, memory_order_acquire);
}

static const char *work_name(const xpsim_work *w)
{
    return w->what ? w->what : "work";
}

/* ---- registries (g_lock held) ------------------------------------------ */

static bool stream_reg_find(const void *h)
{
    for (struct CUstream_st *s = g_stream_reg[xpsim_ptr_bucket(h)]; s; s = s->reg_next)
        if ((const void *)s == h)
            return true;
    return false;
}

static void stream_reg_insert(CUstream s)
{
    size_t b = xpsim_ptr_bucket(s);
    s->reg_next = g_stream_reg[b];
    g_stream_reg[b] = s;
}

static bool stream_reg_remove(const void *h)
{
    for (struct CUstream_st **pp = &g_stream_reg[xpsim_ptr_bucket(h)]; *pp; pp = &(*pp)->reg_next) {
        if ((const void *)*pp == h) {
            *pp = (*pp)->reg_next;
            return true;
        }
    }
    return false;
}

/* ---- stream lifetime ---------------------------------------------------- */

static void dev_link(CUstream s)   /* g_lock held */
{
    xpsim_device_state *d = &g_dev[s->device];
    s->dev_prev = NULL;
    s->dev_next = d->streams;
    if (d->streams)
        d->streams->dev_prev = s;
    d->streams = s;
}

static void dev_unlink(CUstream s)   /* g_lock held */
{
    if (s->dev_prev)
        s->dev_prev->dev_next = s->dev_next;
    else
        g_dev[s->device].streams = s->dev_next;
    if (s->dev_next)
        s->dev_next->dev_prev = s->dev_prev;
    s->dev_prev = s->dev_next = NULL;
}

/* Initializes the synchronization objects.  Condition variables use the
 * monotonic clock because the worker's idle timeout is measured on it. */
static bool stream_init_sync(CUstream s)
{
    pthread_condattr_t attr;
    if (pthread_condattr_init(&attr) != 0)
        return false;
    (void)pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    bool ok = false;
    if (pthread_mutex_init(&s->mu, NULL) == 0) {
        if (pthread_cond_init(&s->work_cv, &attr) == 0) {
            if (pthread_cond_init(&s->done_cv, &attr) == 0)
                ok = true;
            else
                pthread_cond_destroy(&s->work_cv);
        }
        if (!ok)
            pthread_mutex_destroy(&s->mu);
    }
    pthread_condattr_destroy(&attr);
    return ok;
}

static void stream_fini_sync(CUstream s)
{
    pthread_cond_destroy(&s->done_cv);
    pthread_cond_destroy(&s->work_cv);
    pthread_mutex_destroy(&s->mu);
}

static void stream_setup(CUstream s, int device, unsigned int flags, int priority,
                         xpsim_stream_kind kind)
{
    s->device = device;
    s->flags = flags;
    s->priority = priority;
    s->kind = kind;
    s->refs = 1;
}

static CUstream stream_new(int device, unsigned int flags, int priority, xpsim_stream_kind kind)
{
    CUstream s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    if (!stream_init_sync(s)) {
        free(s);
        return NULL;
    }
    stream_setup(s, device, flags, priority, kind);
    return s;
}

static void stream_ref_locked(CUstream s)   /* g_lock held */
{
    s->refs++;
}

void xpsim_stream_ref(CUstream s)
{
    pthread_mutex_lock(&g_lock);
    stream_ref_locked(s);
    pthread_mutex_unlock(&g_lock);
}

/* The count drops to zero only for a destroyed created stream whose worker
 * has finished; the unlink happens under the same lock as every lookup that
 * could take a new reference, so nobody can resurrect a dying stream. */
void xpsim_stream_unref(CUstream s)
{
    bool dead = false;
    pthread_mutex_lock(&g_lock);
    if (--s->refs == 0) {
        dev_unlink(s);
        dead = true;
    }
    pthread_mutex_unlock(&g_lock);
    if (dead) {
        stream_fini_sync(s);
        free(s);
    }
}

/* Blocking streams take part in the legacy stream's implicit
 * synchronization; per-thread default streams are blocking. */
static bool stream_syncs_with_legacy(const struct CUstream_st *s)
{
    if (s->kind == XPSIM_STREAM_PER_THREAD)
        return true;
    return s->kind == XPSIM_STREAM_CREATED && !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* dseq of the oldest incomplete item, UINT64_MAX when idle (s->mu held). */
static uint64_t stream_oldest_dseq(const struct CUstream_st *s)
{
    return s->head ? s->head->dseq : UINT64_MAX;
}

/* ---- waiting ------------------------------------------------------------ */

static void wait_stream_ticket(CUstream s, uint64_t ticket)
{
    pthread_mutex_lock(&s->mu);
    /* A ticket never handed out would otherwise wait forever. */
    if (ticket > s->submitted)
        ticket = s->submitted;
    while (s->completed < ticket)
        pthread_cond_wait(&s->done_cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

bool xpsim_stream_ticket_done(CUstream s, uint64_t ticket)
{
    pthread_mutex_lock(&s->mu);
    bool done = s->completed >= ticket;
    pthread_mutex_unlock(&s->mu);
    return done;
}

/* Until s has completed every item with dseq < bound. */
static void wait_stream_dseq(CUstream s, uint64_t bound)
{
    pthread_mutex_lock(&s->mu);
    while (stream_oldest_dseq(s) < bound)
        pthread_cond_wait(&s->done_cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

/* Until every stream of device (only the blocking ones when blocking_only)
 * has completed its items with dseq < bound.  Rescans from the start after
 * each wait instead of snapshotting the list, so it needs no memory and
 * copes with streams coming and going; it terminates because only finitely
 * many items have a dseq below bound. */
static void wait_device_dseq(int device, uint64_t bound, bool blocking_only)
{
    for (;;) {
        CUstream busy = NULL;
        pthread_mutex_lock(&g_lock);
        for (CUstream s = g_dev[device].streams; s; s = s->dev_next) {
            if (blocking_only && !stream_syncs_with_legacy(s))
                continue;
            pthread_mutex_lock(&s->mu);
            bool pending = stream_oldest_dseq(s) < bound;
            pthread_mutex_unlock(&s->mu);
            if (pending) {
                busy = s;
                stream_ref_locked(s);
                break;
            }
        }
        pthread_mutex_unlock(&g_lock);
        if (!busy)
            return;
        wait_stream_dseq(busy, bound);
        xpsim_stream_unref(busy);
    }
}

/* ---- the worker --------------------------------------------------------- */

static void item_execute(CUstream s, xpsim_item *it)
{
    xpsim_device_state *d = &g_dev[s->device];

    /* Dependencies: all of them point at work enqueued before this item. */
    if (it->legacy_barrier)
        wait_device_dseq(s->device, it->dseq, true);
    if (it->wait_legacy)
        wait_stream_dseq(&d->legacy, it->dseq);
    if (it->dep_stream)
        wait_stream_ticket(it->dep_stream, it->dep_ticket);

    /* Completions are published only after their modeled end has passed, so
     * "now" already covers every dependency; the stream's own last end is
     * kept in the max for clarity and for the inline-drain path. */
    uint64_t start = xpsim_now_ns();
    pthread_mutex_lock(&s->mu);
    if (start < s->last_end_ns)
        start = s->last_end_ns;
    pthread_mutex_unlock(&s->mu);

    uint64_t dur = it->work.duration_ns;
    xpsim_lane lane = it->work.lane;
    if (lane > XPSIM_LANE_NONE && lane < XPSIM_LANE_COUNT) {
        /* One engine per direction: reserve it from when it frees up. */
        pthread_mutex_lock(&d->lane_lock);
        if (start < d->lane_free_at[lane])
            start = d->lane_free_at[lane];
        d->lane_free_at[lane] = dur > UINT64_MAX - start ? UINT64_MAX : start + dur;
        pthread_mutex_unlock(&d->lane_lock);
    }
    uint64_t end = dur > UINT64_MAX - start ? UINT64_MAX : start + dur;

    xpsim_debug("device %d stream %p: %s start (ticket %" PRIu64 ", %" PRIu64 " ns, lane %d)",
                s->device, (void *)s, work_name(&it->work), it->ticket, dur, (int)lane);

    /* A marker's timestamp is the modeled time the device reached it, not
     * the (overshooting) wake-up time. */
    if (it->rec)
        it->rec->ts_ns = start;

    /* The bytes move at the start of the modeled window and the worker then
     * sleeps out the rest of it: moving them takes real host time (memcpy
     * here runs at a few GB/s, slower than the modeled link), and doing it
     * inside the window keeps durations what the model says wherever the
     * host can keep up.  A program can see the bytes land before the work
     * completes, as it can with a real DMA in flight.  The window may begin
     * later than now (its lane is busy until then): no bytes move before. */
    xpsim_sleep_until(start);
    bool skipped = true;
    if (atomic_load(&d->sticky) == CUDA_SUCCESS) {
        skipped = false;
        if (it->work.run) {
            t_running_work++;
            it->work.run(it->work.ctx);
            t_running_work--;
        }
        if (it->work.fault != CUDA_SUCCESS) {
            /* The faulting item itself executes (the kernel ran and trapped);
             * the first fault on the device wins. */
            int expected = CUDA_SUCCESS;
            atomic_compare_exchange_strong(&d->sticky, &expected, (int)it->work.fault);
            xpsim_debug("device %d: %s raised sticky error %d", s->device,
                        work_name(&it->work), (int)it->work.fault);
        }
    }

    xpsim_sleep_until(end);

    xpsim_debug("device %d stream %p: %s end (ticket %" PRIu64 "%s)", s->device,
                (void *)s, work_name(&it->work), it->ticket,
                skipped ? ", skipped: sticky error" : "");

    /* Released before completion is published, so a host that synchronized
     * knows every release of that work has run. */
    if (it->work.release)
        it->work.release(it->work.ctx);

    /* Once completion is published an on-stack item may be gone. */
    CUstream dep = it->dep_stream;
    xpsim_event_rec *rec = it->rec;
    bool heap = !it->on_stack;

    pthread_mutex_lock(&s->mu);
    s->last_end_ns = end;
    s->head = it->next;
    if (!s->head)
        s->tail = NULL;
    s->completed = it->ticket;
    pthread_cond_broadcast(&s->done_cv);
    pthread_mutex_unlock(&s->mu);

    if (heap)
        free(it);
    if (dep)
        xpsim_stream_unref(dep);
    if (rec)
        xpsim_rec_unref(rec);
}

/* Runs the queue until it is empty (inline) or, on a worker thread, until it
 * has stayed empty for the idle time or the stream is destroyed.  The caller
 * owns s->running and the reference that came with it; both end here. */
static void stream_drain(CUstream s, bool linger)
{
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (!s->head) {
            if (!linger || s->destroyed)
                break;
            uint64_t deadline = xpsim_now_ns() + XPSIM_WORKER_IDLE_NS;
            struct timespec ts = {
                .tv_sec = (time_t)(deadline / 1000000000u),
                .tv_nsec = (long)(deadline % 1000000000u),
            };
            int rc = 0;
            while (!s->head && !s->destroyed && rc == 0)
                rc = pthread_cond_timedwait(&s->work_cv, &s->mu, &ts);
            if (!s->head)
                break;
            continue;
        }
        xpsim_item *it = s->head;
        pthread_mutex_unlock(&s->mu);
        item_execute(s, it);
        pthread_mutex_lock(&s->mu);
    }
    s->running = false;
    pthread_mutex_unlock(&s->mu);
    xpsim_stream_unref(s);
}

static void *stream_worker(void *arg)
{
    CUstream s = arg;
    (void)pthread_setname_np(pthread_self(), "xpsim-stream");
    stream_drain(s, true);
    return NULL;
}

/* Detached: a worker ends by itself when its stream is idle or destroyed,
 * and nobody needs to join it. */
static bool stream_start_thread(CUstream s)
{
    pthread_attr_t attr;
    if (pthread_attr_init(&attr) != 0)
        return false;
    (void)pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);

    /* Asynchronous signals (a profiler's SIGPROF, an application's SIGINT
     * handler) belong to the application's threads, as with the real
     * driver's internal threads; faults stay deliverable. */
    sigset_t all, old;
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    sigdelset(&all, SIGTRAP);
    sigdelset(&all, SIGABRT);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t tid;
    int rc = pthread_create(&tid, &attr, stream_worker, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pthread_attr_destroy(&attr);
    return rc == 0;
}

/* ---- enqueue ------------------------------------------------------------ */

/* A real GPU takes asynchronous work into a bounded queue (the channel's
 * push buffer) and a launch blocks while it is full, so a host that never
 * synchronizes runs only so far ahead of the device: a stream holds at most
 * XFERPROF_SIM_QUEUE_DEPTH incomplete items (s->mu held).  Every pending item
 * points only at work enqueued before it, so the room always comes. */
static bool queue_has_room(const struct CUstream_st *s)
{
    return t_running_work || s->submitted - s->completed < xpsim_config_get()->queue_depth;
}

/* Until the stream has room.  Holds no lock but the stream's own while
 * waiting, as a worker completing an item needs g_lock only afterwards. */
static void wait_queue_room(CUstream s)
{
    pthread_mutex_lock(&s->mu);
    while (!queue_has_room(s))
        pthread_cond_wait(&s->done_cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

uint64_t xpsim_stream_push(CUstream s, const xpsim_work *work, CUstream dep, uint64_t dep_ticket,
                           xpsim_event_rec *rec)
{
    xpsim_item local;
    xpsim_item *it = calloc(1, sizeof *it);
    bool on_stack = false;
    if (!it) {
        /* Out of memory: queue a stack item and wait for it, i.e. run the
         * work synchronously with all its ordering intact. */
        memset(&local, 0, sizeof local);
        it = &local;
        on_stack = true;
        xpsim_debug("out of memory queueing %s, running it synchronously", work_name(work));
    }
    it->work = *work;
    it->on_stack = on_stack;
    it->dep_stream = dep;
    it->dep_ticket = dep_ticket;
    it->rec = rec;
    it->legacy_barrier = s->kind == XPSIM_STREAM_LEGACY;
    it->wait_legacy = stream_syncs_with_legacy(s);

    /* Room is checked again under the locks the push takes, so concurrent
     * enqueuers on one stream never exceed the depth together. */
    bool start = false;
    for (;;) {
        wait_queue_room(s);
        pthread_mutex_lock(&g_lock);
        pthread_mutex_lock(&s->mu);
        if (queue_has_room(s))
            break;
        pthread_mutex_unlock(&s->mu);
        pthread_mutex_unlock(&g_lock);
    }
    it->dseq = g_dev[s->device].next_dseq++;
    if (dep)
        stream_ref_locked(dep);
    uint64_t ticket = ++s->submitted;
    it->ticket = ticket;
    if (s->tail)
        s->tail->next = it;
    else
        s->head = it;
    s->tail = it;
    if (!s->running) {
        s->running = true;
        stream_ref_locked(s);   /* the worker's */
        start = true;
    } else {
        pthread_cond_signal(&s->work_cv);
    }
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_unlock(&g_lock);
    /* From here on `it` belongs to the worker. */

    if (start && !stream_start_thread(s)) {
        /* No thread to be had: be the worker until the queue is empty. */
        xpsim_debug("cannot start a stream worker, running %s inline", work_name(work));
        stream_drain(s, false);
    }
    if (on_stack)
        wait_stream_ticket(s, ticket);
    return ticket;
}

/* ---- public: setup and streams ------------------------------------------ */

void xpsim_streams_init(int device_count)
{
    pthread_mutex_lock(&g_lock);
    if (!g_initialized) {
        g_initialized = true;
        if (device_count < 0)
            device_count = 0;
        if (device_count > XPSIM_MAX_DEVICES)
            device_count = XPSIM_MAX_DEVICES;
        int ready = 0;
        for (int i = 0; i < device_count; i++) {
            xpsim_device_state *d = &g_dev[i];
            if (!stream_init_sync(&d->legacy))
                break;
            if (pthread_mutex_init(&d->lane_lock, NULL) != 0) {
                stream_fini_sync(&d->legacy);
                break;
            }
            stream_setup(&d->legacy, i, CU_STREAM_DEFAULT, 0, XPSIM_STREAM_LEGACY);
            d->next_dseq = 1;
            atomic_init(&d->sticky, CUDA_SUCCESS);
            atomic_init(&d->kernels, 0);
            dev_link(&d->legacy);
            ready++;
        }
        atomic_store_explicit(&g_device_count, ready, memory_order_release);
    }
    pthread_mutex_unlock(&g_lock);
}

CUstream xpsim_stream_create(int device, unsigned int flags, int priority)
{
    if (!device_ok(device))
        return NULL;
    CUstream s = stream_new(device, flags, priority, XPSIM_STREAM_CREATED);
    if (!s)
        return NULL;
    pthread_mutex_lock(&g_lock);
    dev_link(s);
    stream_reg_insert(s);   /* the registry's reference */
    pthread_mutex_unlock(&g_lock);
    return s;
}

CUresult xpsim_stream_destroy(CUstream stream)
{
    pthread_mutex_lock(&g_lock);
    bool found = stream_reg_remove(stream);
    pthread_mutex_unlock(&g_lock);
    if (!found)
        return CUDA_ERROR_INVALID_HANDLE;
    /* Invalid from now on; the worker drains what is queued, then the last
     * reference frees the stream. */
    pthread_mutex_lock(&stream->mu);
    stream->destroyed = true;
    pthread_cond_broadcast(&stream->work_cv);
    pthread_mutex_unlock(&stream->mu);
    xpsim_stream_unref(stream);
    return CUDA_SUCCESS;
}

static CUstream per_thread_stream(int device)
{
    CUstream s = t_per_thread[device];
    if (s)
        return s;
    s = stream_new(device, CU_STREAM_DEFAULT, 0, XPSIM_STREAM_PER_THREAD);
    if (!s)
        return NULL;
    pthread_mutex_lock(&g_lock);
    dev_link(s);   /* its initial reference is permanent: it is never freed */
    pthread_mutex_unlock(&g_lock);
    t_per_thread[device] = s;
    return s;
}

CUresult xpsim_stream_resolve(CUstream handle, bool per_thread_default, int device, CUstream *out)
{
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    if (!handle)
        handle = per_thread_default ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    if (handle == CU_STREAM_LEGACY || handle == CU_STREAM_PER_THREAD) {
        if (!device_ok(device))
            return CUDA_ERROR_INVALID_HANDLE;
        if (handle == CU_STREAM_LEGACY) {
            *out = &g_dev[device].legacy;
            return CUDA_SUCCESS;
        }
        CUstream pt = per_thread_stream(device);
        if (!pt)
            return CUDA_ERROR_OUT_OF_MEMORY;
        *out = pt;
        return CUDA_SUCCESS;
    }
    pthread_mutex_lock(&g_lock);
    bool found = stream_reg_find(handle);
    pthread_mutex_unlock(&g_lock);
    if (!found)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = handle;
    return CUDA_SUCCESS;
}

int xpsim_stream_device(CUstream stream)
{
    return stream ? stream->device : -1;
}

unsigned int xpsim_stream_flags(CUstream stream)
{
    return stream ? stream->flags : 0;
}

int xpsim_stream_priority(CUstream stream)
{
    return stream ? stream->priority : 0;
}

bool xpsim_stream_is_default(CUstream stream)
{
    return stream && stream->kind != XPSIM_STREAM_CREATED;
}

uint64_t xpsim_stream_enqueue(CUstream stream, const xpsim_work *work)
{
    if (!stream || !work)
        return 0;
    return xpsim_stream_push(stream, work, NULL, 0, NULL);
}

void xpsim_stream_wait_ticket(CUstream stream, uint64_t ticket)
{
    if (stream)
        wait_stream_ticket(stream, ticket);
}

CUresult xpsim_stream_synchronize(CUstream stream)
{
    if (!stream)
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&stream->mu);
    uint64_t target = stream->submitted;
    while (stream->completed < target)
        pthread_cond_wait(&stream->done_cv, &stream->mu);
    pthread_mutex_unlock(&stream->mu);
    return (CUresult)atomic_load(&g_dev[stream->device].sticky);
}

CUresult xpsim_stream_query(CUstream stream)
{
    if (!stream)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult sticky = (CUresult)atomic_load(&g_dev[stream->device].sticky);
    if (sticky != CUDA_SUCCESS)
        return sticky;
    pthread_mutex_lock(&stream->mu);
    bool idle = stream->completed == stream->submitted;
    pthread_mutex_unlock(&stream->mu);
    return idle ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

/* ---- public: devices ---------------------------------------------------- */

CUresult xpsim_device_synchronize(int device)
{
    if (!device_ok(device))
        return CUDA_ERROR_INVALID_DEVICE;
    pthread_mutex_lock(&g_lock);
    uint64_t bound = g_dev[device].next_dseq;   /* everything submitted so far */
    pthread_mutex_unlock(&g_lock);
    wait_device_dseq(device, bound, false);
    return (CUresult)atomic_load(&g_dev[device].sticky);
}

CUresult xpsim_device_sticky_error(int device)
{
    if (!device_ok(device))
        return CUDA_ERROR_INVALID_DEVICE;
    return (CUresult)atomic_load(&g_dev[device].sticky);
}

void xpsim_device_reset(int device)
{
    if (!device_ok(device))
        return;
    (void)xpsim_device_synchronize(device);
    atomic_store(&g_dev[device].sticky, CUDA_SUCCESS);
}

uint64_t xpsim_device_kernel_count(int device)
{
    if (!device_ok(device))
        return 0;
    return (uint64_t)atomic_load(&g_dev[device].kernels);
}

void xpsim_device_count_kernel(int device)
{
    if (device_ok(device))
        atomic_fetch_add(&g_dev[device].kernels, 1);
}
