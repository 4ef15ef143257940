/* fp_per_param_scalars.c: an optimizer written layer by layer that uploads
 * each layer's hyperparameters (learning rate, weight decay, the step's bias
 * correction: 16 bytes) with its own cudaMemcpyAsync before launching that
 * layer's update kernel: 48 tiny copies per step. Each pays the fixed cost of
 * a copy; packed into one array they would be one copy per step. The copies
 * are async from pinned memory, so nothing blocks.
 *
 * TRUTH: small-copies @ hparams
 * (the per-step batch upload is large and fine) */
#include "fp_common.h"

#define STEPS 50
#define LAYERS 48
#define BATCH_BYTES (1u << 20)

struct hparams {
    float lr, weight_decay, bias_c1, bias_c2;
};

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    struct hparams *hp, *dev_hp;
    CHECK(cudaMallocHost((void **)&hp, LAYERS * sizeof *hp));
    CHECK(cudaMalloc((void **)&dev_hp, LAYERS * sizeof *hp));
    unsigned char *batch;
    void *dev_batch;
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    for (unsigned step = 0; step < STEPS; step++) {
        fp_fill_batch(batch, BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch, batch, BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        ex_kernel_launch(&k, s);
        for (int l = 0; l < LAYERS; l++) {
            hp[l].lr = 1e-3f * (1.0f - (float)step / STEPS) * (1.0f + 0.01f * l);
            hp[l].weight_decay = 0.01f;
            hp[l].bias_c1 = 1.0f - 1.0f / (float)(step + 2);
            hp[l].bias_c2 = 1.0f - 1.0f / (float)(step + 3);
            CHECK(cudaMemcpyAsync(&dev_hp[l], &hp[l], sizeof *hp, cudaMemcpyHostToDevice, s)); /* @hparams */
            ex_kernel_launch(&k, s);
        }
        CHECK(cudaStreamSynchronize(s));
    }
    CHECK(cudaFreeHost(batch));
    CHECK(cudaFreeHost(hp));
    CHECK(cudaFree(dev_batch));
    CHECK(cudaFree(dev_hp));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
