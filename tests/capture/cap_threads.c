/* cap_threads.c: 8 threads x 2000 copies (or argv[1]), sizes distinct per thread, half
 * synchronous and half asynchronous on the thread's own stream.  Each thread
 * prints "thread T tid N copies C bytes B" for test_threads.py. */
#include "cap_util.h"

#include <pthread.h>

#define THREADS 8
#define MAXBYTES 65536

typedef struct {
    int index;
    long tid;
    unsigned long long bytes;
} worker_arg;

static pthread_barrier_t start_line;
static int copies = 2000;   /* per thread, even */

static void *worker(void *p)
{
    worker_arg *a = p;
    a->tid = cap_tid();
    void *dev = NULL, *pinned = NULL;
    cudaStream_t s = NULL;
    /* Uploads use the first half of each buffer, downloads the second: an
     * async download still running on the thread's own (non-blocking)
     * stream is not ordered before the next upload. */
    CHECK_OK(cudaMalloc(&dev, 2 * MAXBYTES));
    CHECK_OK(cudaMallocHost(&pinned, 2 * MAXBYTES));
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    pthread_barrier_wait(&start_line);
    for (int i = 0; i < copies; i++) {
        /* Thread t's sizes lie in [t*4096 + 1, t*4096 + 4096]: distinct per thread. */
        size_t n = (size_t)a->index * 4096u + 1u + (size_t)((i * 37) % 4096);
        if (i % 2 == 0)
            CHECK_OK(cudaMemcpy(dev, pinned, n, cudaMemcpyHostToDevice));
        else
            CHECK_OK(cudaMemcpyAsync((char *)pinned + MAXBYTES, (char *)dev + MAXBYTES, n,
                                      cudaMemcpyDeviceToHost, s));
        a->bytes += n;
    }
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFreeHost(pinned));
    CHECK_OK(cudaFree(dev));
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        copies = atoi(argv[1]);
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
        printf("thread %d tid %ld copies %d bytes %llu\n", i, args[i].tid, copies,
               args[i].bytes);
    return 0;
}
