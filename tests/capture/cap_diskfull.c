/* cap_diskfull.c: many small uploads in a row (a training loop's per-step
 * copies), to fill a small disk with the profiler's files.
 *
 *   cap_diskfull N
 *
 * One cudaMalloc, N cudaMemcpy of 64 to 575 bytes, one cudaFree: N + 2
 * calls.  Prints "copies N"; exits 0. */
#include "cap_util.h"

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    int n = atoi(argv[1]);
    static unsigned char host[4096];
    void *dev = NULL;
    CHECK_OK(cudaMalloc(&dev, sizeof host));
    for (int i = 0; i < n; i++) {
        host[0] = (unsigned char)i;
        CHECK_OK(cudaMemcpy(dev, host, 64 + (size_t)(i % 512), cudaMemcpyHostToDevice));
    }
    CHECK_OK(cudaFree(dev));
    printf("copies %d\n", n);
    return 0;
}
