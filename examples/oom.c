/* oom.c: plain out of memory: with the weights resident, the program asks for
 * an activation buffer twice the device's whole memory.  No contiguous block
 * could ever hold it: the request is above the free memory, so it is not
 * fragmentation.
 *
 * xferprof report should say:
 *   oom (error) at alloc_activations: 1 failed allocation of 2 * total device
 *     memory bytes (the golden test runs with XFERPROF_SIM_MEMORY=1G:
 *     2147483648), details fragmentation false; alloc_weights (a quarter of
 *     the device) among the allocations holding memory.
 * The weights are freed at the end, so no leak. */
#include "example_util.h"

static EX_SITE void *alloc_weights(size_t bytes)
{
    void *p;
    CHECK(cudaMalloc(&p, bytes));
    return p;
}

/* Not `return cudaMalloc(...)`: a tail call would leave main as the site. */
static EX_SITE cudaError_t alloc_activations(void **p, size_t bytes)
{
    cudaError_t e = cudaMalloc(p, bytes);
    if (e != cudaSuccess)
        fprintf(stderr, "alloc_activations: %s\n", cudaGetErrorName(e));
    return e;
}

int main(void)
{
    size_t free_b, total_b;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    void *weights = alloc_weights(total_b / 4);
    size_t request = 2 * total_b;
    void *act = NULL;
    cudaError_t e = alloc_activations(&act, request);
    (void)cudaGetLastError();
    printf("asked for %zu MiB of a %zu MiB device: %s\n", request >> 20, total_b >> 20,
           cudaGetErrorName(e));
    if (e == cudaSuccess)
        CHECK(cudaFree(act));
    CHECK(cudaFree(weights));
    if (e != cudaErrorMemoryAllocation)
        return 1;
    ex_expect("oom", "alloc_activations", 1, (long long)request, " fragmentation=false");
    return 0;
}
