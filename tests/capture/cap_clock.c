/* cap_clock.c: copies between two CLOCK_MONOTONIC readings of the program's
 * own, for the records' clock (test_clock.py).  Makes 300 copies 1 ms apart
 * (across the session's first TSC scales: at start-up, 100 ms and 300 ms
 * in), then forks: the child's 20 copies fail, as CUDA's do after fork, and
 * are recorded in its own database on the scale it inherited.  Prints
 * "copy PID BEFORE AFTER" for each copy (nanoseconds) and "child PID". */
#include "cap_util.h"

#include <sys/wait.h>
#include <time.h>

static unsigned long long mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void copies(void *dev, const void *host, int n, bool sleep_between)
{
    for (int i = 0; i < n; i++) {
        unsigned long long before = mono();
        (void)cudaMemcpy(dev, host, 64, cudaMemcpyHostToDevice);
        unsigned long long after = mono();
        printf("copy %ld %llu %llu\n", (long)getpid(), before, after);
        if (sleep_between)
            usleep(1000);
    }
}

int main(void)
{
    void *dev = NULL, *host = malloc(64);
    CHECK(host);
    memset(host, 1, 64);
    CHECK_OK(cudaMalloc(&dev, 64));
    copies(dev, host, 300, true);
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        copies(dev, host, 20, false);
        fflush(stdout);
        _exit(0);
    }
    printf("child %ld\n", (long)child);
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return 0;
}
