/* fp_producer_uploads.c: a data loader thread that does its own uploads, and
 * a loss logger that never waits. The producer thread decodes each batch into
 * one of two pinned buffers, uploads it with cudaMemcpyAsync on its own
 * stream into one of two device buffers, and records an event; the training
 * thread makes its compute stream wait for that event (cudaStreamWaitEvent),
 * runs the step and records a "consumed" event that the producer waits for
 * before it reuses the slot (double buffering across threads). Each step the
 * training thread also copies the step's loss (4 bytes) asynchronously into a
 * pinned ring and records an event; it prints the losses whose events have
 * completed (cudaEventQuery), every 20 steps, without ever blocking on them.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=200us
 * TRUTH: none
 * (no copy blocks: the upload overlaps the previous step, the loss copies are
 * async from pinned memory into a ring read when ready; 240 loss copies of
 * 4 bytes cost microseconds of a half-second run: nothing worth packing) */
#include "fp_common.h"

#include <pthread.h>

#define STEPS 240
#define SLOTS 2
#define RING 32
#define BATCH_BYTES (2u << 20)

struct shared {
    unsigned char *host[SLOTS];
    void *dev[SLOTS];
    cudaEvent_t uploaded[SLOTS], consumed[SLOTS];
    unsigned produced; /* batches whose upload was issued */
    unsigned used;     /* batches whose step was issued */
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

static void *producer(void *arg)
{
    struct shared *sh = arg;
    cudaStream_t up;
    CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    for (unsigned n = 0; n < STEPS; n++) {
        int slot = n % SLOTS;
        pthread_mutex_lock(&sh->mu);
        while (n >= sh->used + SLOTS) /* the slot's previous batch is not issued yet */
            pthread_cond_wait(&sh->cv, &sh->mu);
        pthread_mutex_unlock(&sh->mu);
        if (n >= SLOTS)
            CHECK(cudaEventSynchronize(sh->consumed[slot])); /* its step has run */
        fp_host_work_us(250); /* decode and augment */
        fp_fill_batch(sh->host[slot], BATCH_BYTES, n);
        CHECK(cudaMemcpyAsync(sh->dev[slot], sh->host[slot], BATCH_BYTES, cudaMemcpyHostToDevice, up)); /* @upload */
        CHECK(cudaEventRecord(sh->uploaded[slot], up));
        pthread_mutex_lock(&sh->mu);
        sh->produced = n + 1;
        pthread_cond_broadcast(&sh->cv);
        pthread_mutex_unlock(&sh->mu);
    }
    CHECK(cudaStreamSynchronize(up));
    CHECK(cudaStreamDestroy(up));
    return NULL;
}

/* The losses read so far, in step order, and their running sum */
struct loss_log {
    unsigned logged;
    double sum;
};

/* Takes the losses of steps before `end` whose copies have completed, in
 * order, and prints their mean every 20; stops at the first still in flight. */
static void drain_losses(struct loss_log *lg, const float *ring, cudaEvent_t *ready, unsigned end)
{
    while (lg->logged < end && cudaEventQuery(ready[lg->logged % RING]) == cudaSuccess) {
        lg->sum += ring[lg->logged % RING];
        if (++lg->logged % 20 == 0) {
            printf("step %u mean loss %g\n", lg->logged, lg->sum / 20);
            lg->sum = 0.0;
        }
    }
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    struct shared sh = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
    for (int i = 0; i < SLOTS; i++) {
        CHECK(cudaMallocHost((void **)&sh.host[i], BATCH_BYTES));
        CHECK(cudaMalloc(&sh.dev[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&sh.uploaded[i], cudaEventDisableTiming));
        CHECK(cudaEventCreateWithFlags(&sh.consumed[i], cudaEventDisableTiming));
    }
    cudaStream_t compute;
    CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    float *dev_loss, *ring;
    cudaEvent_t ring_ready[RING];
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    CHECK(cudaMallocHost((void **)&ring, RING * sizeof *ring));
    for (int i = 0; i < RING; i++)
        CHECK(cudaEventCreateWithFlags(&ring_ready[i], cudaEventDisableTiming));
    pthread_t t;
    if (pthread_create(&t, NULL, producer, &sh) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1;
    }
    struct loss_log lg = {0};
    for (unsigned step = 0; step < STEPS; step++) {
        int slot = step % SLOTS;
        pthread_mutex_lock(&sh.mu);
        while (sh.produced <= step)
            pthread_cond_wait(&sh.cv, &sh.mu);
        pthread_mutex_unlock(&sh.mu);
        CHECK(cudaStreamWaitEvent(compute, sh.uploaded[slot], 0));
        ex_kernel_launch(&k, compute); /* forward */
        ex_kernel_launch(&k, compute); /* backward and update */
        CHECK(cudaEventRecord(sh.consumed[slot], compute));
        pthread_mutex_lock(&sh.mu);
        sh.used = step + 1;
        pthread_cond_broadcast(&sh.cv);
        pthread_mutex_unlock(&sh.mu);
        CHECK(cudaMemsetAsync(dev_loss, step & 0x3f, sizeof *dev_loss, compute));
        if (step - lg.logged >= RING) /* the ring is full: never at this pace */
            CHECK(cudaEventSynchronize(ring_ready[lg.logged % RING]));
        drain_losses(&lg, ring, ring_ready, step);
        CHECK(cudaMemcpyAsync(&ring[step % RING], dev_loss, sizeof *dev_loss, cudaMemcpyDeviceToHost, compute)); /* @loss_ring */
        CHECK(cudaEventRecord(ring_ready[step % RING], compute));
    }
    pthread_join(t, NULL);
    CHECK(cudaStreamSynchronize(compute));
    drain_losses(&lg, ring, ring_ready, STEPS);
    printf("logged %u losses\n", lg.logged);
    for (int i = 0; i < RING; i++)
        CHECK(cudaEventDestroy(ring_ready[i]));
    for (int i = 0; i < SLOTS; i++) {
        CHECK(cudaFreeHost(sh.host[i]));
        CHECK(cudaFree(sh.dev[i]));
        CHECK(cudaEventDestroy(sh.uploaded[i]));
        CHECK(cudaEventDestroy(sh.consumed[i]));
    }
    CHECK(cudaFreeHost(ring));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaStreamDestroy(compute));
    ex_kernel_fini(&k);
    return 0;
}
