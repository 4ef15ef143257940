/* cap_threads.c: 8 threads x 2000 copies, sizes distinct per thread, half
 * synchronous and half asynchronous on the thread's own stream.  Each thread
 * prints "thread T tid N copies C bytes B" for test_threads.py. */
#include "cap_util.h"

#include <pthread.h>

#define THREADS 8
#define COPIES 2000
#define MAXBYTES 65536

typedef struct {
    int index;
    long tid;
    unsigned long long bytes;
} worker_arg;

static pthread_barrier_t start_line;

static void *worker(void *p)
{
    worker_arg *a = p;
    a->tid = cap_tid();
    void *dev = NULL, *pinned = NULL;
    cudaStream_t s = NULL;
    CHECK_OK(cudaMalloc(&dev, MAXBYTES));
    CHECK_OK(cudaMallocHost(&pinned, MAXBYTES));
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    pthread_barrier_wait(&start_line);
    for (int i = 0; i < COPIES; i++) {
        /* Thread t's sizes lie in [t*4096 + 1, t*4096 + 4096]: distinct per thread. */
        size_t n = (size_t)a->index * 4096u + 1u + (size_t)((i * 37) % 4096);
        if (i % 2 == 0)
            CHECK_OK(cudaMemcpy(dev, pinned, n, cudaMemcpyHostToDevice));
        else
            CHECK_OK(cudaMemcpyAsync(pinned, dev, n, cudaMemcpyDeviceToHost, s));
        a->bytes += n;
    }
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFree(dev));
    return NULL;
}

int main(void)
{
    pthread_t t[THREADS];
    worker_arg args[THREADS];
    CHECK(pthread_barrier_init(&start_line, NULL, THREADS) == 0);
    for (int i = 0; i < THREADS; i++) {
        args[i] = (worker_arg){.index = i};
        CHECK(pthread_create(&t[i], NULL, worker, &args[i]) == 0);
    }
    for (int i = 0; i < THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    for (int i = 0; i < THREADS; i++)
        printf("thread %d tid %ld copies %d bytes %llu\n", i, args[i].tid, COPIES,
               args[i].bytes);
    return 0;
}
