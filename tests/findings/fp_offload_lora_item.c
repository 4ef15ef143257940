/* fp_offload_lora_item.c: LoRA fine-tuning of a model too large for the GPU,
 * its frozen base weights kept in pinned host memory and streamed to the
 * device layer by layer (as accelerate's CPU offload and ZeRO-Infinity do):
 * per step the batch is uploaded from a pinned double buffer, then for the
 * forward pass and again, in reverse, for the backward pass, each of the 6
 * layers' weights (1 MiB, the same bytes every step: they are frozen) is
 * copied with cudaMemcpyAsync on a copy stream into one of two device
 * staging slots, the compute stream waits for its event, runs the layer and
 * records an event that frees the slot. The LoRA adapters live on the device
 * and are updated there. The loss is read every step the way PyTorch's
 * `loss.item()` does it: cudaMemcpyAsync into a host float, then
 * cudaStreamSynchronize.
 *
 * The read stalls the host every step until the whole step, all 12 layer
 * passes, has run; the GPU then idles while the host queues the next step.
 * The fix is to keep the loss on the device and read it every N steps.
 * Streaming the frozen weights is the point of offloading (they do not fit
 * on the device), not a defect.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=100us
 * TRUTH: sync-in-loop @ item
 * ALLOW: redundant-upload @ layer
 * (the layer uploads repeat the same frozen bytes every pass: offloading on
 * purpose, but "keep them on the device" is right where memory allows) */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 60
#define LAYERS 6
#define LAYER_BYTES (1u << 20)
#define BATCH_BYTES (512u << 10)

struct offload {
    cudaStream_t copy, compute;
    unsigned char *host[LAYERS];   /* pinned, frozen */
    void *slot[2];
    cudaEvent_t loaded[2], freed[2];
};

/* Streams layer l's weights into a staging slot and runs it. */
static EX_SITE void run_layer(const ex_kernel *k, struct offload *o, unsigned l, unsigned pass)
{
    int b = pass % 2;
    CHECK(cudaStreamWaitEvent(o->copy, o->freed[b], 0));
    CHECK(cudaMemcpyAsync(o->slot[b], o->host[l], LAYER_BYTES, cudaMemcpyHostToDevice, o->copy)); /* @layer */
    CHECK(cudaEventRecord(o->loaded[b], o->copy));
    CHECK(cudaStreamWaitEvent(o->compute, o->loaded[b], 0));
    ex_kernel_launch(k, o->compute);
    CHECK(cudaEventRecord(o->freed[b], o->compute));
}

static EX_SITE float loss_item(const float *dev_loss, cudaStream_t s)
{
    float v;
    CHECK(cudaMemcpyAsync(&v, dev_loss, sizeof v, cudaMemcpyDeviceToHost, s)); /* @item */
    CHECK(cudaStreamSynchronize(s));
    return v;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    struct offload o;
    CHECK(cudaStreamCreateWithFlags(&o.copy, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&o.compute, cudaStreamNonBlocking));
    for (unsigned l = 0; l < LAYERS; l++) {
        CHECK(cudaMallocHost((void **)&o.host[l], LAYER_BYTES));
        fp_fill_batch(o.host[l], LAYER_BYTES, 1000 + l); /* loaded from the checkpoint once */
    }
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMalloc(&o.slot[i], LAYER_BYTES));
        CHECK(cudaEventCreateWithFlags(&o.loaded[i], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&o.freed[i], cudaEventDisableTiming));
        CHECK(cudaEventRecord(o.freed[i], o.compute));
    }
    unsigned char *batch[2];
    void *dev_batch[2];
    cudaEvent_t used[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&batch[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&used[i], cudaEventDisableTiming));
    }
    float *dev_loss;
    CHECK(cudaMalloc((void **)&dev_loss, sizeof(float)));
    CHECK(cudaMemsetAsync(dev_loss, 0, sizeof(float), o.compute));
    double running = 0;
    unsigned pass = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        CHECK(cudaEventSynchronize(used[b]));
        fp_fill_batch(batch[b], BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch[b], batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, o.compute)); /* @batch */
        CHECK(cudaEventRecord(used[b], o.compute));
        for (unsigned l = 0; l < LAYERS; l++)
            run_layer(&k, &o, l, pass++);            /* forward */
        for (unsigned l = LAYERS; l-- > 0;)
            run_layer(&k, &o, l, pass++);            /* backward, LoRA update */
        running += loss_item(dev_loss, o.compute);
        if (step % 20 == 19)
            printf("step %u loss %.3f\n", step + 1, running / 20);
    }
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(batch[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(used[i]));
        CHECK(cudaFree(o.slot[i]));
        CHECK(cudaEventDestroy(o.loaded[i]));
        CHECK(cudaEventDestroy(o.freed[i]));
    }
    for (unsigned l = 0; l < LAYERS; l++)
        CHECK(cudaFreeHost(o.host[l]));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaStreamDestroy(o.copy));
    CHECK(cudaStreamDestroy(o.compute));
    ex_kernel_fini(&k);
    return 0;
}
