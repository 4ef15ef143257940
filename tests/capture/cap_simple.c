/* cap_simple.c: a small known workload: 3 uploads of 1000 bytes, 2
 * downloads of 500 bytes, 1 device-to-device copy of 100 bytes; two
 * allocations left live (1 MiB device, 64 KiB pinned), one freed.  Prints
 * "pid N"; exits with argv[1] (default 0). */
#include "cap_util.h"

int main(int argc, char **argv)
{
    int status = argc > 1 ? atoi(argv[1]) : 0;
    void *dev = NULL, *dev2 = NULL, *pinned = NULL, *tmp = NULL, *host = malloc(4096);
    CHECK(host);
    memset(host, 7, 4096);
    CHECK_OK(cudaMalloc(&dev, 1u << 20));
    CHECK_OK(cudaMalloc(&tmp, 4096));
    CHECK_OK(cudaMallocHost(&pinned, 65536));
    dev2 = tmp;
    for (int i = 0; i < 3; i++)
        CHECK_OK(cudaMemcpy(dev, host, 1000, cudaMemcpyHostToDevice));
    for (int i = 0; i < 2; i++)
        CHECK_OK(cudaMemcpy(pinned, dev, 500, cudaMemcpyDeviceToHost));
    CHECK_OK(cudaMemcpy(dev2, dev, 100, cudaMemcpyDeviceToDevice));
    CHECK_OK(cudaFree(tmp));
    printf("pid %ld\n", (long)getpid());
    free(host);
    return status;
}
