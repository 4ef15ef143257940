/* rep_placement.c: one rank of a data-parallel job, run 4 times by
 * test_placement.py with RANK and LOCAL_RANK set.  argv[1] "forget": no
 * cudaSetDevice, so every rank allocates and copies on ordinal 0;
 * "setdevice": cudaSetDevice(LOCAL_RANK) first, as it should; "ordinal0":
 * no cudaSetDevice either, for ranks launched with CUDA_VISIBLE_DEVICES=k.
 * Each rank then allocates 1 MiB, uploads and downloads it. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BYTES (1u << 20)

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "forget";
    const char *lr = getenv("LOCAL_RANK");
    int local_rank = lr ? atoi(lr) : 0;
    if (strcmp(mode, "setdevice") == 0 && cudaSetDevice(local_rank) != cudaSuccess) {
        fprintf(stderr, "cudaSetDevice(%d) failed\n", local_rank);
        return 1;
    }
    static unsigned char host[BYTES];
    memset(host, local_rank + 1, sizeof host);
    void *dev = NULL;
    if (cudaMalloc(&dev, BYTES) != cudaSuccess ||
        cudaMemcpy(dev, host, BYTES, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(host, dev, BYTES, cudaMemcpyDeviceToHost) != cudaSuccess) {
        fprintf(stderr, "CUDA failed\n");
        return 1;
    }
    int used = -1;
    cudaGetDevice(&used);
    printf("rank on ordinal %d\n", used);
    return cudaFree(dev) == cudaSuccess ? 0 : 1;
}
