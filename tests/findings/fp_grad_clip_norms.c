/* fp_grad_clip_norms.c: gradient-norm clipping done on the host. After each
 * step's backward pass the loop walks the model's 24 parameter tensors, launches
 * a norm kernel on each gradient and reads the norm back with a 4-byte
 * cudaMemcpy (PyTorch's `sum(p.grad.norm().item() ** 2 for p in params)`),
 * then passes the clip factor to a scaling kernel per tensor as an argument.
 * Every read waits for the kernel just queued: 24 stalls a step, 1920 in the
 * run, each leaving the GPU idle while the host adds one number. The batches
 * are pinned and asynchronous; the weights are allocated once and freed.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=20us
 * TRUTH: sync-in-loop @ norm_read
 * (the fix is to reduce the norms on the device, as
 * torch.nn.utils.clip_grad_norm_ does, with no read at all; the reads are
 * small, but the wait is the problem, not their size: one finding) */
#include "fp_common.h"

#include <math.h>

#define STEPS 80
#define PARAMS 24
#define BATCH_BYTES (1u << 20)
#define GRAD_BYTES (256u << 10)
#define MAX_NORM 1.0f

static EX_SITE float grad_norm(const ex_kernel *k, float *dev_norm, cudaStream_t s)
{
    ex_kernel_launch(k, s); /* the reduction of one gradient into *dev_norm */
    float norm;
    CHECK(cudaMemcpy(&norm, dev_norm, sizeof norm, cudaMemcpyDeviceToHost)); /* @norm_read */
    return norm;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s = 0; /* the legacy default stream, where cudaMemcpy runs */
    void *dev_grad[PARAMS];
    float *dev_norm;
    for (int p = 0; p < PARAMS; p++)
        CHECK(cudaMalloc(&dev_grad[p], GRAD_BYTES));
    CHECK(cudaMalloc((void **)&dev_norm, PARAMS * sizeof *dev_norm));
    CHECK(cudaMemset(dev_norm, 0x3c, PARAMS * sizeof *dev_norm)); /* what the reductions leave */
    unsigned char *batch;
    void *dev_batch;
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    unsigned clipped = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        fp_fill_batch(batch, BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch, batch, BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        ex_kernel_launch(&k, s); /* forward */
        ex_kernel_launch(&k, s); /* backward */
        float total = 0.0f;
        for (int p = 0; p < PARAMS; p++) {
            float n = grad_norm(&k, &dev_norm[p], s);
            total += n * n;
        }
        float coef = MAX_NORM / (sqrtf(total) + 1e-6f);
        if (coef < 1.0f) {
            clipped++;
            for (int p = 0; p < PARAMS; p++)
                ex_kernel_launch(&k, s); /* grad *= coef, coef as a kernel argument */
        }
        ex_kernel_launch(&k, s); /* the optimizer step */
        fp_host_work_us(300);
    }
    CHECK(cudaStreamSynchronize(s));
    printf("clipped %u of %u steps\n", clipped, STEPS);
    CHECK(cudaFreeHost(batch));
    CHECK(cudaFree(dev_batch));
    for (int p = 0; p < PARAMS; p++)
        CHECK(cudaFree(dev_grad[p]));
    CHECK(cudaFree(dev_norm));
    ex_kernel_fini(&k);
    return 0;
}
