/* fp_registered_ring.c: a data pipeline done right with memory it did not
 * allocate itself. A loader thread decodes batches into a ring of four
 * buffers that came from malloc (a decoding library's own buffers) and were
 * page-locked once with cudaHostRegister; the training thread uploads each on
 * a copy stream, the compute stream waits on an event, and a buffer is handed
 * back to the loader once its upload has completed (event). The loss is
 * accumulated on the device and read every 25 steps. At exit the buffers are
 * unregistered and freed.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=300us
 * TRUTH: none */
#include "fp_common.h"

#include <pthread.h>
#include <stdlib.h>

#define STEPS 100
#define RING 4
#define BATCH_BYTES (4u << 20)

static unsigned char *ring[RING];
static int filled[RING];   /* step number + 1 once decoded, 0 when free */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *loader(void *arg)
{
    (void)arg;
    for (unsigned step = 0; step < STEPS; step++) {
        int slot = step % RING;
        pthread_mutex_lock(&mu);
        while (filled[slot])
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        fp_fill_batch(ring[slot], BATCH_BYTES, step);   /* decode */
        pthread_mutex_lock(&mu);
        filled[slot] = (int)step + 1;
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
    void *dev[RING];
    cudaEvent_t uploaded[RING];
    for (int i = 0; i < RING; i++) {
        ring[i] = malloc(BATCH_BYTES);
        if (!ring[i])
            return 1;
        CHECK(cudaHostRegister(ring[i], BATCH_BYTES, cudaHostRegisterDefault));
        CHECK(cudaMalloc(&dev[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&uploaded[i], cudaEventDisableTiming));
    }
    float *dev_loss, loss = 0;
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    CHECK(cudaMemsetAsync(dev_loss, 0, sizeof *dev_loss, compute));
    pthread_t t;
    pthread_create(&t, NULL, loader, NULL);
    for (unsigned step = 0; step < STEPS; step++) {
        int slot = step % RING;
        pthread_mutex_lock(&mu);
        while (filled[slot] != (int)step + 1)
            pthread_cond_wait(&cv, &mu);
        pthread_mutex_unlock(&mu);
        CHECK(cudaMemcpyAsync(dev[slot], ring[slot], BATCH_BYTES, cudaMemcpyHostToDevice, copy)); /* @upload */
        CHECK(cudaEventRecord(uploaded[slot], copy));
        CHECK(cudaStreamWaitEvent(compute, uploaded[slot], 0));
        for (int l = 0; l < 3; l++)
            ex_kernel_launch(&k, compute);
        /* The loader may refill the slot once its upload is done. */
        if (step >= RING - 1) {
            int old = (step + 1) % RING;
            CHECK(cudaEventSynchronize(uploaded[old]));
            pthread_mutex_lock(&mu);
            filled[old] = 0;
            pthread_cond_broadcast(&cv);
            pthread_mutex_unlock(&mu);
        }
        if (step % 25 == 24) {
            CHECK(cudaMemcpyAsync(&loss, dev_loss, sizeof loss, cudaMemcpyDeviceToHost, compute)); /* @loss */
            CHECK(cudaStreamSynchronize(compute));
            printf("step %u loss %.3f\n", step + 1, (double)loss);
        }
    }
    pthread_join(t, NULL);
    CHECK(cudaDeviceSynchronize());
    for (int i = 0; i < RING; i++) {
        CHECK(cudaHostUnregister(ring[i]));
        free(ring[i]);
        CHECK(cudaFree(dev[i]));
        CHECK(cudaEventDestroy(uploaded[i]));
    }
    CHECK(cudaFree(dev_loss));
    CHECK(cudaStreamDestroy(copy));
    CHECK(cudaStreamDestroy(compute));
    ex_kernel_fini(&k);
    return 0;
}
