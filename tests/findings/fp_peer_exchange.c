/* fp_peer_exchange.c: data-parallel training on two GPUs driven from one
 * thread, done right. Each device gets its own pinned double-buffered batch
 * upload on its own stream; after backward, device 1 sends its 4 MiB of
 * gradients to device 0 with cudaMemcpyPeerAsync (peer access enabled), device
 * 0 reduces them and sends the result back the same way; the streams are
 * ordered with events, never with a host wait in the step. The loss is read
 * every 20 steps. Everything freed at exit.
 *
 * ENV: XFERPROF_SIM_DEVICES=2
 * ENV: XFERPROF_SIM_KERNEL_TIME=250us
 * TRUTH: none */
#include "fp_common.h"

#define STEPS 60
#define BATCH_BYTES (2u << 20)
#define GRAD_BYTES (4u << 20)

int main(void)
{
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) {
        fprintf(stderr, "needs two devices\n");
        return 1;
    }
    ex_kernel k[2];
    cudaStream_t s[2];
    unsigned char *host[2][2];
    void *dev[2][2], *grad[2], *peer_in[2];
    cudaEvent_t used[2][2], grads_ready[2], reduced;
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        int can = 0;
        CHECK(cudaDeviceCanAccessPeer(&can, d, 1 - d));
        if (can)
            CHECK(cudaDeviceEnablePeerAccess(1 - d, 0));
        ex_kernel_init(&k[d]);
        CHECK(cudaStreamCreateWithFlags(&s[d], cudaStreamNonBlocking));
        for (int i = 0; i < 2; i++) {
            CHECK(cudaMallocHost((void **)&host[d][i], BATCH_BYTES));
            CHECK(cudaMalloc(&dev[d][i], BATCH_BYTES));
            CHECK(cudaEventCreateWithFlags(&used[d][i], cudaEventDisableTiming));
        }
        CHECK(cudaMalloc(&grad[d], GRAD_BYTES));
        CHECK(cudaMalloc(&peer_in[d], GRAD_BYTES));
        CHECK(cudaEventCreateWithFlags(&grads_ready[d], cudaEventDisableTiming));
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventCreateWithFlags(&reduced, cudaEventDisableTiming));
    float *dev_loss, *loss;
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    CHECK(cudaMallocHost((void **)&loss, sizeof *loss));
    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        for (int d = 0; d < 2; d++) {
            CHECK(cudaSetDevice(d));
            CHECK(cudaEventSynchronize(used[d][b]));
            fp_fill_batch(host[d][b], BATCH_BYTES, step * 2 + d);
            CHECK(cudaMemcpyAsync(dev[d][b], host[d][b], BATCH_BYTES, cudaMemcpyHostToDevice, s[d])); /* @batch */
            CHECK(cudaEventRecord(used[d][b], s[d]));
            for (int l = 0; l < 3; l++)
                ex_kernel_launch(&k[d], s[d]);              /* forward, backward */
            CHECK(cudaEventRecord(grads_ready[d], s[d]));
        }
        /* All-reduce through device 0. */
        CHECK(cudaSetDevice(0));
        CHECK(cudaStreamWaitEvent(s[0], grads_ready[1], 0));
        CHECK(cudaMemcpyPeerAsync(peer_in[0], 0, grad[1], 1, GRAD_BYTES, s[0])); /* @to0 */
        ex_kernel_launch(&k[0], s[0]);                      /* reduce */
        CHECK(cudaEventRecord(reduced, s[0]));
        CHECK(cudaSetDevice(1));
        CHECK(cudaStreamWaitEvent(s[1], reduced, 0));
        CHECK(cudaMemcpyPeerAsync(grad[1], 1, grad[0], 0, GRAD_BYTES, s[1])); /* @to1 */
        for (int d = 0; d < 2; d++) {
            CHECK(cudaSetDevice(d));
            ex_kernel_launch(&k[d], s[d]);                  /* optimizer step */
        }
        if (step % 20 == 19) {
            CHECK(cudaSetDevice(0));
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof *loss, cudaMemcpyDeviceToHost, s[0])); /* @loss */
            CHECK(cudaStreamSynchronize(s[0]));
            printf("step %u loss %.3f\n", step + 1, (double)*loss);
        }
    }
    for (int d = 0; d < 2; d++) {
        CHECK(cudaSetDevice(d));
        CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < 2; i++) {
            CHECK(cudaFreeHost(host[d][i]));
            CHECK(cudaFree(dev[d][i]));
            CHECK(cudaEventDestroy(used[d][i]));
        }
        CHECK(cudaFree(grad[d]));
        CHECK(cudaFree(peer_in[d]));
        CHECK(cudaEventDestroy(grads_ready[d]));
        CHECK(cudaStreamDestroy(s[d]));
        ex_kernel_fini(&k[d]);
    }
    CHECK(cudaSetDevice(0));
    CHECK(cudaEventDestroy(reduced));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaFreeHost(loss));
    return 0;
}
