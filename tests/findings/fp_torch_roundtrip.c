/* fp_torch_roundtrip.c: PyTorch's blocking copies reproduced in C, used for a
 * round trip. `t.cpu()` is cudaMemcpyAsync into pageable memory followed at
 * once by cudaStreamSynchronize of the same stream; `torch.tensor(x).to(dev)`
 * is cudaMemcpyAsync from pageable memory followed by the same synchronize.
 * Every 5th step the logits go to the host (to be inspected), and the same
 * bytes are sent back to the device as the next stage's input.
 *
 * TRUTH: round-trip @ to_device
 * (6 of each: too few for a blocking-loop finding; "pin it and pass
 * non_blocking=True" (async-pageable) is the wrong advice for copies
 * followed at once by a synchronize) */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 30
#define LOGITS_BYTES (512u << 10)

static EX_SITE void tensor_cpu(void *host, const void *dev, size_t n, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(host, dev, n, cudaMemcpyDeviceToHost, s)); /* @cpu */
    CHECK(cudaStreamSynchronize(s));
}

static EX_SITE void tensor_to(void *dev, const void *host, size_t n, cudaStream_t s)
{
    CHECK(cudaMemcpyAsync(dev, host, n, cudaMemcpyHostToDevice, s)); /* @to_device */
    CHECK(cudaStreamSynchronize(s));
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_logits, *dev_stage2;
    CHECK(cudaMalloc(&dev_logits, LOGITS_BYTES));
    CHECK(cudaMalloc(&dev_stage2, LOGITS_BYTES));
    unsigned char *host = malloc(LOGITS_BYTES);
    unsigned long sum = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        ex_kernel_launch(&k, s);
        CHECK(cudaMemsetAsync(dev_logits, 7 + step, LOGITS_BYTES, s)); /* the step's logits */
        if (step % 5 == 4) {
            tensor_cpu(host, dev_logits, LOGITS_BYTES, s);
            sum += host[step];
            tensor_to(dev_stage2, host, LOGITS_BYTES, s);
        }
        ex_kernel_launch(&k, s);
    }
    CHECK(cudaStreamSynchronize(s));
    printf("checksum %lu\n", sum);
    free(host);
    CHECK(cudaFree(dev_logits));
    CHECK(cudaFree(dev_stage2));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
