/* cap_sigkill.c: N copies (argv[1], default 500) of 1, 2, ..., N bytes, then
 * kill(getpid(), SIGKILL): no exit handler runs. */
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
    kill(getpid(), SIGKILL);
    return 0;
}
