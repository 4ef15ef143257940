/* The error API: names and strings as NVIDIA's runtime spells them, peek versus get, and last errors kept per thread. */
#include "xpt_check.h"

#include <pthread.h>

#define CHECK_STR(got, want)                                                   \
    do {                                                                       \
        const char *xpt_s_ = (got);                                            \
        CHECK_MSG(xpt_s_ != NULL && strcmp(xpt_s_, (want)) == 0,               \
                  "%s is \"%s\", expected \"%s\"", #got,                        \
                  xpt_s_ ? xpt_s_ : "(null)", (want));                          \
    } while (0)

static void names_and_strings(void)
{
    CHECK_STR(cudaGetErrorName(cudaSuccess), "cudaSuccess");
    CHECK_STR(cudaGetErrorName(cudaErrorMemoryAllocation), "cudaErrorMemoryAllocation");
    CHECK_STR(cudaGetErrorName(cudaErrorInvalidValue), "cudaErrorInvalidValue");
    CHECK_STR(cudaGetErrorName(cudaErrorInvalidDevice), "cudaErrorInvalidDevice");
    CHECK_STR(cudaGetErrorName(cudaErrorNotReady), "cudaErrorNotReady");
    CHECK_STR(cudaGetErrorName(cudaErrorIllegalAddress), "cudaErrorIllegalAddress");
    CHECK_STR(cudaGetErrorName(cudaErrorInsufficientDriver), "cudaErrorInsufficientDriver");
    CHECK_STR(cudaGetErrorName(cudaErrorInvalidResourceHandle), "cudaErrorInvalidResourceHandle");
    CHECK_STR(cudaGetErrorName(cudaErrorHostMemoryAlreadyRegistered),
              "cudaErrorHostMemoryAlreadyRegistered");

    CHECK_STR(cudaGetErrorString(cudaSuccess), "no error");
    CHECK_STR(cudaGetErrorString(cudaErrorMemoryAllocation), "out of memory");
    CHECK_STR(cudaGetErrorString(cudaErrorInvalidValue), "invalid argument");
    CHECK_STR(cudaGetErrorString(cudaErrorInvalidDevice), "invalid device ordinal");
    CHECK_STR(cudaGetErrorString(cudaErrorNotReady), "device not ready");
    CHECK_STR(cudaGetErrorString(cudaErrorIllegalAddress),
              "an illegal memory access was encountered");
    CHECK_STR(cudaGetErrorString(cudaErrorInsufficientDriver),
              "CUDA driver version is insufficient for CUDA runtime version");
    CHECK_STR(cudaGetErrorString(cudaErrorInvalidResourceHandle), "invalid resource handle");
    CHECK_STR(cudaGetErrorString(cudaErrorInvalidMemcpyDirection),
              "invalid copy direction for memcpy");
    CHECK_STR(cudaGetErrorString(cudaErrorInvalidConfiguration), "invalid configuration argument");
    CHECK_STR(cudaGetErrorString(cudaErrorHostMemoryNotRegistered),
              "pointer does not correspond to a registered memory region");

    /* Unknown codes get a fixed text from both functions. */
    CHECK_STR(cudaGetErrorString((cudaError_t)12345), "unrecognized error code");
    CHECK_STR(cudaGetErrorName((cudaError_t)12345), "unrecognized error code");
    CHECK_STR(cudaGetErrorString((cudaError_t)-1), "unrecognized error code");

    /* Asking about errors is not an error. */
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
}

static void peek_and_get(void)
{
    CHECK_CUDA(cudaPeekAtLastError(), cudaSuccess);
    CHECK_CUDA(cudaSetDevice(9999), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    /* A later successful call does not clear it. */
    void *p = NULL;
    CHECK_OK(cudaMalloc(&p, 64));
    CHECK_CUDA(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    CHECK_CUDA(cudaPeekAtLastError(), cudaSuccess);

    /* A later error replaces an earlier one. */
    CHECK_CUDA(cudaSetDevice(9999), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaFree((void *)&p), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    CHECK_OK(cudaFree(p));
}

/* Per-thread last errors: an error made in thread A is seen by A only. */
static pthread_barrier_t barrier;

static void *thread_a(void *arg)
{
    (void)arg;
    CHECK_CUDA(cudaSetDevice(9999), cudaErrorInvalidDevice);
    pthread_barrier_wait(&barrier);   /* 1: A has an error */
    pthread_barrier_wait(&barrier);   /* 2: B has looked */
    CHECK_CUDA(cudaPeekAtLastError(), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidDevice);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return NULL;
}

static void *thread_b(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&barrier);   /* 1 */
    CHECK_CUDA(cudaPeekAtLastError(), cudaSuccess);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    /* B's own error does not reach A either. */
    void *p = NULL;
    CHECK_CUDA(cudaMalloc(&p, (size_t)1 << 62), cudaErrorMemoryAllocation);
    CHECK_CUDA(cudaPeekAtLastError(), cudaErrorMemoryAllocation);
    pthread_barrier_wait(&barrier);   /* 2 */
    CHECK_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
    return NULL;
}

static void per_thread(void)
{
    CHECK(pthread_barrier_init(&barrier, NULL, 2) == 0);
    pthread_t ta, tb;
    CHECK(pthread_create(&ta, NULL, thread_a, NULL) == 0);
    CHECK(pthread_create(&tb, NULL, thread_b, NULL) == 0);
    CHECK(pthread_join(ta, NULL) == 0);
    CHECK(pthread_join(tb, NULL) == 0);
    CHECK(pthread_barrier_destroy(&barrier) == 0);
    /* Neither thread's error reached the main thread. */
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
}

int main(void)
{
    names_and_strings();
    peek_and_get();
    per_thread();
    return 0;
}
