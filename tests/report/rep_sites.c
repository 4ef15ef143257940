/* rep_sites.c: known copies from two functions, for the report's tests.
 *
 * With argv[1] = R (default 1), R rounds of: rep_upload makes 5 synchronous
 * H2D copies of 4096 bytes from pageable memory (cudaMemcpy), rep_download 3
 * async D2H copies of 8192 bytes into pinned memory (cudaMemcpyAsync, then a
 * stream synchronize).  Allocations: an 8192-byte device buffer (freed at
 * the end), a 1000-byte one left live at exit, an 8192-byte pinned buffer.
 * The drivers find each copy's line by the marker comment on it. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_OK(x)                                                                \
    do {                                                                           \
        if ((x) != cudaSuccess) {                                                  \
            fprintf(stderr, "%s failed\n", #x);                                    \
            exit(2);                                                               \
        }                                                                          \
    } while (0)

static void *dev, *pinned;
static char pageable[4096];

__attribute__((noinline)) static void rep_upload(int round)
{
    for (int i = 0; i < 5; i++) {
        pageable[i] = (char)(round + i); /* distinct content: fingerprints differ */
        CHECK_OK(cudaMemcpy(dev, pageable, sizeof pageable, cudaMemcpyHostToDevice)); /* REP_UPLOAD */
    }
}

__attribute__((noinline)) static void rep_download(cudaStream_t s)
{
    for (int i = 0; i < 3; i++) {
        CHECK_OK(cudaMemcpyAsync(pinned, dev, 8192, cudaMemcpyDeviceToHost, s)); /* REP_DOWNLOAD */
        CHECK_OK(cudaStreamSynchronize(s));
    }
}

int main(int argc, char **argv)
{
    long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 1;
    void *kept = NULL;
    cudaStream_t s;
    CHECK_OK(cudaMalloc(&dev, 8192));
    CHECK_OK(cudaMalloc(&kept, 1000));
    CHECK_OK(cudaMallocHost(&pinned, 8192));
    CHECK_OK(cudaStreamCreate(&s));
    for (long r = 0; r < rounds; r++) {
        rep_upload((int)r);
        rep_download(s);
    }
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFree(dev));
    printf("rounds %ld\n", rounds);
    return 0;
}
