/* xp_engine_int.h: what the engine's own files share among themselves
 * (xp_engine.c the session's life, xp_record.c the call records,
 * xp_runtime_note.c the note on the runtime, xp_window.c the capture
 * window); included by those files only. */
#ifndef XP_ENGINE_INT_H
#define XP_ENGINE_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#include "xp_config.h"
#include "xp_ingest.h"
#include "xp_journal.h"

/* Hidden on the declarations too: the records reach the session and the
 * thread id directly, not through the GOT (-fvisibility=hidden applies to
 * definitions only). */
#pragma GCC visibility push(hidden)

/* The process's profiling session (xp_engine.c).  Written by whoever starts
 * it (under the ST_STARTING state), read by the hooks once state is ST_ON;
 * torn down at exit by the destructor, and forgotten (not freed) in a
 * forked child. */
typedef struct xp_sess_state {
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
} xp_sess_state;
extern xp_sess_state xp_sess;

/* The calling thread's id, asked of the kernel once per thread (reset in a
 * forked child); inline: every record carries it. */
extern __thread uint32_t xp_cached_tid __attribute__((tls_model("initial-exec")));

static inline uint32_t xp_my_tid(void)
{
    if (xp_cached_tid == 0)
        xp_cached_tid = (uint32_t)syscall(SYS_gettid);
    return xp_cached_tid;
}

/* A meta key/value into the session's journal (the session is on). */
void xp_session_put_meta(const char *key, const char *value);

/* In a forked child, from the session's atfork handler: each file forgets
 * the parent's session state it keeps (xp_record.c: the thread's last copy
 * and the launch counts; xp_runtime_note.c: whether the first driver call
 * was looked at). */
void xp_record_after_fork(void);
void xp_runtime_note_after_fork(void);

#pragma GCC visibility pop

#endif
