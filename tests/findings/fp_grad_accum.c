/* fp_grad_accum.c: gradient accumulation done right. Each optimizer step
 * consumes 4 micro-batches; a micro-batch is filled into one of two pinned
 * buffers while the other is in flight, uploaded with cudaMemcpyAsync on a copy
 * stream and consumed on the compute stream after cudaStreamWaitEvent. The
 * loss is accumulated on the device and read back every 25 optimizer steps
 * into pinned memory, waited for with an event. Gradients are zeroed with
 * cudaMemsetAsync after each optimizer step.
 *
 * TRUTH: none */
#include "fp_common.h"

#define OPT_STEPS 50
#define ACCUM 4
#define MICRO_BYTES (1u << 20)
#define GRAD_BYTES (4u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t copy, compute;
    CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    unsigned char *micro[2];
    void *dev_micro[2], *dev_grad, *dev_loss;
    cudaEvent_t uploaded[2], consumed[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&micro[i], MICRO_BYTES));
        CHECK(cudaMalloc(&dev_micro[i], MICRO_BYTES));
        CHECK(cudaEventCreateWithFlags(&uploaded[i], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&consumed[i], cudaEventDisableTiming));
    }
    CHECK(cudaMalloc(&dev_grad, GRAD_BYTES));
    CHECK(cudaMalloc(&dev_loss, sizeof(float)));
    CHECK(cudaMemsetAsync(dev_loss, 0, sizeof(float), compute));
    float *loss;
    CHECK(cudaMallocHost((void **)&loss, sizeof(float)));
    cudaEvent_t loss_ready;
    CHECK(cudaEventCreateWithFlags(&loss_ready, cudaEventDisableTiming));
    unsigned n = 0;
    for (unsigned opt = 0; opt < OPT_STEPS; opt++) {
        for (int m = 0; m < ACCUM; m++, n++) {
            int b = n % 2;
            if (n >= 2)
                CHECK(cudaEventSynchronize(consumed[b])); /* its previous micro-batch is used */
            fp_fill_batch(micro[b], MICRO_BYTES, n);
            CHECK(cudaMemcpyAsync(dev_micro[b], micro[b], MICRO_BYTES, cudaMemcpyHostToDevice, copy)); /* @micro */
            CHECK(cudaEventRecord(uploaded[b], copy));
            CHECK(cudaStreamWaitEvent(compute, uploaded[b], 0));
            ex_kernel_launch(&k, compute); /* forward + backward, accumulating */
            CHECK(cudaEventRecord(consumed[b], compute));
        }
        ex_kernel_launch(&k, compute); /* optimizer */
        CHECK(cudaMemsetAsync(dev_grad, 0, GRAD_BYTES, compute));
        if (opt % 25 == 24) {
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof(float), cudaMemcpyDeviceToHost, compute)); /* @loss */
            CHECK(cudaEventRecord(loss_ready, compute));
            CHECK(cudaEventSynchronize(loss_ready));
            printf("step %u loss %.3f\n", opt + 1, *loss);
        }
    }
    CHECK(cudaStreamSynchronize(compute));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(micro[i]));
        CHECK(cudaFree(dev_micro[i]));
        CHECK(cudaEventDestroy(uploaded[i]));
        CHECK(cudaEventDestroy(consumed[i]));
    }
    CHECK(cudaEventDestroy(loss_ready));
    CHECK(cudaFreeHost(loss));
    CHECK(cudaFree(dev_grad));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaStreamDestroy(copy));
    CHECK(cudaStreamDestroy(compute));
    ex_kernel_fini(&k);
    return 0;
}
