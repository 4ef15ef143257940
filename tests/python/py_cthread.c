/* py_cthread.c: a copy from a thread that has no Python state (started in C, called through ctypes). */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

/* Called through ctypes (the only users): exported, declared here. */
#define PY_API __attribute__((visibility("default")))
PY_API int py_cthread_copy(void *dst, const void *src, size_t n);
PY_API void py_cthread_copy_at_exit(void *dst, size_t n);

struct job {
    void *dst;
    const void *src;
    size_t n;
    int rc;
};

static void *run(void *arg)
{
    struct job *j = arg;
    j->rc = (int)cudaMemcpy(j->dst, j->src, j->n, cudaMemcpyHostToDevice);
    return NULL;
}

/* Copies n bytes host to device from a new C thread; the copy's status. */
int py_cthread_copy(void *dst, const void *src, size_t n)
{
    struct job j = {dst, src, n, -1};
    pthread_t t;
    if (pthread_create(&t, NULL, run, &j) != 0)
        return -1;
    pthread_join(t, NULL);
    return j.rc;
}

static void *exit_dst;
static size_t exit_n;
static char exit_src[4096];

static void copy_at_exit(void)
{
    cudaMemcpy(exit_dst, exit_src, exit_n, cudaMemcpyHostToDevice);
}

/* Registers a copy of n bytes (at most 4096) to dst for when the process
 * exits: after the interpreter has finalized, as a C++ library's static
 * destructors free and copy (PyTorch's caching allocator). */
void py_cthread_copy_at_exit(void *dst, size_t n)
{
    exit_dst = dst;
    exit_n = n < sizeof exit_src ? n : sizeof exit_src;
    atexit(copy_at_exit);
}
