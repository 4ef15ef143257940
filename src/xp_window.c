/* xp_window.c: the capture window: when it is open, the windows it had
 * (meta capture_window.N), and the calls skipped outside it. */
#include "xp_window.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "xp_engine.h"
#include "xp_engine_int.h"
#include "xp_nvtx.h"

bool xp_window_set;

/* When the preload was loaded, in the process or after its exec: what
 * XFERPROF_DELAY counts from (nsys counts from the launch). */
static uint64_t load_ns;

__attribute__((constructor)) static void xp_window_load(void)
{
    load_ns = xp_now_ns();
}

/* The settings, written by xp_window_start before the session is on. */
static xp_capture mode;
static uint64_t gate_ns;      /* no window opens before this (load_ns + delay) */
static uint64_t duration_ns;  /* 0: a window lasts until its trigger ends */
static uint64_t nvtx_name, nvtx_domain;   /* interned hashes (xp_nvtx_hash) */
static bool nvtx_any_domain;

/* When the trigger (cudaProfilerStart, a capture range open, or for no
 * trigger the load) last turned on, 0 while it is off.  Written under
 * `lock`, read by every call without it: a call racing with a Start or
 * Stop on another thread is on either side of it. */
static _Atomic uint64_t trig_since;
/* Whether the current window's row is in meta yet (a window waiting for
 * the delay is written by the first call inside it). */
static _Atomic bool cur_written;

/* Taken by trigger changes (rare: a Start, a Stop, a capture range), never
 * across a CUDA call; guards what follows. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t n_windows;    /* windows numbered so far (capture_window.1, ...) */
static int nvtx_open;         /* capture ranges open, on every thread */

static _Atomic uint64_t skipped[XP_WIN_KINDS];
static _Atomic uint64_t open_ids[XP_WINDOW_OPEN_IDS];
static _Atomic bool ids_full_noted;

/* The session's meta: directly at start and finish (the session is then
 * STARTING or STOPPING, where xp_engine_meta would wait or do nothing),
 * through xp_engine_meta from the program's calls. */
static void put(bool direct, const char *key, const char *value)
{
    if (direct)
        xp_session_put_meta(key, value);
    else
        xp_engine_meta(key, value);
}

static void put_u64(bool direct, const char *key, uint64_t v)
{
    char buf[24];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    put(direct, key, buf);
}

/* capture_window.N = "START END" (monotonic ns, like every time in the
 * database); END is left out while the window is open. */
static void put_window(bool direct, uint64_t n, uint64_t start, uint64_t end)
{
    char key[40], value[48];
    snprintf(key, sizeof key, "capture_window.%" PRIu64, n);
    if (end)
        snprintf(value, sizeof value, "%" PRIu64 " %" PRIu64, start, end);
    else
        snprintf(value, sizeof value, "%" PRIu64, start);
    put(direct, key, value);
}

static uint64_t window_start(uint64_t since)
{
    return since > gate_ns ? since : gate_ns;
}

/* Under lock: the trigger turned on at t. */
static void trigger_on(bool direct, uint64_t t)
{
    if (atomic_load_explicit(&trig_since, memory_order_relaxed) != 0)
        return;               /* a second Start: CUDA's does nothing either */
    atomic_store_explicit(&cur_written, false, memory_order_relaxed);
    if (t >= gate_ns) {
        put_window(direct, ++n_windows, t, 0);
        atomic_store_explicit(&cur_written, true, memory_order_relaxed);
    }
    atomic_store_explicit(&trig_since, t, memory_order_release);
}

/* Under lock: the trigger turned off at t; the window ends then, or when
 * its duration ran out before. */
static void trigger_off(bool direct, uint64_t t)
{
    uint64_t since = atomic_load_explicit(&trig_since, memory_order_relaxed);
    if (since == 0)
        return;
    uint64_t s = window_start(since), e = t;
    if (duration_ns && s + duration_ns < e)
        e = s + duration_ns;
    if (atomic_load_explicit(&cur_written, memory_order_relaxed))
        put_window(direct, n_windows, s, e > s ? e : s);
    else if (e > s)
        put_window(direct, ++n_windows, s, e);
    atomic_store_explicit(&cur_written, false, memory_order_relaxed);
    atomic_store_explicit(&trig_since, 0, memory_order_release);
}

bool xp_window_outside(uint64_t t_ns, xp_win_kind kind)
{
    uint64_t since = atomic_load_explicit(&trig_since, memory_order_acquire);
    if (since != 0) {
        uint64_t s = window_start(since);
        if (t_ns >= s && (duration_ns == 0 || t_ns < s + duration_ns)) {
            /* The first call inside a window the delay held back: its row. */
            if (__builtin_expect(!atomic_load_explicit(&cur_written, memory_order_relaxed), 0)) {
                pthread_mutex_lock(&lock);
                if (atomic_load_explicit(&trig_since, memory_order_relaxed) == since &&
                    !atomic_load_explicit(&cur_written, memory_order_relaxed)) {
                    put_window(false, ++n_windows, s, 0);
                    atomic_store_explicit(&cur_written, true, memory_order_relaxed);
                }
                pthread_mutex_unlock(&lock);
            }
            return false;
        }
    }
    atomic_fetch_add_explicit(&skipped[kind], 1, memory_order_relaxed);
    return true;
}

void xp_window_start(const xp_config *c)
{
    xp_window_set = c->window;
    if (!c->window)
        return;
    /* A child forked while another thread held the lock would find it
     * held for ever; the session starts before anything else takes it. */
    pthread_mutex_init(&lock, NULL);
    n_windows = 0;
    for (unsigned k = 0; k < XP_WIN_KINDS; k++)
        atomic_store(&skipped[k], 0);
    mode = c->capture;
    if (load_ns == 0)
        load_ns = xp_now_ns();
    gate_ns = load_ns + c->delay_ns;
    duration_ns = c->duration_ns;
    nvtx_name = xp_nvtx_hash(c->nvtx_name, strlen(c->nvtx_name));
    nvtx_domain = c->nvtx_domain[0] ? xp_nvtx_hash(c->nvtx_domain, strlen(c->nvtx_domain)) : 0;
    nvtx_any_domain = c->nvtx_any_domain;
    put(true, "capture_range", xp_config_capture_name(mode));
    if (mode == XP_CAPTURE_NVTX) {
        char v[2 * XP_CAPTURE_NAME_MAX + 2];
        snprintf(v, sizeof v, "%s%s%s", c->nvtx_name,
                 c->nvtx_any_domain || c->nvtx_domain[0] ? "@" : "",
                 c->nvtx_any_domain ? "*" : c->nvtx_domain);
        put(true, "capture_nvtx", v);
    }
    if (c->delay_ns)
        put_u64(true, "capture_delay_ns", c->delay_ns);
    if (c->duration_ns)
        put_u64(true, "capture_duration_ns", c->duration_ns);
    put_u64(true, "capture_load_ns", load_ns);
    /* No trigger: the window is the time from the delay on.  A trigger
     * already on (a child forked inside a window) opens this session's. */
    uint64_t since = atomic_exchange(&trig_since, 0);
    if (mode == XP_CAPTURE_NONE)
        trigger_on(true, load_ns);
    else if (since != 0)
        trigger_on(true, xp_now_ns());
}

void xp_window_finish(void)
{
    if (!xp_window_set)
        return;
    pthread_mutex_lock(&lock);
    trigger_off(true, xp_now_ns());
    put_u64(true, "capture_windows", n_windows);
    pthread_mutex_unlock(&lock);
    static const char *const keys[XP_WIN_KINDS] = {
        [XP_WIN_COPY] = "window_skipped_copies", [XP_WIN_MEMSET] = "window_skipped_memsets",
        [XP_WIN_SYNC] = "window_skipped_syncs", [XP_WIN_CALL] = "window_skipped_failed_calls"};
    uint64_t total = 0;
    for (unsigned k = 0; k < XP_WIN_KINDS; k++) {
        uint64_t n = atomic_load(&skipped[k]);
        total += n;
        put_u64(true, keys[k], n);
    }
    put_u64(true, "window_skipped_calls", total);
}

void xp_window_profiler(bool start)
{
    if (!xp_window_set || mode != XP_CAPTURE_PROFILER)
        return;
    pthread_mutex_lock(&lock);
    if (start)
        trigger_on(false, xp_now_ns());
    else
        trigger_off(false, xp_now_ns());
    pthread_mutex_unlock(&lock);
}

bool xp_window_nvtx_opened(uint64_t domain, uint64_t name)
{
    if (!xp_window_set || mode != XP_CAPTURE_NVTX || name != nvtx_name ||
        (!nvtx_any_domain && domain != nvtx_domain))
        return false;
    pthread_mutex_lock(&lock);
    if (nvtx_open++ == 0)
        trigger_on(false, xp_now_ns());
    pthread_mutex_unlock(&lock);
    return true;
}

void xp_window_nvtx_closed(void)
{
    pthread_mutex_lock(&lock);
    if (nvtx_open > 0 && --nvtx_open == 0)
        trigger_off(false, xp_now_ns());
    pthread_mutex_unlock(&lock);
}

bool xp_window_nvtx_note_id(uint64_t id)
{
    for (unsigned i = 0; i < XP_WINDOW_OPEN_IDS; i++) {
        uint64_t expected = 0;
        if (atomic_compare_exchange_strong(&open_ids[i], &expected, id))
            return true;
    }
    if (!atomic_exchange(&ids_full_noted, true))
        xp_engine_meta("capture_nvtx_too_many", "more than 64 capture start/end ranges were open "
                                                "at once; the others did not open the window");
    return false;
}

bool xp_window_nvtx_take_id(uint64_t id)
{
    if (!xp_window_set || mode != XP_CAPTURE_NVTX)
        return false;
    for (unsigned i = 0; i < XP_WINDOW_OPEN_IDS; i++) {
        uint64_t expected = id;
        if (atomic_compare_exchange_strong(&open_ids[i], &expected, 0))
            return true;
    }
    return false;
}
