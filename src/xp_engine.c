/* xp_engine.c: the preload's session: its lazy start, the background
 * ingest, fork and vfork, and its end at exit. */
#include "xp_engine.h"
#include "xp_engine_int.h"
#include "xp_graph.h"
#include "xp_fingerprint.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xp_config.h"
#include "xp_devices.h"
#include "xp_ingest.h"
#include "xp_journal.h"
#include "xp_modules.h"
#include "xp_nvtx.h"
#include "xp_outfile.h"
#include "xp_stack.h"
#include "xp_window.h"

enum { ST_OFF = 0, ST_STARTING, ST_ON = XP_ENGINE_ON, ST_DISABLED, ST_STOPPING };

/* The process's profiling session (xp_engine_int.h) and its state. */
_Atomic int xp_engine_state = ST_OFF;
xp_sess_state xp_sess = {.stop_lock = PTHREAD_MUTEX_INITIALIZER,
                         .stop_cond = PTHREAD_COND_INITIALIZER};
/* Calls whose record could not be reserved in the journal: records_lost
 * counts calls, and the journal's own count also has the stack, module and
 * meta records that did not fit. */
static _Atomic uint64_t calls_lost;
/* Calls from signal handlers that interrupted the profiler's own work on
 * their thread (xp_scope_enter_deeper), not recorded. */
static _Atomic uint64_t signal_calls_lost;

void xp_engine_call_lost(void)
{
    atomic_fetch_add_explicit(&calls_lost, 1, memory_order_relaxed);
}

/* Set in a child forked from this process: its database must not take the
 * parent's name (xp_outfile_choose).  Written by the atfork handler only. */
static bool forked_child;

/* Warnings: once per process, and never with --quiet. */
static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
    if (xp_sess.cfg.quiet)
        return;
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n > sizeof line - 2)
        n = (int)sizeof line - 2;
    line[n++] = '\n';
    xp_write_stderr(line, (size_t)n);
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void xp_session_put_meta(const char *key, const char *value)
{
    xp_journal_put_meta(xp_sess.journal, xp_my_tid(), key, value);
}

static void put_meta_u64(const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    xp_session_put_meta(key, buf);
}

static void put_cmdline(void)
{
    char buf[8192];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return;
    while (n > 0 && buf[n - 1] == '\0')
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == '\0')
            buf[i] = ' ';
    buf[n] = '\0';
    xp_session_put_meta("cmdline", buf);
}

/* A vfork child that called exit() ran glibc's exit path in our memory:
 * its pid, set by xp_engine_unload in the child, 0 otherwise.  That pass
 * marked every library's destructors as run and closed the list of exit
 * handlers (atexit fails from then on), so our own exit would run nothing
 * of ours.  What it did not use up is the thread-local destructors of the
 * threads that are not the vforking one's: once the child is gone, the
 * main thread's next CUDA call registers xp_engine_exit_handler there
 * (__cxa_thread_atexit_impl), which the main thread's exit() runs first. */
_Atomic int xp_vfork_exited_child;

extern int __cxa_thread_atexit_impl(void (*fn)(void *), void *arg, void *dso);
extern void *__dso_handle;

static void xp_engine_unload(void);

static void xp_engine_exit_handler(void *arg)
{
    (void)arg;
    xp_engine_unload();
}

/* Whether a vfork child, which exits in our memory, has left it: exited
 * (WNOWAIT keeps it waitable for the program) or already reaped. */
static bool vfork_child_gone(pid_t child)
{
    siginfo_t info = {0};
    if (waitid(P_PID, (id_t)child, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
        return errno == ECHILD;
    return info.si_pid == child;
}

/* On the main thread only: a thread-local destructor of another thread
 * would end the session when that thread ends. */
void xp_engine_after_vfork(void)
{
    pid_t child = atomic_load(&xp_vfork_exited_child);
    if (child <= 0 || xp_my_tid() != (uint32_t)getpid() || !vfork_child_gone(child))
        return;
    atomic_store(&xp_vfork_exited_child, 0);
    atomic_fetch_and(&xp_inflight_gate, ~XP_GATE_VFORK);
    int saved = errno;
    (void)__cxa_thread_atexit_impl(xp_engine_exit_handler, NULL, &__dso_handle);
    errno = saved;
}

/* The background ingest: moves committed records into SQLite every 100 ms,
 * so that a long run's journal does not wait for exit. */
static void *ingest_main(void *arg)
{
    (void)arg;
    xp_depth = 1;   /* nothing this thread does is the program's */
    xp_callee = XP_CALLEE_OURS;
    xp_journal_never_wait();   /* its module records wait for no one */
    unsigned tick = 0;
    pthread_mutex_lock(&xp_sess.stop_lock);
    while (!xp_sess.stop) {
        /* A writer waiting for the journal's blocks (xp_journal_set_backlog):
         * the next pass at once. */
        if (xp_journal_backlogged(xp_sess.journal)) {
            pthread_mutex_unlock(&xp_sess.stop_lock);
            goto pass;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&xp_sess.stop_cond, &xp_sess.stop_lock, &ts);
        if (xp_sess.stop)
            break;
        pthread_mutex_unlock(&xp_sess.stop_lock);
    pass:
        xp_clock_tick();
        if (++tick % 10 == 0)
            xp_modules_scan(xp_sess.journal);
        char err[256];
        xp_ingest_pass(xp_sess.ingest, xp_sess.reader, false, err, sizeof err);
        pthread_mutex_lock(&xp_sess.stop_lock);
    }
    pthread_mutex_unlock(&xp_sess.stop_lock);
    return NULL;
}

/* Works out the database's path and clears what an earlier run left
 * beside it; false (with a warning) if it cannot. */
static bool choose_output(uint64_t start_wall)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    xp_outfile_req q = {.pattern = xp_sess.cfg.output, .manifest = xp_sess.cfg.manifest,
                        .host = host, .rank = xp_config_rank(), .pid = xp_sess.pid,
                        .forked = forked_child, .start_wall_ns = start_wall};
    /* Static: sessions start one at a time, and the first CUDA call may
     * come from a thread with a small stack. */
    static char note[2 * PATH_MAX], err[2 * PATH_MAX];
    if (xp_outfile_choose(&q, xp_sess.db_path, sizeof xp_sess.db_path, note, sizeof note, err,
                          sizeof err) != 0) {
        warn("xferprof: %s; running unprofiled", err);
        return false;
    }
    /* Under `xferprof run` the launcher lists every database it finds in
     * the manifest; alone, this line is how the user learns the name. */
    if (note[0] && xp_sess.cfg.manifest[0] == '\0')
        warn("xferprof: %s", note);
    if (xp_outfile_clear_companions(xp_sess.db_path, err, sizeof err) != 0) {
        warn("xferprof: %s; running unprofiled", err);
        return false;
    }
    return true;
}

/* Creates a thread of ours with every signal blocked: the program's
 * signals are the program's threads' to take, and a SIGPIPE or SIGXFSZ our
 * writes raise stays pending on it instead of killing the program. */
static bool spawn_quiet(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    bool made = pthread_create(t, attr, fn, arg) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return made;
}

/* Starts the session: database, journal, process metadata, ingest thread.
 * Returns the new state. */
static int start(void)
{
    /* A set-user-ID or set-group-ID program (or one with file capabilities)
     * runs with another user's rights: the XFERPROF_* settings of the user
     * who started it must not choose files for it to replace or append to.
     * Nothing is read, nothing written, nothing said. */
    if (getauxval(AT_SECURE))
        return ST_DISABLED;
    static char err[2 * PATH_MAX];   /* static: see choose_output */
    xp_sess.pid = getpid();
    xp_sess.stop = false;
    xp_sess.thread_started = false;
    if (xp_config_load(&xp_sess.cfg, err, sizeof err) != 0)
        warn("xferprof: %s", err);
    uint64_t start_wall = wall_ns();
    xp_clock_start(!xp_sess.cfg.clock_monotonic);
    uint64_t start_mono = xp_now_ns();
    if (!choose_output(start_wall))
        return ST_DISABLED;
    /* The journal first: it says to other processes that the name is
     * taken; then the database, which replaces an earlier one only once
     * it is complete. */
    char jpath[PATH_MAX + 8];
    snprintf(jpath, sizeof jpath, "%s%s", xp_sess.db_path, XP_JOURNAL_SUFFIX);
    xp_journal_header h = {.pid = xp_sess.pid, .ppid = getppid(), .start_wall_ns = start_wall,
                           .start_mono_ns = start_mono};
    int rc = xp_journal_create(jpath, &h, &xp_sess.journal);
    if (rc != 0) {
        warn("xferprof: cannot write %s: %s; running unprofiled", jpath, strerror(rc));
        return ST_DISABLED;
    }
    if (xp_outfile_create_db(xp_sess.db_path, err, sizeof err) != 0 ||
        xp_ingest_open(xp_sess.db_path, &xp_sess.ingest, err, sizeof err) != 0) {
        warn("xferprof: %s; running unprofiled", err);
        xp_journal_close(xp_sess.journal);
        unlink(jpath);
        return ST_DISABLED;
    }
    /* No room for one: then there is none to give back at exit either. */
    xp_outfile_make_reserve(xp_sess.db_path);
    if (xp_journal_open(jpath, &xp_sess.reader, err, sizeof err) != 0) {
        warn("xferprof: cannot read back %s: %s; running unprofiled", jpath, err);
        xp_journal_close(xp_sess.journal);
        xp_ingest_close(xp_sess.ingest);
        xp_outfile_remove(xp_sess.db_path);
        return ST_DISABLED;
    }
    put_meta_u64("pid", (uint64_t)xp_sess.pid);
    put_meta_u64("ppid", (uint64_t)getppid());
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    xp_session_put_meta("hostname", host);
    put_cmdline();
    put_meta_u64("start_wall_ns", start_wall);
    put_meta_u64("start_mono_ns", start_mono);
    put_meta_u64("stack_depth", (uint64_t)xp_sess.cfg.stack_depth);
    xp_session_put_meta("clock", xp_clock_name());
    xp_session_put_meta("fingerprint", xp_config_fingerprint_name(xp_sess.cfg.fingerprint));
    put_meta_u64("fingerprint_threshold", XP_FP_THRESHOLD);
    const char *rank = xp_config_rank();
    if (rank)
        xp_session_put_meta("rank", rank);
    xp_window_start(&xp_sess.cfg);
    xp_devices_start_meta(xp_sess.journal, xp_my_tid());
    xp_stack_init();
    xp_modules_scan(xp_sess.journal);
    xp_clock_started();
    xp_inflight_start();

    xp_sess.thread_started = spawn_quiet(&xp_sess.thread, NULL, ingest_main, NULL);
    xp_journal_start_populator(xp_sess.journal, spawn_quiet);
    /* With an ingest running, a burst of records faster than it waits for
     * it rather than growing the journal without bound (issue 15). */
    if (xp_sess.thread_started)
        xp_journal_set_backlog(xp_sess.journal, xp_sess.cfg.journal_max);
    if (xp_sess.cfg.manifest[0] && xp_outfile_manifest_add(xp_sess.cfg.manifest, xp_sess.pid,
                                                           xp_sess.db_path, err, sizeof err) != 0)
        warn("xferprof: %s", err);
    return ST_ON;
}

typedef struct own_thread_job {
    int (*fn)(void);
    int result;
} own_thread_job;

static void *own_thread_main(void *arg)
{
    own_thread_job *job = arg;
    xp_depth = 1;   /* nothing this thread does is the program's */
    xp_callee = XP_CALLEE_OURS;
    job->result = job->fn();
    return NULL;
}

/* Runs fn (start-up, or the last ingest at exit: SQLite, files, paths) on a
 * thread of its own, with a stack of a known size and every signal blocked:
 * it takes about 40 KiB of stack, and the program's first CUDA call, or its
 * exit, may come from a thread with a 16 KiB stack or a small alternate
 * signal stack; and a write past RLIMIT_FSIZE or into a closed pipe raises
 * SIGXFSZ or SIGPIPE in the thread that writes, which would kill the
 * program there (on this thread the signal stays pending and dies with it).
 * Only if no thread can be made does fn run on the caller's thread. */
static int run_on_own_thread(int (*fn)(void))
{
    own_thread_job job = {.fn = fn, .result = ST_DISABLED};
    pthread_attr_t attr;
    pthread_t t;
    bool made = false;
    if (pthread_attr_init(&attr) == 0) {
        made = pthread_attr_setstacksize(&attr, 512 * 1024) == 0 &&
               spawn_quiet(&t, &attr, own_thread_main, &job);
        pthread_attr_destroy(&attr);
    }
    if (made)
        pthread_join(t, NULL);
    else
        job.result = fn();
    return job.result;
}

bool xp_engine_ready(void)
{
    int s = atomic_load_explicit(&xp_engine_state, memory_order_acquire);
    if (s == ST_ON)
        return true;
    if (s == ST_OFF) {
        int expected = ST_OFF;
        if (atomic_compare_exchange_strong(&xp_engine_state, &expected, ST_STARTING)) {
            int saved = errno;
            xp_depth++;
            int next = run_on_own_thread(start);
            xp_depth--;
            errno = saved;
            atomic_store_explicit(&xp_engine_state, next, memory_order_release);
            return next == ST_ON;
        }
    }
    /* Another thread is starting the session: wait for it, so that no call
     * around start-up goes unrecorded. */
    while ((s = atomic_load_explicit(&xp_engine_state, memory_order_acquire)) == ST_STARTING)
        sched_yield();
    return s == ST_ON;
}

xp_inflight_slot *xp_engine_enter_slow(void)
{
    /* The program's next CUDA call after a vfork child's exit(). */
    if (atomic_load_explicit(&xp_vfork_exited_child, memory_order_relaxed) != 0)
        xp_engine_after_vfork();
    if (xp_engine_ready())
        return xp_inflight_enter();
    /* A call the program makes while we stop is a call we do not record. */
    if (atomic_load_explicit(&xp_engine_state, memory_order_relaxed) == ST_STOPPING)
        xp_inflight_refused();
    return NULL;
}

xp_session xp_engine_session(void)
{
    switch (atomic_load_explicit(&xp_engine_state, memory_order_acquire)) {
    case ST_ON: return XP_SESSION_ON;
    case ST_STARTING: return XP_SESSION_STARTING;
    case ST_STOPPING: return XP_SESSION_STOPPING;
    default: return XP_SESSION_NONE;
    }
}

void xp_engine_signal_call_lost(void)
{
    atomic_fetch_add_explicit(&signal_calls_lost, 1, memory_order_relaxed);
}

xp_journal *xp_engine_journal(void)
{
    return xp_engine_ready() ? xp_sess.journal : NULL;
}

uint32_t xp_engine_tid(void)
{
    return xp_my_tid();
}

void xp_engine_meta(const char *key, const char *value)
{
    if (xp_engine_ready())
        xp_session_put_meta(key, value);
}

static void on_fork_child(void)
{
    /* The child gets its own journal and database on its first call; the
     * parent's are left untouched (and our handles to them are dropped, not
     * closed: closing would act on the parent's files). */
    int s = atomic_load(&xp_engine_state);
    if (s == ST_ON || s == ST_STOPPING) {
        xp_journal_abandon_after_fork(xp_sess.journal);
        xp_sess.journal = NULL;
        xp_sess.ingest = NULL;
        xp_sess.reader = NULL;
        xp_stack_reset();
        xp_modules_reset();
    }
    xp_nvtx_after_fork();
    xp_fp_confirm_reset();
    xp_record_after_fork();
    xp_blocks_after_fork();
    forked_child = true;
    xp_inflight_after_fork();
    xp_cached_tid = 0;
    xp_runtime_note_after_fork();
    xp_graph_after_fork();
    atomic_store(&xp_engine_state, ST_OFF);
}

__attribute__((constructor)) static void xp_engine_load(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
    xp_inflight_vfork_hook = xp_engine_after_vfork;
}

/* How long exit waits for calls in flight (a thread inside a copy or a
 * synchronization) before cutting them off and counting them as lost. */
#define XP_EXIT_WAIT_NS (500ull * 1000 * 1000)

/* Why SQLite found no room for the database at path: the process's file
 * size limit when one of its files has reached it (SQLite says "full" for
 * EFBIG too), else the disk. */
static const char *full_cause(const char *path)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        static const char *const files[] = {"", "-wal"};
        char buf[PATH_MAX + 8];
        for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
            struct stat st;
            snprintf(buf, sizeof buf, "%s%s", path, files[i]);
            /* Within a page or two: SQLite writes whole pages. */
            if (stat(buf, &st) == 0 && (rlim_t)st.st_size + 2 * 65536 >= rl.rlim_cur)
                return "the process's file size limit (RLIMIT_FSIZE) was reached";
        }
    }
    return "the disk was full";
}

/* Calls cut off at exit (xp_inflight_cut_off), for finish(). */
static uint64_t exit_in_flight;

/* The end of the session, on a thread of its own (run_on_own_thread): the
 * last ingest pass, what was lost, the database closed, the journal gone. */
static int finish(void)
{
    uint64_t in_flight = exit_in_flight;
    xp_modules_scan(xp_sess.journal);
    put_meta_u64("end_wall_ns", wall_ns());
    put_meta_u64("stacks_skipped_small_stack", xp_stack_skipped());
    put_meta_u64("journal_backlog_overruns", xp_journal_backlog_overruns(xp_sess.journal));
    uint64_t self_populated;
    put_meta_u64("journal_chunks", xp_journal_chunks(xp_sess.journal, &self_populated));
    put_meta_u64("journal_chunks_populated_by_writers", self_populated);
    xp_window_finish();
    char err[512];
    uint64_t lost = atomic_load_explicit(&calls_lost, memory_order_relaxed);
    uint64_t from_signals = atomic_load_explicit(&signal_calls_lost, memory_order_relaxed);
    uint64_t unslotted = xp_inflight_unslotted();
    uint64_t other_lost = xp_journal_lost(xp_sess.journal) - lost;
    int rc = xp_ingest_pass(xp_sess.ingest, xp_sess.reader, true, err, sizeof err);
    uint64_t pending = 0;
    /* The reserve made at start is the room the end needs on a full disk:
     * to say what was lost, and for the closing checkpoint, which grows the
     * database file by the WAL's new pages before the WAL can go. */
    xp_outfile_drop_reserve(xp_sess.db_path);
    if (rc != 0 && xp_ingest_disk_full(xp_sess.ingest)) {
        /* The disk is full: what the journal still holds will not fit, and
         * the journal goes (its records are counted as lost; `recover` would
         * store them again on top of that count). */
        if (xp_ingest_count_pending(xp_sess.ingest, xp_sess.reader, &pending, err,
                                    sizeof err) == 0) {
            char why[200];
            snprintf(why, sizeof why, "%" PRIu64 " call(s) recorded but not stored: %s", pending,
                     full_cause(xp_sess.db_path));
            rc = xp_ingest_add_lost(xp_sess.ingest, pending, why);
            /* Counted: the journal's read chunks are of no more use, and
             * their blocks are the room the closing checkpoint needs to put
             * the WAL back into the database file (the reserve alone is too
             * small for a WAL near its auto-checkpoint size). */
            if (rc == 0)
                xp_journal_release_done(xp_sess.reader);
        }
    }
    if (rc == 0) {
        if (lost) {
            char why[256];
            if (other_lost)
                snprintf(why, sizeof why, "%s (and %" PRIu64 " stack, module or meta record(s))",
                         xp_journal_lost_reason(xp_sess.journal), other_lost);
            else
                snprintf(why, sizeof why, "%s", xp_journal_lost_reason(xp_sess.journal));
            xp_ingest_add_lost(xp_sess.ingest, lost, why);
        }
        if (from_signals) {
            char why[160];
            snprintf(why, sizeof why,
                     "%" PRIu64 " call(s) from signal handlers not recorded (they interrupted "
                     "the profiler's own work on their thread)", from_signals);
            xp_ingest_add_lost(xp_sess.ingest, from_signals, why);
        }
        char graph_why[200];
        uint64_t graph_lost = xp_graph_lost(graph_why, sizeof graph_why);
        if (graph_lost)
            xp_ingest_add_lost(xp_sess.ingest, graph_lost, graph_why);
        if (in_flight) {
            char why[96];
            snprintf(why, sizeof why, "%" PRIu64 " call(s) in flight at exit", in_flight);
            xp_ingest_add_lost(xp_sess.ingest, in_flight, why);
        }
        if (unslotted) {
            char why[128];
            snprintf(why, sizeof why,
                     "%" PRIu64 " call(s) not recorded: no memory for their thread's state",
                     unslotted);
            xp_ingest_add_lost(xp_sess.ingest, unslotted, why);
        }
        xp_ingest_close(xp_sess.ingest);
        xp_journal_reader_close(xp_sess.reader);
        /* The writer is left open and mapped: a thread cut off above, or a
         * call made after this, may still look at it. */
        char jpath[PATH_MAX + 8];
        snprintf(jpath, sizeof jpath, "%s%s", xp_sess.db_path, XP_JOURNAL_SUFFIX);
        unlink(jpath);
        /* Said once, by the launcher from meta when there is one. */
        uint64_t missing = lost + from_signals + in_flight + pending + graph_lost + unslotted;
        if (missing && xp_sess.cfg.manifest[0] == '\0')
            warn("xferprof: %s: %" PRIu64 " call(s) not recorded (see meta records_lost_reason)",
                 xp_sess.db_path, missing);
    } else {
        /* The journal stays: `xferprof recover` can finish the job. */
        warn("xferprof: could not finish %s: %s (run: xferprof recover %s)", xp_sess.db_path, err,
             xp_sess.db_path);
    }
    return 0;
}

/* At exit, other threads may still be inside hooked calls, and may return
 * while this runs or after it: nothing they can reach is freed or unmapped
 * (the journal stays mapped until the process is gone), and their records
 * are either in the database or counted as lost, in flight at exit. */
/* A process that never recorded (no CUDA call) under `xferprof run`, in a
 * job of ranks: its rank goes into the manifest, so that the launcher can
 * name a rank none of whose processes recorded anything. */
static void note_silent_rank(void)
{
    if (getauxval(AT_SECURE))
        return;
    int saved = errno;
    const char *manifest = secure_getenv("XFERPROF_MANIFEST");
    const char *rank = xp_config_rank();
    if (manifest && manifest[0] && rank && rank[0])
        xp_outfile_manifest_silent(manifest, getpid(), rank);
    errno = saved;
}

__attribute__((destructor)) static void xp_engine_unload(void)
{
    if (atomic_load(&xp_engine_state) == ST_OFF) {
        note_silent_rank();
        return;
    }
    /* First: after vfork() a child that calls exit() runs this in its
     * parent's memory, where the session is the parent's; all it may do is
     * tell the parent (xp_engine_after_vfork). */
    if (xp_sess.pid != getpid()) {
        if (atomic_load(&xp_engine_state) == ST_ON) {
            atomic_store(&xp_vfork_exited_child, getpid());
            atomic_fetch_or(&xp_inflight_gate, XP_GATE_VFORK);
        }
        return;
    }
    int expected = ST_ON;
    if (!atomic_compare_exchange_strong(&xp_engine_state, &expected, ST_STOPPING))
        return;
    int saved = errno;
    xp_depth++;
    xp_inflight_close();
    xp_journal_stop_populator(xp_sess.journal);
    /* The ingest thread is stopping: no one is left to give blocks back,
     * so no one waits for it; growth keeps the bound's small steps. */
    xp_journal_stop_waits(xp_sess.journal);
    if (xp_sess.thread_started) {
        pthread_mutex_lock(&xp_sess.stop_lock);
        xp_sess.stop = true;
        pthread_cond_signal(&xp_sess.stop_cond);
        pthread_mutex_unlock(&xp_sess.stop_lock);
        pthread_join(xp_sess.thread, NULL);
    }
    exit_in_flight = xp_inflight_cut_off(XP_EXIT_WAIT_NS);
    run_on_own_thread(finish);
    xp_depth--;
    errno = saved;
}

