/* fp_async_ckpt.c: a training loop with asynchronous checkpointing, as
 * PyTorch's distributed checkpoint async_save and DeepSpeed's do it: every
 * 40 steps the weights (16 MiB) are staged into a pinned buffer by a
 * download on a side stream that waits on an event of the compute stream,
 * and a writer thread waits for the staging to complete and writes the file,
 * while training goes on. A new snapshot waits for the previous write to
 * finish. Batches come from a pinned double buffer; the loss is accumulated
 * on the device and read every 20 steps. Everything is freed at exit.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=250us
 * TRUTH: none
 * (one read per 20 steps and one snapshot per 40 are the "every N steps" the
 * rules ask for; the snapshot is a pinned async download completed on
 * another thread) */
#include "fp_common.h"

#include <pthread.h>

#define STEPS 200
#define CKPT_EVERY 40
#define LOG_EVERY 20
#define BATCH_BYTES (2u << 20)
#define WEIGHT_BYTES (16u << 20)

static unsigned char *staging;
static cudaEvent_t staged;
static int pending;        /* a snapshot is staged or being written */
static int want_exit;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

/* The checkpoint writer: waits for the staging download, writes the file. */
static void *writer(void *arg)
{
    FILE *f = arg;
    for (;;) {
        pthread_mutex_lock(&mu);
        while (!pending && !want_exit)
            pthread_cond_wait(&cv, &mu);
        if (!pending) {
            pthread_mutex_unlock(&mu);
            return NULL;
        }
        pthread_mutex_unlock(&mu);
        CHECK(cudaEventSynchronize(staged));
        rewind(f);
        if (fwrite(staging, 1, WEIGHT_BYTES, f) != WEIGHT_BYTES)
            exit(1);
        fflush(f);
        pthread_mutex_lock(&mu);
        pending = 0;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t compute, side;
    CHECK(cudaStreamCreateWithFlags(&compute, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t step_done, batch_used[2];
    CHECK(cudaEventCreateWithFlags(&step_done, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&staged, cudaEventDisableTiming));
    unsigned char *h_batch[2];
    void *d_batch[2], *d_weights;
    float *d_loss, *h_loss;
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&h_batch[i], BATCH_BYTES));
        CHECK(cudaMalloc(&d_batch[i], BATCH_BYTES));
        CHECK(cudaEventCreateWithFlags(&batch_used[i], cudaEventDisableTiming));
    }
    CHECK(cudaMalloc(&d_weights, WEIGHT_BYTES));
    CHECK(cudaMalloc((void **)&d_loss, sizeof *d_loss));
    CHECK(cudaMallocHost((void **)&h_loss, sizeof *h_loss));
    CHECK(cudaMallocHost((void **)&staging, WEIGHT_BYTES));
    CHECK(cudaMemsetAsync(d_weights, 0, WEIGHT_BYTES, compute));   /* init */
    CHECK(cudaMemsetAsync(d_loss, 0, sizeof *d_loss, compute));
    FILE *f = tmpfile();
    if (!f)
        return 1;
    pthread_t t;
    if (pthread_create(&t, NULL, writer, f) != 0)
        return 1;

    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        CHECK(cudaEventSynchronize(batch_used[b]));
        fp_fill_batch(h_batch[b], BATCH_BYTES, step);
        fp_host_work_us(200);                                /* augment */
        CHECK(cudaMemcpyAsync(d_batch[b], h_batch[b], BATCH_BYTES, cudaMemcpyHostToDevice, compute)); /* @batch */
        CHECK(cudaEventRecord(batch_used[b], compute));
        for (int l = 0; l < 4; l++)
            ex_kernel_launch(&k, compute);                   /* forward, backward, step */
        if (step % CKPT_EVERY == CKPT_EVERY - 1) {
            pthread_mutex_lock(&mu);
            while (pending)
                pthread_cond_wait(&cv, &mu);
            pthread_mutex_unlock(&mu);
            CHECK(cudaEventRecord(step_done, compute));
            CHECK(cudaStreamWaitEvent(side, step_done, 0));
            CHECK(cudaMemcpyAsync(staging, d_weights, WEIGHT_BYTES, cudaMemcpyDeviceToHost, side)); /* @stage */
            CHECK(cudaEventRecord(staged, side));
            pthread_mutex_lock(&mu);
            pending = 1;
            pthread_cond_broadcast(&cv);
            pthread_mutex_unlock(&mu);
        }
        if (step % LOG_EVERY == LOG_EVERY - 1) {
            CHECK(cudaMemcpyAsync(h_loss, d_loss, sizeof *h_loss, cudaMemcpyDeviceToHost, compute)); /* @loss */
            CHECK(cudaStreamSynchronize(compute));
            printf("step %u loss %.4f\n", step + 1, (double)*h_loss);
            CHECK(cudaMemsetAsync(d_loss, 0, sizeof *d_loss, compute));
        }
    }
    pthread_mutex_lock(&mu);
    want_exit = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(t, NULL);
    fclose(f);
    CHECK(cudaStreamSynchronize(compute));
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(h_batch[i]));
        CHECK(cudaFree(d_batch[i]));
        CHECK(cudaEventDestroy(batch_used[i]));
    }
    CHECK(cudaFree(d_weights));
    CHECK(cudaFree(d_loss));
    CHECK(cudaFreeHost(h_loss));
    CHECK(cudaFreeHost(staging));
    CHECK(cudaEventDestroy(step_done));
    CHECK(cudaEventDestroy(staged));
    CHECK(cudaStreamDestroy(compute));
    CHECK(cudaStreamDestroy(side));
    ex_kernel_fini(&k);
    return 0;
}
