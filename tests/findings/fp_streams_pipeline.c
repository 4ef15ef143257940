/* fp_streams_pipeline.c: an inference-style pipeline over three streams: the
 * input of step i is uploaded on an upload stream, computed on a compute stream
 * that waits for its event, and the output downloaded on a download stream
 * that waits for the compute event, all from and into pinned buffers (three
 * slots). The host waits only for the output of step i-2 before reusing its
 * slot, so uploads, kernels and downloads overlap.
 *
 * TRUTH: none */
#include "fp_common.h"

#define STEPS 90
#define SLOTS 3
#define IN_BYTES (1u << 20)
#define OUT_BYTES (256u << 10)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t up, compute, down;
    CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    unsigned char *in[SLOTS], *out[SLOTS];
    void *dev_in[SLOTS], *dev_out[SLOTS];
    cudaEvent_t e_up[SLOTS], e_comp[SLOTS], e_down[SLOTS];
    for (int i = 0; i < SLOTS; i++) {
        CHECK(cudaMallocHost((void **)&in[i], IN_BYTES));
        CHECK(cudaMallocHost((void **)&out[i], OUT_BYTES));
        CHECK(cudaMalloc(&dev_in[i], IN_BYTES));
        CHECK(cudaMalloc(&dev_out[i], OUT_BYTES));
        CHECK(cudaEventCreateWithFlags(&e_up[i], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&e_comp[i], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&e_down[i], cudaEventDisableTiming));
    }
    unsigned long checksum = 0;
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % SLOTS;
        if (step >= SLOTS) {
            CHECK(cudaEventSynchronize(e_down[b]));
            checksum += out[b][0];
        }
        fp_fill_batch(in[b], IN_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_in[b], in[b], IN_BYTES, cudaMemcpyHostToDevice, up)); /* @input */
        CHECK(cudaEventRecord(e_up[b], up));
        CHECK(cudaStreamWaitEvent(compute, e_up[b], 0));
        ex_kernel_launch(&k, compute);
        CHECK(cudaMemsetAsync(dev_out[b], step & 0xff, OUT_BYTES, compute)); /* the step's output */
        CHECK(cudaEventRecord(e_comp[b], compute));
        CHECK(cudaStreamWaitEvent(down, e_comp[b], 0));
        CHECK(cudaMemcpyAsync(out[b], dev_out[b], OUT_BYTES, cudaMemcpyDeviceToHost, down)); /* @output */
        CHECK(cudaEventRecord(e_down[b], down));
        fp_host_work_us(200);
    }
    CHECK(cudaDeviceSynchronize());
    printf("checksum %lu\n", checksum);
    for (int i = 0; i < SLOTS; i++) {
        CHECK(cudaFreeHost(in[i]));
        CHECK(cudaFreeHost(out[i]));
        CHECK(cudaFree(dev_in[i]));
        CHECK(cudaFree(dev_out[i]));
        CHECK(cudaEventDestroy(e_up[i]));
        CHECK(cudaEventDestroy(e_comp[i]));
        CHECK(cudaEventDestroy(e_down[i]));
    }
    CHECK(cudaStreamDestroy(up));
    CHECK(cudaStreamDestroy(compute));
    CHECK(cudaStreamDestroy(down));
    ex_kernel_fini(&k);
    return 0;
}
