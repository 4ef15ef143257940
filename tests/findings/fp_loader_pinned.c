/* fp_loader_pinned.c: a training loop fed by a data loader thread, done right.
 * The loader fills a ring of pinned host batches (cudaMallocHost) and hands
 * them over through a mutex and condition variables; the main thread uploads
 * each batch with cudaMemcpyAsync on a copy stream, records an event, makes the
 * compute stream wait for it, launches the step and frees the slot when the
 * copy's event has completed. The loss is read back every 25 steps only.
 *
 * TRUTH: none
 * (nothing blocks per step, no bytes repeat, every allocation is freed) */
#include "fp_common.h"

#include <pthread.h>

#define STEPS 100
#define SLOTS 3
#define BATCH_BYTES (2u << 20)

static unsigned char *ring[SLOTS];
static int filled[SLOTS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *loader(void *arg)
{
    (void)arg;
    for (unsigned step = 0; step < STEPS; step++) {
        int slot = step % SLOTS;
        pthread_mutex_lock(&mu);
        while (filled[slot])
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        fp_fill_batch(ring[slot], BATCH_BYTES, step);
        pthread_mutex_lock(&mu);
        filled[slot] = 1;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t copy, compute;
    CHECK(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    cudaEvent_t copied[SLOTS];
    void *dev_batch[SLOTS], *dev_loss;
    for (int i = 0; i < SLOTS; i++) {
        CHECK(cudaMallocHost((void **)&ring[i], BATCH_BYTES));
        CHECK(cudaMalloc(&dev_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&copied[i], cudaEventDisableTiming));
    }
    CHECK(cudaMalloc(&dev_loss, sizeof(float)));
    float *loss;
    CHECK(cudaMallocHost((void **)&loss, sizeof(float)));
    cudaEvent_t loss_ready;
    CHECK(cudaEventCreateWithFlags(&loss_ready, cudaEventDisableTiming));

    pthread_t t;
    pthread_create(&t, NULL, loader, NULL);
    for (unsigned step = 0; step < STEPS; step++) {
        int slot = step % SLOTS;
        pthread_mutex_lock(&mu);
        while (!filled[slot])
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        CHECK(cudaMemcpyAsync(dev_batch[slot], ring[slot], BATCH_BYTES, cudaMemcpyHostToDevice, copy)); /* @upload */
        CHECK(cudaEventRecord(copied[slot], copy));
        CHECK(cudaStreamWaitEvent(compute, copied[slot], 0));
        ex_kernel_launch(&k, compute);
        CHECK(cudaEventSynchronize(copied[slot]));
        pthread_mutex_lock(&mu);
        filled[slot] = 0;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
        if (step % 25 == 24) {
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof(float), cudaMemcpyDeviceToHost, compute)); /* @loss */
            CHECK(cudaEventRecord(loss_ready, compute));
            CHECK(cudaEventSynchronize(loss_ready));
            printf("step %u loss %.3f\n", step + 1, *loss);
        }
        fp_host_work_us(300);
    }
    pthread_join(t, NULL);
    CHECK(cudaStreamSynchronize(compute));
    for (int i = 0; i < SLOTS; i++) {
        CHECK(cudaFreeHost(ring[i]));
        CHECK(cudaFree(dev_batch[i]));
        CHECK(cudaEventDestroy(copied[i]));
    }
    CHECK(cudaFreeHost(loss));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaEventDestroy(loss_ready));
    CHECK(cudaStreamDestroy(copy));
    CHECK(cudaStreamDestroy(compute));
    ex_kernel_fini(&k);
    return 0;
}
