/* small_copies.c: the pitfall is moving data in thousands of tiny copies
 * (one scalar or one small tensor at a time): each copy pays the fixed cost
 * of a transfer (microseconds of latency) for 64 bytes, so the link carries
 * almost nothing; pack them into one buffer and copy it once.
 *
 * xferprof report should say:
 *   small-copies (warning, since COPIES >= 10 x the minimum of 100) at
 *     upload_scalar: COPIES copies, COPIES * COPY_BYTES bytes (2000 x 64 = 128000).
 * The copies are asynchronous from pinned memory and each is different, so
 * nothing else is found. */
#include "example_util.h"

#include <string.h>

#define COPIES 2000
#define COPY_BYTES 64

static EX_SITE void upload_scalar(void *dev, const void *host, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, COPY_BYTES, cudaMemcpyHostToDevice, s));
}

int main(void)
{
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *dev;
    CHECK(cudaMalloc((void **)&dev, (size_t)COPIES * COPY_BYTES));
    unsigned char *host;
    CHECK(cudaMallocHost((void **)&host, (size_t)COPIES * COPY_BYTES));
    for (int i = 0; i < COPIES; i++) {
        unsigned char *h = host + (size_t)i * COPY_BYTES;
        memset(h, 0, COPY_BYTES);
        memcpy(h, &i, sizeof i); /* each parameter differs */
        upload_scalar(dev + (size_t)i * COPY_BYTES, h, s);
    }
    CHECK(cudaStreamSynchronize(s));

    CHECK(cudaFreeHost(host));
    CHECK(cudaFree(dev));
    CHECK(cudaStreamDestroy(s));
    ex_expect("small-copies", "upload_scalar", COPIES, (long long)COPIES * COPY_BYTES, NULL);
    return 0;
}
