/* Thread safety: 8 threads allocate, copy asynchronously on their own streams, verify and free, 200 times each; no data crosses between threads and the memory accounting balances.  And threads' cudaMemcpy from pageable memory into one buffer are ordered by the legacy stream, never interleaved. */
#include "xpt_check.h"

#include <pthread.h>

#define THREADS 8
#define ITERS 200
#define MAXSZ (64u << 10)

static pthread_barrier_t start;

static void *worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, id % 2 ? cudaStreamNonBlocking : cudaStreamDefault));
    unsigned char *pinned_src = NULL, *pinned_dst = NULL;
    CHECK_OK(cudaMallocHost((void **)&pinned_src, MAXSZ));
    CHECK_OK(cudaMallocHost((void **)&pinned_dst, MAXSZ));
    unsigned char *pageable_src = malloc(MAXSZ), *pageable_dst = malloc(MAXSZ);
    CHECK(pageable_src && pageable_dst);

    pthread_barrier_wait(&start);
    for (unsigned it = 0; it < ITERS; it++) {
        /* Sizes vary so allocations of different threads interleave in the
         * allocator; the pattern is unique to (thread, iteration). */
        size_t sz = 4096u + ((it * 7919u + id * 104729u) % (MAXSZ - 4096u));
        unsigned seed = id * 1000u + it;
        int use_pinned = (it + id) % 2;
        unsigned char *src = use_pinned ? pinned_src : pageable_src;
        unsigned char *dst = use_pinned ? pinned_dst : pageable_dst;

        void *d = NULL, *d2 = NULL;
        CHECK_OK(cudaMalloc(&d, sz));
        CHECK_OK(cudaMalloc(&d2, sz));
        xpt_fill(src, sz, seed);
        memset(dst, 0, sz);
        CHECK_OK(cudaMemcpyAsync(d, src, sz, cudaMemcpyHostToDevice, s));
        CHECK_OK(cudaMemcpyAsync(d2, d, sz, cudaMemcpyDeviceToDevice, s));
        CHECK_OK(cudaMemcpyAsync(dst, d2, sz, cudaMemcpyDeviceToHost, s));
        CHECK_OK(cudaStreamSynchronize(s));
        size_t at = xpt_find_mismatch(dst, sz, seed);
        CHECK_MSG(at == sz, "thread %u iteration %u (%zu bytes, %s): byte %zu is 0x%02x, "
                  "expected 0x%02x", id, it, sz, use_pinned ? "pinned" : "pageable", at,
                  dst[at], xpt_pattern(at, seed));
        CHECK_OK(cudaFree(d));
        CHECK_OK(cudaFree(d2));
    }
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFreeHost(pinned_src));
    CHECK_OK(cudaFreeHost(pinned_dst));
    free(pageable_src);
    free(pageable_dst);
    return NULL;
}

/* Synchronous pageable uploads into one device buffer from every thread:
 * CUDA orders them in the legacy default stream, so the buffer ends up
 * holding one thread's bytes whole, never a mix (ThreadSanitizer reports
 * the simulator writing device memory outside the stream's order). */
#define SHARED_SZ (256u << 10)
#define SHARED_ITERS 50
static void *shared_dev;

static void *shared_worker(void *arg)
{
    unsigned id = (unsigned)(uintptr_t)arg;
    unsigned char *src = malloc(SHARED_SZ);
    CHECK(src);
    xpt_fill(src, SHARED_SZ, 7000u + id);
    pthread_barrier_wait(&start);
    for (unsigned it = 0; it < SHARED_ITERS; it++)
        CHECK_OK(cudaMemcpy(shared_dev, src, SHARED_SZ, cudaMemcpyHostToDevice));
    free(src);
    return NULL;
}

static void shared_buffer(void)
{
    CHECK_OK(cudaMalloc(&shared_dev, SHARED_SZ));
    CHECK(pthread_barrier_init(&start, NULL, THREADS) == 0);
    pthread_t t[THREADS];
    for (unsigned i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, shared_worker, (void *)(uintptr_t)i) == 0);
    for (unsigned i = 0; i < THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(pthread_barrier_destroy(&start) == 0);
    unsigned char *back = malloc(SHARED_SZ);
    CHECK(back);
    CHECK_OK(cudaMemcpy(back, shared_dev, SHARED_SZ, cudaMemcpyDeviceToHost));
    unsigned i = 0;
    while (i < THREADS && xpt_find_mismatch(back, SHARED_SZ, 7000u + i) != SHARED_SZ)
        i++;
    CHECK_MSG(i < THREADS, "the shared buffer holds no single thread's bytes");
    free(back);
    CHECK_OK(cudaFree(shared_dev));
}

int main(void)
{
    CHECK_OK(cudaFree(NULL));   /* create the context before measuring */
    size_t free0 = 0, total = 0;
    CHECK_OK(cudaMemGetInfo(&free0, &total));

    CHECK(pthread_barrier_init(&start, NULL, THREADS) == 0);
    pthread_t t[THREADS];
    for (unsigned i = 0; i < THREADS; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(uintptr_t)i) == 0);
    for (unsigned i = 0; i < THREADS; i++)
        CHECK(pthread_join(t[i], NULL) == 0);
    CHECK(pthread_barrier_destroy(&start) == 0);
    shared_buffer();

    CHECK_OK(cudaDeviceSynchronize());
    size_t free1 = 0;
    CHECK_OK(cudaMemGetInfo(&free1, &total));
    CHECK_MSG(free1 == free0, "free memory %zu after all threads freed everything, %zu before",
              free1, free0);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
