/* cap_cuda12.c: a program built against NVIDIA's CUDA 12 headers and linked
 * against libcudart.so.12 (the simulator's), calling the entry points whose
 * CUDA 12 signature differs from CUDA 13's: cudaMemPrefetchAsync with a
 * device ordinal, cudaMemPrefetchAsync_v2 with a location, and 12.8's
 * cudaMemcpyBatchAsync with a failIdx.  Prints every result, so that the
 * output with and without the profiler can be compared. */
#include <cuda_runtime_api.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if CUDART_VERSION < 12000 || CUDART_VERSION >= 13000
#error "cap_cuda12.c is built against CUDA 12's headers"
#endif

#if CUDART_VERSION < 12080
/* CUDA 12.8's declarations (the CUDA 12 headers here are older): the struct
 * as 12.8's driver_types.h has it, the function as its cuda_runtime_api.h. */
struct cudaMemcpyAttributes {
    int srcAccessOrder; /* enum cudaMemcpySrcAccessOrder */
    struct cudaMemLocation srcLocHint;
    struct cudaMemLocation dstLocHint;
    unsigned int flags;
};
enum { cudaMemcpySrcAccessOrderStream = 0x1 };
extern cudaError_t cudaMemcpyBatchAsync(void **dsts, void **srcs, size_t *sizes, size_t count,
                                        struct cudaMemcpyAttributes *attrs, size_t *attrsIdxs,
                                        size_t numAttrs, size_t *failIdx, cudaStream_t stream);
#endif

#define SAY(name, value) printf("%s 0x%llx\n", (name), (unsigned long long)(uintptr_t)(value))

enum { N = 1 << 16 };

int main(void)
{
    int devices = 0;
    SAY("rc_count", cudaGetDeviceCount(&devices));
    SAY("devices", devices);
    int target = devices - 1;   /* the last device: not the current one */
    cudaStream_t s = NULL;
    SAY("rc_stream", cudaStreamCreate(&s));
    SAY("stream", s);

    /* ---- prefetch: CUDA 12's device ordinal, and _v2's location --------- */
    unsigned char *m = NULL;
    SAY("rc_managed", cudaMallocManaged((void **)&m, N, cudaMemAttachGlobal));
    SAY("managed", m);
    memset(m, 7, N);
    SAY("rc_prefetch_dev", cudaMemPrefetchAsync(m, N, target, s));
    SAY("rc_prefetch_host", cudaMemPrefetchAsync(m, N / 2, cudaCpuDeviceId, s));
    struct cudaMemLocation loc = {.type = cudaMemLocationTypeDevice, .id = target};
    SAY("rc_prefetch_v2", cudaMemPrefetchAsync_v2(m, N / 4, loc, 0, s));
    /* A device that does not exist: refused the same with and without. */
    SAY("rc_prefetch_bad", cudaMemPrefetchAsync(m, N, devices + 5, s));
    SAY("rc_sync", cudaStreamSynchronize(s));

    /* ---- cudaMemcpyBatchAsync with 12.8's failIdx ------------------------ */
    unsigned char *d = NULL;
    SAY("rc_malloc", cudaMalloc((void **)&d, 2 * N));
    SAY("dev", d);
    unsigned char *h = malloc(2 * N);
    for (size_t i = 0; i < 2 * N; i++)
        h[i] = (unsigned char)(i * 31);
    void *dsts[2] = {d, d + N};
    void *srcs[2] = {h, h + N};
    size_t sizes[2] = {1000, 3000};
    struct cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx0 = 0;
    size_t fail = 12345;
    SAY("rc_batch", cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, &attr, &idx0, 1, &fail, s));
    SAY("failidx_ok", fail);
    SAY("rc_sync", cudaStreamSynchronize(s));
    unsigned char back[3000];
    SAY("rc_back", cudaMemcpy(back, d + N, sizeof back, cudaMemcpyDeviceToHost));
    SAY("same", memcmp(back, h + N, sizeof back) == 0);
    /* No attributes: refused, and failIdx says no copy in particular. */
    SAY("rc_batch_bad", cudaMemcpyBatchAsync(dsts, srcs, sizes, 2, NULL, NULL, 0, &fail, s));
    SAY("failidx_bad", fail);
    SAY("last_error", cudaGetLastError());

    cudaFree(d);
    cudaFree(m);
    cudaStreamDestroy(s);
    free(h);
    return 0;
}
