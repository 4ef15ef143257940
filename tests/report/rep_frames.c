/* rep_frames.c: one copy from a known call chain, for the stack_frames view (test_frames.py).
 *
 * main calls frames_outer (never inlined), which runs frames_inner (always
 * inlined into it), which copies 12345 bytes host to device with
 * cudaMemcpy.  The driver finds each line by the marker comment on it. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_OK(x)                                                                \
    do {                                                                           \
        if ((x) != cudaSuccess) {                                                  \
            fprintf(stderr, "%s failed\n", #x);                                    \
            exit(2);                                                               \
        }                                                                          \
    } while (0)

static char host[12345];

static inline __attribute__((always_inline)) void frames_inner(void *dev, size_t n)
{
    CHECK_OK(cudaMemcpy(dev, host, n, cudaMemcpyHostToDevice)); /* FRAMES_COPY */
}

/* Not static, not inlined, not cloned: its frame is its own, by its name. */
__attribute__((noinline, noclone)) void frames_outer(void *dev, size_t n);
__attribute__((noinline, noclone)) void frames_outer(void *dev, size_t n)
{
    frames_inner(dev, n); /* FRAMES_INLINED_CALL */
    __asm__ volatile("" ::: "memory"); /* no tail call: this frame stays on the stack */
}

int main(void)
{
    void *dev = NULL;
    CHECK_OK(cudaMalloc(&dev, sizeof host));
    frames_outer(dev, sizeof host); /* FRAMES_OUTER_CALL */
    CHECK_OK(cudaFree(dev));
    return 0;
}
