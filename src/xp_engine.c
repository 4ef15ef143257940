/* xp_engine.c: the preload's lifecycle (lazy start, background ingest, fork,
 * exit) and the writing of call records. */
#include "xp_engine.h"
#include "xp_fingerprint.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
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
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include "xp_config.h"
#include "xp_devices.h"
#include "xp_ingest.h"
#include "xp_journal.h"
#include "xp_modules.h"
#include "xp_nvtx.h"
#include "xp_outfile.h"
#include "xp_registry.h"
#include "xp_stack.h"
#include "xp_thread.h"

/* Initial-exec: the preload is loaded at start-up, so its thread-locals can
 * live in the static TLS block and be reached without __tls_get_addr. */
__thread int xp_depth __attribute__((tls_model("initial-exec")));
__thread uintptr_t xp_callee __attribute__((tls_model("initial-exec")));
__thread bool xp_callee_clean __attribute__((tls_model("initial-exec")));
__thread int xp_current_device __attribute__((tls_model("initial-exec")));

enum { ST_OFF = 0, ST_STARTING, ST_ON, ST_DISABLED, ST_STOPPING };

/* The process's profiling session.  Written by whoever starts it (under the
 * ST_STARTING state), read by the hooks once state is ST_ON; torn down at
 * exit by the destructor, and forgotten (not freed) in a forked child. */
static _Atomic int state = ST_OFF;
static struct {
    pid_t pid;
    xp_config cfg;
    char db_path[PATH_MAX];
    xp_journal *journal;
    xp_ingest *ingest;
    xp_journal_reader *reader;
    pthread_t thread;
    bool thread_started;
    pthread_mutex_t stop_lock;
    pthread_cond_t stop_cond;
    bool stop;
} S = {.stop_lock = PTHREAD_MUTEX_INITIALIZER, .stop_cond = PTHREAD_COND_INITIALIZER};
static _Atomic uint64_t next_alloc_id = 1;
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

/* Successful kernel launches per device since the session started, one
 * cache line each (threads launching on different devices do not share
 * one).  Written by the launch hooks, read by every copy record. */
#define XP_MAX_DEVICES 64
static struct {
    _Alignas(64) _Atomic uint64_t n;
} launches[XP_MAX_DEVICES];
static __thread uint32_t cached_tid __attribute__((tls_model("initial-exec")));

/* Writes to stderr without raising SIGPIPE in the program: when stderr is a
 * pipe nobody reads any more, the signal would kill it (exit 141) where it
 * runs fine without us.  SIGPIPE is blocked around the write, and the one
 * the write raised taken back before the mask is restored, unless one was
 * pending already (that one is the program's). */
void xp_write_stderr(const char *buf, size_t n)
{
    sigset_t pipe_only, old, pending;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_only, &old);
    bool was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE);
    ssize_t w;
    do
        w = write(STDERR_FILENO, buf, n);
    while (w < 0 && errno == EINTR);
    if (w < 0 && errno == EPIPE && !was_pending) {
        const struct timespec now = {0, 0};
        sigtimedwait(&pipe_only, NULL, &now);
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Warnings: once per process, and never with --quiet. */
static void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void warn(const char *fmt, ...)
{
    if (S.cfg.quiet)
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

static uint32_t my_tid(void)
{
    if (cached_tid == 0)
        cached_tid = (uint32_t)syscall(SYS_gettid);
    return cached_tid;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void put_meta(const char *key, const char *value)
{
    xp_journal_put_meta(S.journal, my_tid(), key, value);
}

static void put_meta_u64(const char *key, uint64_t v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%" PRIu64, v);
    put_meta(key, buf);
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
    put_meta("cmdline", buf);
}

/* The background ingest: moves committed records into SQLite every 100 ms,
 * so that a long run's journal does not wait for exit. */
/* A vfork child that called exit() ran glibc's exit path in our memory:
 * its pid, set by xp_engine_unload in the child, 0 otherwise.  That pass
 * marked every library's destructors as run and closed the list of exit
 * handlers (atexit fails from then on), so our own exit would run nothing
 * of ours.  What it did not use up is the thread-local destructors of the
 * threads that are not the vforking one's: once the child is gone, the
 * main thread's next CUDA call registers xp_engine_exit_handler there
 * (__cxa_thread_atexit_impl), which the main thread's exit() runs first. */
static _Atomic pid_t vfork_exited_child;

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
static void rearm_exit_after_vfork(void)
{
    pid_t child = atomic_load(&vfork_exited_child);
    if (child <= 0 || my_tid() != (uint32_t)getpid() || !vfork_child_gone(child))
        return;
    atomic_store(&vfork_exited_child, 0);
    int saved = errno;
    (void)__cxa_thread_atexit_impl(xp_engine_exit_handler, NULL, &__dso_handle);
    errno = saved;
}

static void *ingest_main(void *arg)
{
    (void)arg;
    xp_depth = 1;   /* nothing this thread does is the program's */
    xp_callee = XP_CALLEE_OURS;
    unsigned tick = 0;
    pthread_mutex_lock(&S.stop_lock);
    while (!S.stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 100 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&S.stop_cond, &S.stop_lock, &ts);
        if (S.stop)
            break;
        pthread_mutex_unlock(&S.stop_lock);
        if (++tick % 10 == 0)
            xp_modules_scan(S.journal);
        char err[256];
        xp_ingest_pass(S.ingest, S.reader, false, err, sizeof err);
        pthread_mutex_lock(&S.stop_lock);
    }
    pthread_mutex_unlock(&S.stop_lock);
    return NULL;
}

/* Works out the database's path and clears what an earlier run left
 * beside it; false (with a warning) if it cannot. */
static bool choose_output(uint64_t start_wall)
{
    char host[256] = "localhost";
    gethostname(host, sizeof host - 1);
    host[sizeof host - 1] = '\0';
    xp_outfile_req q = {.pattern = S.cfg.output, .manifest = S.cfg.manifest, .host = host,
                        .rank = xp_config_rank(), .pid = S.pid, .forked = forked_child,
                        .start_wall_ns = start_wall};
    /* Static: sessions start one at a time, and the first CUDA call may
     * come from a thread with a small stack. */
    static char note[2 * PATH_MAX], err[2 * PATH_MAX];
    if (xp_outfile_choose(&q, S.db_path, sizeof S.db_path, note, sizeof note, err,
                          sizeof err) != 0) {
        warn("xferprof: %s; running unprofiled", err);
        return false;
    }
    /* Under `xferprof run` the launcher lists every database it finds in
     * the manifest; alone, this line is how the user learns the name. */
    if (note[0] && S.cfg.manifest[0] == '\0')
        warn("xferprof: %s", note);
    if (xp_outfile_clear_companions(S.db_path, err, sizeof err) != 0) {
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
    S.pid = getpid();
    S.stop = false;
    S.thread_started = false;
    if (xp_config_load(&S.cfg, err, sizeof err) != 0)
        warn("xferprof: %s", err);
    uint64_t start_wall = wall_ns();
    uint64_t start_mono = xp_now_ns();
    if (!choose_output(start_wall))
        return ST_DISABLED;
    /* The journal first: it says to other processes that the name is
     * taken; then the database, which replaces an earlier one only once
     * it is complete. */
    char jpath[PATH_MAX + 8];
    snprintf(jpath, sizeof jpath, "%s%s", S.db_path, XP_JOURNAL_SUFFIX);
    xp_journal_header h = {.pid = S.pid, .ppid = getppid(), .start_wall_ns = start_wall,
                           .start_mono_ns = start_mono};
    int rc = xp_journal_create(jpath, &h, &S.journal);
    if (rc != 0) {
        warn("xferprof: cannot write %s: %s; running unprofiled", jpath, strerror(rc));
        return ST_DISABLED;
    }
    if (xp_outfile_create_db(S.db_path, err, sizeof err) != 0 ||
        xp_ingest_open(S.db_path, &S.ingest, err, sizeof err) != 0) {
        warn("xferprof: %s; running unprofiled", err);
        xp_journal_close(S.journal);
        unlink(jpath);
        return ST_DISABLED;
    }
    /* No room for one: then there is none to give back at exit either. */
    xp_outfile_make_reserve(S.db_path);
    if (xp_journal_open(jpath, &S.reader, err, sizeof err) != 0) {
        warn("xferprof: cannot read back %s: %s; running unprofiled", jpath, err);
        xp_journal_close(S.journal);
        xp_ingest_close(S.ingest);
        xp_outfile_remove(S.db_path);
        return ST_DISABLED;
    }
    put_meta_u64("pid", (uint64_t)S.pid);
    put_meta_u64("ppid", (uint64_t)getppid());
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    put_meta("hostname", host);
    put_cmdline();
    put_meta_u64("start_wall_ns", start_wall);
    put_meta_u64("start_mono_ns", start_mono);
    put_meta_u64("stack_depth", (uint64_t)S.cfg.stack_depth);
    put_meta("fingerprint", xp_config_fingerprint_name(S.cfg.fingerprint));
    put_meta_u64("fingerprint_threshold", XP_FP_THRESHOLD);
    const char *rank = xp_config_rank();
    if (rank)
        put_meta("rank", rank);
    xp_devices_start_meta(S.journal, my_tid());
    xp_stack_init();
    xp_modules_scan(S.journal);

    S.thread_started = spawn_quiet(&S.thread, NULL, ingest_main, NULL);
    if (S.cfg.manifest[0] && xp_outfile_manifest_add(S.cfg.manifest, S.pid, S.db_path, err,
                                                     sizeof err) != 0)
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
    int s = atomic_load_explicit(&state, memory_order_acquire);
    if (s == ST_ON)
        return true;
    if (s == ST_OFF) {
        int expected = ST_OFF;
        if (atomic_compare_exchange_strong(&state, &expected, ST_STARTING)) {
            int saved = errno;
            xp_depth++;
            int next = run_on_own_thread(start);
            xp_depth--;
            errno = saved;
            atomic_store_explicit(&state, next, memory_order_release);
            return next == ST_ON;
        }
    }
    /* Another thread is starting the session: wait for it, so that no call
     * around start-up goes unrecorded. */
    while ((s = atomic_load_explicit(&state, memory_order_acquire)) == ST_STARTING)
        sched_yield();
    return s == ST_ON;
}

bool xp_engine_enter(void)
{
    /* The program's next CUDA call after a vfork child's exit(): one
     * relaxed load. */
    if (__builtin_expect(atomic_load_explicit(&vfork_exited_child, memory_order_relaxed) != 0, 0))
        rearm_exit_after_vfork();
    if (__builtin_expect(xp_engine_ready(), 1))
        return xp_inflight_enter();
    /* A call the program makes while we stop is a call we do not record. */
    if (atomic_load_explicit(&state, memory_order_relaxed) == ST_STOPPING)
        xp_inflight_refused();
    return false;
}

xp_session xp_engine_session(void)
{
    switch (atomic_load_explicit(&state, memory_order_acquire)) {
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
    return xp_engine_ready() ? S.journal : NULL;
}

uint32_t xp_engine_tid(void)
{
    return my_tid();
}

void xp_engine_meta(const char *key, const char *value)
{
    if (xp_engine_ready())
        put_meta(key, value);
}

/* Whether the first recorded driver call has been looked at
 * (xp_note_driver_call); per session, so reset in a forked child. */
static _Atomic bool driver_call_noted;

static inline void forget_last_copy(void);

static void on_fork_child(void)
{
    /* The child gets its own journal and database on its first call; the
     * parent's are left untouched (and our handles to them are dropped, not
     * closed: closing would act on the parent's files). */
    int s = atomic_load(&state);
    if (s == ST_ON || s == ST_STOPPING) {
        xp_journal_abandon_after_fork(S.journal);
        S.journal = NULL;
        S.ingest = NULL;
        S.reader = NULL;
        xp_stack_reset();
        xp_modules_reset();
    }
    xp_nvtx_after_fork();
    xp_fp_confirm_reset();
    forget_last_copy();
    forked_child = true;
    xp_inflight_after_fork();
    cached_tid = 0;
    atomic_store(&driver_call_noted, false);
    for (size_t i = 0; i < XP_MAX_DEVICES; i++)
        atomic_store_explicit(&launches[i].n, 0, memory_order_relaxed);
    atomic_store(&state, ST_OFF);
}

__attribute__((constructor)) static void xp_engine_load(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

/* How long exit waits for calls in flight (a thread inside a copy or a
 * synchronization) before cutting them off and counting them as lost. */
#define XP_EXIT_WAIT_NS (500ull * 1000 * 1000)

/* At exit, other threads may still be inside hooked calls, and may return
 * while this runs or after it: nothing they can reach is freed or unmapped
 * (the journal stays mapped until the process is gone), and their records
 * are either in the database or counted as lost, in flight at exit. */
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
    xp_modules_scan(S.journal);
    put_meta_u64("end_wall_ns", wall_ns());
    put_meta_u64("stacks_skipped_small_stack", xp_stack_skipped());
    char err[512];
    uint64_t lost = atomic_load_explicit(&calls_lost, memory_order_relaxed);
    uint64_t from_signals = atomic_load_explicit(&signal_calls_lost, memory_order_relaxed);
    uint64_t other_lost = xp_journal_lost(S.journal) - lost;
    int rc = xp_ingest_pass(S.ingest, S.reader, true, err, sizeof err);
    uint64_t pending = 0;
    if (rc != 0 && xp_ingest_disk_full(S.ingest)) {
        /* The disk is full: what the journal still holds will not fit.  The
         * reserve made at start gives room to say how much that is, and the
         * journal goes (its records are counted as lost; `recover` would
         * store them again on top of that count). */
        xp_outfile_drop_reserve(S.db_path);
        if (xp_ingest_count_pending(S.ingest, S.reader, &pending, err, sizeof err) == 0) {
            char why[200];
            snprintf(why, sizeof why, "%" PRIu64 " call(s) recorded but not stored: %s", pending,
                     full_cause(S.db_path));
            rc = xp_ingest_add_lost(S.ingest, pending, why);
        }
    }
    if (rc == 0) {
        if (lost) {
            char why[256];
            if (other_lost)
                snprintf(why, sizeof why, "%s (and %" PRIu64 " stack, module or meta record(s))",
                         xp_journal_lost_reason(S.journal), other_lost);
            else
                snprintf(why, sizeof why, "%s", xp_journal_lost_reason(S.journal));
            xp_ingest_add_lost(S.ingest, lost, why);
        }
        if (from_signals) {
            char why[160];
            snprintf(why, sizeof why,
                     "%" PRIu64 " call(s) from signal handlers not recorded (they interrupted "
                     "the profiler's own work on their thread)", from_signals);
            xp_ingest_add_lost(S.ingest, from_signals, why);
        }
        if (in_flight) {
            char why[96];
            snprintf(why, sizeof why, "%" PRIu64 " call(s) in flight at exit", in_flight);
            xp_ingest_add_lost(S.ingest, in_flight, why);
        }
        xp_ingest_close(S.ingest);
        xp_journal_reader_close(S.reader);
        /* The writer is left open and mapped: a thread cut off above, or a
         * call made after this, may still look at it. */
        char jpath[PATH_MAX + 8];
        snprintf(jpath, sizeof jpath, "%s%s", S.db_path, XP_JOURNAL_SUFFIX);
        unlink(jpath);
        /* Said once, by the launcher from meta when there is one. */
        uint64_t missing = lost + from_signals + in_flight + pending;
        if (missing && S.cfg.manifest[0] == '\0')
            warn("xferprof: %s: %" PRIu64 " call(s) not recorded (see meta records_lost_reason)",
                 S.db_path, missing);
    } else {
        /* The journal stays: `xferprof recover` can finish the job. */
        warn("xferprof: could not finish %s: %s (run: xferprof recover %s)", S.db_path, err,
             S.db_path);
    }
    xp_outfile_drop_reserve(S.db_path);
    return 0;
}

__attribute__((destructor)) static void xp_engine_unload(void)
{
    /* First: after vfork() a child that calls exit() runs this in its
     * parent's memory, where the session is the parent's; all it may do is
     * tell the parent (rearm_exit_after_vfork). */
    if (S.pid != getpid()) {
        if (atomic_load(&state) == ST_ON)
            atomic_store(&vfork_exited_child, getpid());
        return;
    }
    int expected = ST_ON;
    if (!atomic_compare_exchange_strong(&state, &expected, ST_STOPPING))
        return;
    int saved = errno;
    xp_depth++;
    xp_inflight_close();
    if (S.thread_started) {
        pthread_mutex_lock(&S.stop_lock);
        S.stop = true;
        pthread_cond_signal(&S.stop_cond);
        pthread_mutex_unlock(&S.stop_lock);
        pthread_join(S.thread, NULL);
    }
    exit_in_flight = xp_inflight_cut_off(XP_EXIT_WAIT_NS);
    run_on_own_thread(finish);
    xp_depth--;
    errno = saved;
}

/* ---- classification ----------------------------------------------------- */

typedef CUresult (*cu_pointer_get_attribute_fn)(void *, CUpointer_attribute, CUdeviceptr);
typedef CUresult (*cu_mem_get_info_fn)(size_t *, size_t *);

/* The driver's own entry points, looked up in the libcuda the runtime has
 * loaded (never loading one ourselves). */
void *xp_driver_symbol(const char *name)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    void *fn = dlsym(h, name);
    dlclose(h);
    return fn;
}

static _Atomic(cu_pointer_get_attribute_fn) cu_attr;

static void ask_driver(uint64_t addr, xp_where *out)
{
    cu_pointer_get_attribute_fn fn = atomic_load_explicit(&cu_attr, memory_order_relaxed);
    if (fn == NULL) {
        fn = (cu_pointer_get_attribute_fn)xp_driver_symbol("cuPointerGetAttribute");
        if (fn == NULL)
            return;
        atomic_store_explicit(&cu_attr, fn, memory_order_relaxed);
    }
    unsigned int type = 0, managed = 0;
    int ordinal = -1;
    xp_guard g = xp_guard_enter((uintptr_t)fn);
    CUresult rc = fn(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, (CUdeviceptr)addr);
    if (rc == CUDA_SUCCESS) {
        fn(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, (CUdeviceptr)addr);
        fn(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, (CUdeviceptr)addr);
    }
    xp_guard_leave(g);
    if (rc != CUDA_SUCCESS)
        return;
    if (managed)
        out->kind = XP_ALLOC_MANAGED;
    else if (type == CU_MEMORYTYPE_DEVICE)
        out->kind = XP_ALLOC_DEVICE;
    else if (type == CU_MEMORYTYPE_HOST)
        out->kind = XP_ALLOC_PINNED;
    out->device = out->kind == XP_ALLOC_PINNED ? -1 : ordinal;
}

void xp_classify(uint64_t addr, xp_where *out)
{
    out->kind = 0;
    out->device = -1;
    /* Read before the lookup: a change made during it makes the memo stale. */
    uint64_t gen = xp_registry_generation();
    xp_thread *t = xp_thread_get();
    for (unsigned k = 0; t && k < XP_RANGE_MEMO; k++) {
        const xp_range_memo *m = &t->ranges[k];
        if (m->valid && m->generation == gen && addr - m->base < m->size) {
            *out = m->where;
            return;
        }
    }
    xp_range r;
    if (xp_registry_lookup(addr, &r)) {
        /* A mapping is device memory at an address: what a copy sees. */
        out->kind = r.kind == XP_ALLOC_MAPPED ? XP_ALLOC_DEVICE : r.kind;
        out->device = r.kind == XP_ALLOC_PINNED || r.kind == XP_ALLOC_REGISTERED ? -1 : r.device;
        if (t) {
            t->ranges[t->next_range] = (xp_range_memo){r.base, r.size, gen, *out, true};
            t->next_range = (t->next_range + 1) % XP_RANGE_MEMO;
        }
        return;
    }
    /* The thread's memory of what the driver said about a page (xp_thread.h);
     * without one, the driver is asked every time. */
    uint64_t page = addr >> 12;
    xp_where_memo *m = t ? &t->where[page % XP_WHERE_MEMO] : NULL;
    if (m && m->valid && m->page == page && m->generation == gen) {
        *out = m->where;
        return;
    }
    ask_driver(addr, out);
    if (m) {
        m->page = page;
        m->generation = gen;
        m->where = *out;
        m->valid = true;
    }
}

int xp_driver_mem_info(uint64_t *free_bytes, uint64_t *total_bytes)
{
    cu_mem_get_info_fn fn = (cu_mem_get_info_fn)xp_driver_symbol("cuMemGetInfo_v2");
    if (fn == NULL)
        return -1;
    size_t f = 0, t = 0;
    xp_guard g = xp_guard_enter((uintptr_t)fn);
    CUresult rc = fn(&f, &t);
    xp_guard_leave(g);
    if (rc != CUDA_SUCCESS)
        return -1;
    *free_bytes = f;
    *total_bytes = t;
    return 0;
}

/* ---- records ------------------------------------------------------------ */

static void *reserve_call(uint16_t type, xp_api api, uint32_t size, const xp_scope *s, int status,
                          int device)
{
    xp_call *c = xp_journal_reserve(S.journal, size);
    if (c == NULL) {
        xp_engine_call_lost();
        return NULL;
    }
    c->h.type = type;
    c->h.api = (uint16_t)api;
    c->h.size = size;
    c->h.tid = my_tid();
    c->start_ns = s->start_ns;
    c->end_ns = xp_now_ns();
    c->stack_id = xp_stack_capture(S.journal, S.cfg.stack_depth, &s->site);
    c->status = status;
    c->device = device;
    return c;
}

static bool host_kind(uint8_t k)
{
    return k == 0 || k == XP_ALLOC_PINNED || k == XP_ALLOC_REGISTERED;
}

static uint8_t host_mem_of(const xp_where *w)
{
    if (w->kind == XP_ALLOC_MANAGED)
        return XP_HOST_MANAGED;
    return w->kind == XP_ALLOC_PINNED || w->kind == XP_ALLOC_REGISTERED ? XP_HOST_PINNED
                                                                        : XP_HOST_PAGEABLE;
}

uint64_t xp_kernel_seq(int device)
{
    return (unsigned)device < XP_MAX_DEVICES
               ? atomic_load_explicit(&launches[device].n, memory_order_relaxed)
               : 0;
}

/* ---- copies ------------------------------------------------------------- */

/* How long the API holds the caller, as NVIDIA's "API synchronization
 * behavior" page documents it (docs/schema.md, blocking):
 * - synchronous APIs (cudaMemcpy, cudaMemcpy2D/3D, cudaMemcpyToSymbol, ...):
 *   H2D, D2H and H2H return once the bytes are out of the caller's memory or
 *   have arrived (SYNC); device to device performs no host-side
 *   synchronization (ASYNC), and so does cudaMemcpyPeer ("asynchronous with
 *   respect to the host") and cudaMemcpy3DPeer between devices;
 * - asynchronous APIs: host to host is fully synchronous (SYNC); a pageable
 *   host side is staged, or waited for, while the caller is held
 *   (ASYNC_PAGEABLE); everything else returns at once (ASYNC). */
static uint8_t blocking_of(bool async, uint8_t dir, uint8_t host_mem)
{
    if (dir == XP_DIR_H2H)
        return XP_BLOCK_SYNC;
    if (!async)
        return dir == XP_DIR_D2D ? XP_BLOCK_ASYNC : XP_BLOCK_SYNC;
    return host_mem == XP_HOST_PAGEABLE ? XP_BLOCK_ASYNC_PAGEABLE : XP_BLOCK_ASYNC;
}

/* The calling thread's last recorded call, when it was a copy that left
 * work queued (anything but SYNC): if the next recorded call on the thread
 * synchronizes that copy's stream or device, the two are one blocking copy
 * in effect (xp_rec_sync.copy_start_ns).  Any other recorded call in
 * between (a launch, an event record, an allocation) breaks the pair.
 * Thread-owned; the copy's description is kept only when the sync can
 * fingerprint its destination (a D2H copy into readable host memory). */
static __thread struct xp_last_copy {
    bool valid, d2h;
    int device;
    uint64_t start_ns, stream;
    xp_copy_call call;
    xp_where wd;
} last_copy __attribute__((tls_model("initial-exec")));

static inline void forget_last_copy(void)
{
    last_copy.valid = false;
}

_Static_assert(sizeof last_copy <= XP_LAST_COPY_BYTES, "XP_LAST_COPY_BYTES holds last_copy");

void xp_engine_last_copy_aside(void *buf)
{
    memcpy(buf, &last_copy, sizeof last_copy);
}

void xp_engine_last_copy_back(const void *buf)
{
    memcpy(&last_copy, buf, sizeof last_copy);
}

void xp_record_copy(const xp_scope *s, const xp_copy_call *c, int status)
{
    if (!s->recording)
        return;
    forget_last_copy();
    xp_where ws, wd;
    xp_classify(c->src, &ws);
    xp_classify(c->dst, &wd);
    if (c->device_sides & XP_SIDE_SRC_DEVICE && host_kind(ws.kind))
        ws.kind = XP_ALLOC_DEVICE;
    if (c->device_sides & XP_SIDE_DST_DEVICE && host_kind(wd.kind))
        wd.kind = XP_ALLOC_DEVICE;
    uint8_t dir = c->migrate;
    switch (c->migrate ? -1 : c->kind) {
    case -1: break;
    case 0: dir = XP_DIR_H2H; break;
    case 1: dir = XP_DIR_H2D; break;
    case 2: dir = XP_DIR_D2H; break;
    case 3: dir = XP_DIR_D2D; break;
    default: {
        /* cudaMemcpyDefault: unified addressing says which side is which;
         * managed memory counts as device memory, where it is used. */
        bool sd = !host_kind(ws.kind), dd = !host_kind(wd.kind);
        dir = sd ? (dd ? XP_DIR_D2D : XP_DIR_D2H) : (dd ? XP_DIR_H2D : XP_DIR_H2H);
        break;
    }
    }
    uint8_t host_mem = XP_HOST_NONE;
    if (c->migrate)
        host_mem = XP_HOST_MANAGED;
    else if (dir == XP_DIR_H2D)
        host_mem = host_mem_of(&ws);
    else if (dir == XP_DIR_D2H)
        host_mem = host_mem_of(&wd);
    else if (dir == XP_DIR_H2H)
        host_mem = host_mem_of(&ws) == XP_HOST_PAGEABLE || host_mem_of(&wd) == XP_HOST_PAGEABLE
                       ? XP_HOST_PAGEABLE : XP_HOST_PINNED;
    uint8_t blocking = blocking_of(c->async || c->migrate, dir, host_mem);
    int device = dir == XP_DIR_D2H || dir == XP_DIR_D2D ? ws.device
                 : dir == XP_DIR_H2D ? wd.device : -1;
    if (device < 0 && dir != XP_DIR_H2H)
        device = xp_current_device;
    if (c->has_device)
        device = c->device;
    xp_rec_copy *r = reserve_call(XP_REC_COPY, c->api, sizeof *r, s, status, device);
    if (r == NULL)
        return;
    /* After the record's end time: hashing is not part of the call. */
    uint8_t fp_kind = XP_FP_NONE;
    r->fingerprint =
        status == 0 ? xp_fp_copy(c, dir, &ws, &wd, S.cfg.fingerprint, !c->async, &fp_kind) : 0;
    r->fingerprint_kind = fp_kind;
    r->full_fingerprint = fp_kind == XP_FP_SAMPLED && dir == XP_DIR_H2D
                              ? xp_fp_confirm(c, r->fingerprint) : 0;
    r->kernel_seq = xp_kernel_seq(device >= 0 ? device : xp_current_device);
    r->src = c->src;
    r->dst = c->dst;
    r->bytes = c->bytes;
    r->stream = c->stream;
    r->direction = dir;
    r->host_mem = host_mem;
    r->blocking = blocking;
    r->kind = c->kind < 0 || c->kind > 254 ? 255 : (uint8_t)c->kind;
    r->nvtx_range = xp_nvtx_top;
    if (status == 0 && blocking != XP_BLOCK_SYNC) {
        last_copy.valid = true;
        last_copy.device = device;
        last_copy.start_ns = r->c.start_ns;
        last_copy.stream = c->stream;
        last_copy.d2h = dir == XP_DIR_D2H && fp_kind == XP_FP_NONE && !c->migrate;
        if (last_copy.d2h) {
            last_copy.call = *c;
            last_copy.wd = wd;
        }
    }
    xp_journal_commit(r);
    if (status == 0)
        xp_devices_used(device);
}

/* Kept in the handles table, not the memory table (xp_registry.h). */
static bool handle_kind(uint8_t k)
{
    return k == XP_ALLOC_RESERVED || k == XP_ALLOC_PHYSICAL;
}

#define XP_HANDLE_KINDS ((1u << XP_ALLOC_RESERVED) | (1u << XP_ALLOC_PHYSICAL))

void xp_record_alloc_on(const xp_scope *s, xp_api api, uint8_t kind, uint64_t ptr,
                        uint64_t bytes, int device, int status)
{
    if (!s->recording)
        return;
    forget_last_copy();
    /* Host memory and address space belong to no device. */
    bool no_device = kind == XP_ALLOC_PINNED || kind == XP_ALLOC_REGISTERED ||
                     kind == XP_ALLOC_RESERVED;
    if (device == XP_DEVICE_OF_KIND)
        device = no_device ? -1 : xp_current_device;
    uint64_t id = 0, mem_free = 0, mem_total = 0;
    if (status == 0) {
        id = atomic_fetch_add_explicit(&next_alloc_id, 1, memory_order_relaxed);
        /* A physical allocation is a handle: one value, whatever its bytes. */
        uint64_t size = kind == XP_ALLOC_PHYSICAL || bytes == 0 ? 1 : bytes;
        xp_range range = {.base = ptr, .size = size, .alloc_id = id, .kind = kind,
                          .device = device};
        if (handle_kind(kind))
            xp_table_add(XP_TABLE_HANDLES, &range);
        else
            xp_registry_add(&range);
    } else if (status == 2 /* cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY */ &&
               !no_device && kind != XP_ALLOC_MAPPED) {
        /* Out-of-memory forensics: what the device had left right then. */
        xp_driver_mem_info(&mem_free, &mem_total);
    }
    xp_rec_alloc *r = reserve_call(XP_REC_ALLOC, api, sizeof *r, s, status, device);
    if (r == NULL)
        return;
    r->alloc_id = id;
    r->ptr = status == 0 ? ptr : 0;
    r->bytes = bytes;
    r->mem_free = mem_free;
    r->mem_total = mem_total;
    r->kind = kind;
    xp_journal_commit(r);
    if (status == 0)
        xp_devices_used(device);
}

int xp_physical_device(uint64_t handle)
{
    xp_range r;
    if (xp_table_lookup(XP_TABLE_HANDLES, handle, &r) && r.kind == XP_ALLOC_PHYSICAL)
        return r.device;
    return XP_DEVICE_OF_KIND;
}

void xp_record_free_span(const xp_scope *s, xp_api api, unsigned kinds, uint64_t ptr,
                         uint64_t span, int status)
{
    if (!s->recording)
        return;
    forget_last_copy();
    if (ptr == 0 && status == 0)
        return;
    bool handles = (kinds & XP_HANDLE_KINDS) != 0;
    uint64_t at = ptr;
    for (bool first = true;; first = false) {
        xp_range range = {0};   /* alloc_id 0 unless a live allocation is removed */
        if (status == 0 && handles)
            xp_table_remove(XP_TABLE_HANDLES, at, kinds, &range);
        else if (status == 0)
            xp_registry_remove(at, kinds, &range);
        /* Past the first, only allocations the span really ended. */
        if (!first && range.alloc_id == 0)
            return;
        int device = range.alloc_id ? range.device : xp_current_device;
        xp_rec_free *r = reserve_call(XP_REC_FREE, api, sizeof *r, s, status, device);
        if (r == NULL)
            return;
        r->alloc_id = range.alloc_id;
        r->ptr = at;
        r->kind = range.alloc_id ? range.kind : 0;
        xp_journal_commit(r);
        if (range.alloc_id == 0 || range.size >= ptr + span - range.base)
            return;
        at = range.base + range.size;
    }
}

/* Whether sync call `api` on `handle` waits for the thread's last copy. */
static bool sync_completes_last_copy(xp_api api, uint64_t handle)
{
    switch (api) {
    case XP_API_cudaStreamSynchronize:
    case XP_API_cudaStreamSynchronize_ptsz:
    case XP_API_cuStreamSynchronize:
    case XP_API_cuStreamSynchronize_ptsz:
        return handle == last_copy.stream;
    case XP_API_cudaDeviceSynchronize:
    case XP_API_cuCtxSynchronize:
    case XP_API_cuCtxSynchronize_v2:
        return last_copy.device < 0 || last_copy.device == xp_current_device;
    default:
        return false;   /* an event: what it marks is not known here */
    }
}

void xp_record_sync(const xp_scope *s, xp_api api, uint64_t handle, int status)
{
    if (!s->recording)
        return;
    bool paired = last_copy.valid && status == 0 && sync_completes_last_copy(api, handle);
    forget_last_copy();
    xp_rec_sync *r = reserve_call(XP_REC_SYNC, api, sizeof *r, s, status, xp_current_device);
    if (r == NULL)
        return;
    r->stream = handle;
    r->nvtx_range = xp_nvtx_top;
    r->copy_start_ns = paired ? last_copy.start_ns : 0;
    uint8_t fp_kind = XP_FP_NONE;
    /* The copy's bytes have all arrived now: its destination can be read. */
    r->fingerprint = paired && last_copy.d2h
                         ? xp_fp_copy(&last_copy.call, XP_DIR_D2H, &last_copy.wd, &last_copy.wd,
                                      S.cfg.fingerprint, true, &fp_kind)
                         : 0;
    r->fingerprint_kind = fp_kind;
    memset(r->reserved, 0, sizeof r->reserved);
    xp_journal_commit(r);
}

void xp_record_call(const xp_scope *s, xp_api api, uint64_t arg0, int status)
{
    if (!s->recording)
        return;
    forget_last_copy();   /* a call between a copy and a sync breaks the pair */
    if (status == 0)
        return;
    xp_rec_call *r = reserve_call(XP_REC_CALL, api, sizeof *r, s, status, xp_current_device);
    if (r == NULL)
        return;
    r->arg0 = arg0;
    xp_journal_commit(r);
}

void xp_record_memset(const xp_scope *s, xp_api api, uint64_t dst, int value, uint64_t bytes,
                      uint64_t stream, bool async, int status)
{
    if (!s->recording)
        return;
    forget_last_copy();
    xp_where w;
    xp_classify(dst, &w);
    uint8_t host_mem = w.kind == XP_ALLOC_DEVICE ? XP_HOST_NONE : host_mem_of(&w);
    /* NVIDIA's API synchronization behavior: a memset is asynchronous with
     * respect to the host, except the synchronous API on pinned host memory
     * or managed memory, which completes before it returns. */
    uint8_t blocking = !async && host_mem != XP_HOST_NONE ? XP_BLOCK_SYNC : XP_BLOCK_ASYNC;
    int device = w.device >= 0 && (w.kind == XP_ALLOC_DEVICE || w.kind == XP_ALLOC_MANAGED)
                     ? w.device
                     : xp_current_device;
    xp_rec_memset *r = reserve_call(XP_REC_MEMSET, api, sizeof *r, s, status, device);
    if (r == NULL)
        return;
    r->dst = dst;
    r->bytes = bytes;
    r->stream = stream;
    r->kernel_seq = xp_kernel_seq(device);
    r->value = value;
    r->host_mem = host_mem;
    r->blocking = blocking;
    r->nvtx_range = xp_nvtx_top;
    xp_journal_commit(r);
}

void xp_record_launch(const xp_scope *s, xp_api api, uint64_t func, int status)
{
    if (!s->recording)
        return;
    forget_last_copy();
    if (status != 0) {
        xp_record_call(s, api, func, status);
        return;
    }
    /* A launch goes to the current device (a stream of another one is an
     * error), so that is the device whose count grows. */
    int device = xp_current_device;
    if ((unsigned)device < XP_MAX_DEVICES)
        atomic_fetch_add_explicit(&launches[device].n, 1, memory_order_relaxed);
}

/* ---- the runtime a driver caller uses ------------------------------------ */

static int is_libcudart(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    return strncmp(base, "libcudart.so", 12) == 0;
}

/* Set once a runtime hook found the real function it forwards to. */
static _Atomic bool runtime_resolved;

void xp_note_runtime_resolved(void)
{
    atomic_store_explicit(&runtime_resolved, true, memory_order_relaxed);
}

void xp_note_driver_call(void)
{
    if (atomic_load_explicit(&driver_call_noted, memory_order_relaxed) ||
        atomic_exchange(&driver_call_noted, true))
        return;
    /* A runtime whose entry points the program has called is a shared one
     * whatever its file is called (the simulator's CUDA 12 stand-in, which
     * `xferprof run --sim` preloads for PyTorch, is not libcudart.so*). */
    bool shared = atomic_load_explicit(&runtime_resolved, memory_order_relaxed) ||
                  dl_iterate_phdr(is_libcudart, NULL) != 0;
    if (!shared) {
        put_meta("runtime", "static");
        put_meta("runtime_note", "no libcudart.so was loaded at the first driver call: the CUDA "
                                 "runtime, if any, is linked statically, and its copies are "
                                 "seen at the driver layer only");
    }
}
