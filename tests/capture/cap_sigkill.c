/* cap_sigkill.c: N copies (argv[1], default 500) of 1, 2, ..., N bytes, then
 * kill(getpid(), SIGKILL): no exit handler runs.  With "wait" as argv[2] it
 * prints "ready" after the copies and waits until stdin closes (or it is
 * killed) before killing itself: a live run for others to look at. */
#include "cap_util.h"

#include <signal.h>

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 500;
    CHECK(n > 0 && n <= 65536);
    void *dev = NULL, *host = malloc((size_t)n);
    CHECK(host);
    CHECK_OK(cudaMalloc(&dev, (size_t)n));
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    for (long i = 1; i <= n; i++)
        CHECK_OK(cudaMemcpy(dev, host, (size_t)i, cudaMemcpyHostToDevice));
    if (argc > 2 && strcmp(argv[2], "wait") == 0) {
        printf("ready\n");
        fflush(stdout);
        char c;
        while (read(0, &c, 1) > 0)
            ;
    }
    kill(getpid(), SIGKILL);
    return 0;
}
