/* fp_loader_pageable.c: a data loader thread that produces batches in ordinary
 * malloc'd memory, and a main loop that uploads each with cudaMemcpyAsync as if
 * it were asynchronous. From pageable memory the runtime stages the bytes
 * before the call returns: the loop waits for every upload.
 *
 * TRUTH: async-pageable @ upload
 * (the same copies must not also be reported by sync-in-loop or
 * low-bandwidth: one finding per copy problem) */
#include "fp_common.h"

#include <pthread.h>
#include <stdlib.h>

#define STEPS 60
#define QUEUE 4
#define BATCH_BYTES (4u << 20)

static unsigned char *queue[QUEUE];
static unsigned head, tail;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;

static void *loader(void *arg)
{
    (void)arg;
    for (unsigned step = 0; step < STEPS; step++) {
        unsigned char *b = malloc(BATCH_BYTES);
        fp_fill_batch(b, BATCH_BYTES, step);
        pthread_mutex_lock(&mu);
        while (tail - head == QUEUE)
            pthread_cond_wait(&cv, &mu);
        queue[tail++ % QUEUE] = b;
        pthread_cond_broadcast(&cv);
        pthread_mutex_unlock(&mu);
    }
    return NULL;
}

static unsigned char *next_batch(void)
{
    pthread_mutex_lock(&mu);
    while (tail == head)
        pthread_cond_wait(&cv, &mu);
    unsigned char *b = queue[head++ % QUEUE];
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    return b;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    void *dev_batch;
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    pthread_t t;
    pthread_create(&t, NULL, loader, NULL);
    for (unsigned step = 0; step < STEPS; step++) {
        unsigned char *b = next_batch();
        CHECK(cudaMemcpyAsync(dev_batch, b, BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @upload */
        ex_kernel_launch(&k, s);
        free(b);
        fp_host_work_us(500);
    }
    pthread_join(t, NULL);
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaFree(dev_batch));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
