/* xp_stderr.c: the preload's writes to stderr, which must not raise
 * SIGPIPE in the program. */
#include "xp_engine.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

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
