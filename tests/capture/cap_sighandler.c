/* cap_sighandler.c: copies made from a signal handler that interrupts the
 * profiled thread's own CUDA calls.
 *
 *   cap_sighandler [MAIN_COPIES [SIGNALS]]
 *
 * The main thread makes MAIN_COPIES (default 20000) pageable H2D cudaMemcpy
 * of 4 KiB.  A second thread sends it SIGNALS (default 3000) SIGUSR1 with
 * pthread_kill, one at a time: it waits until the handler has run before
 * sending the next, so that every signal is handled and the counts are the
 * same every run.  The handler makes two copies (an H2D and a D2H
 * cudaMemcpy of 0 bytes) and counts them.  Zero bytes: the simulator, like
 * CUDA itself, is not async-signal-safe (a copy takes its stream's mutex and
 * mallocs), so a real copy from a handler that interrupted one deadlocks in
 * the simulator; an empty copy returns there before any of that, yet goes
 * through the same hooks and is recorded as a copy.  Since the main thread spends nearly
 * all its time inside cudaMemcpy, most signals interrupt one: inside the
 * real copy, or inside the profiler's work before or after it.  At exit the
 * program prints how many copies each side made; stdout is the same with
 * and without the profiler. */
#include "cap_util.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>

#define MAIN_BYTES 4096
#define HANDLER_BYTES 0

static void *dev_main, *dev_handler;
static char host_main[MAIN_BYTES], host_handler[16];
static _Atomic long handled;          /* handler runs */
static _Atomic long handler_copies;   /* copies made by the handler */
static _Atomic long handler_failed;
static pthread_t main_thread;
static long n_signals;

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    if (cudaMemcpy(dev_handler, host_handler, HANDLER_BYTES, cudaMemcpyHostToDevice) ==
        cudaSuccess)
        atomic_fetch_add(&handler_copies, 1);
    else
        atomic_fetch_add(&handler_failed, 1);
    if (cudaMemcpy(host_handler, dev_handler, HANDLER_BYTES, cudaMemcpyDeviceToHost) ==
        cudaSuccess)
        atomic_fetch_add(&handler_copies, 1);
    else
        atomic_fetch_add(&handler_failed, 1);
    atomic_fetch_add(&handled, 1);
    errno = saved;
}

static void *sender(void *arg)
{
    (void)arg;
    for (long i = 0; i < n_signals; i++) {
        CHECK(pthread_kill(main_thread, SIGUSR1) == 0);
        while (atomic_load(&handled) <= i)
            sched_yield();
    }
    return NULL;
}

int main(int argc, char **argv)
{
    long n_main = argc > 1 ? strtol(argv[1], NULL, 10) : 20000;
    n_signals = argc > 2 ? strtol(argv[2], NULL, 10) : 3000;
    CHECK(n_main > 0 && n_signals >= 0);
    CHECK_OK(cudaMalloc(&dev_main, MAIN_BYTES));
    CHECK_OK(cudaMalloc(&dev_handler, sizeof host_handler));
    main_thread = pthread_self();
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    CHECK(sigaction(SIGUSR1, &sa, NULL) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, sender, NULL) == 0);
    long main_copies = 0;
    for (long i = 0; i < n_main; i++) {
        host_main[i % MAIN_BYTES] = (char)i;
        CHECK_OK(cudaMemcpy(dev_main, host_main, MAIN_BYTES, cudaMemcpyHostToDevice));
        main_copies++;
    }
    /* Signals still to come are handled here, outside any CUDA call. */
    CHECK(pthread_join(t, NULL) == 0);
    CHECK(atomic_load(&handler_failed) == 0);
    printf("main_copies %ld\n", main_copies);
    printf("handler_copies %ld\n", atomic_load(&handler_copies));
    return 0;
}
