/* invalid_free.c: frees the device cannot honour: a double free (the second
 * cudaFree of the same pointer) and a free of a pointer cudaMalloc never
 * returned (here a host buffer).  Both fail with cudaErrorInvalidValue, which
 * programs that ignore cudaFree's result never notice; on real code they are
 * use-after-free and ownership bugs.
 *
 * xferprof report should say:
 *   invalid-free (error) at release_buffer: 1 failed free (the second call;
 *     the first one freed the buffer);
 *   invalid-free (error) at free_foreign: 1 failed free.
 * (No bytes: a free that fails frees nothing.) */
#include "example_util.h"

/* Each site reports its own failure: a plain `return cudaFree(p)` would be
 * compiled as a tail call, and the stack would then name the caller. */
static EX_SITE cudaError_t release_buffer(void *p)
{
    cudaError_t e = cudaFree(p);
    if (e != cudaSuccess)
        fprintf(stderr, "release_buffer(%p): %s\n", p, cudaGetErrorName(e));
    return e;
}

static EX_SITE cudaError_t free_foreign(void *p)
{
    cudaError_t e = cudaFree(p);
    if (e != cudaSuccess)
        fprintf(stderr, "free_foreign(%p): %s\n", p, cudaGetErrorName(e));
    return e;
}

int main(void)
{
    void *buf;
    CHECK(cudaMalloc(&buf, 1u << 20));
    CHECK(release_buffer(buf));
    cudaError_t again = release_buffer(buf); /* double free */
    char *host = malloc(4096);
    if (host == NULL)
        return 1;
    cudaError_t foreign = free_foreign(host); /* never a device allocation */
    free(host);
    (void)cudaGetLastError(); /* clears the error the failed frees left */
    printf("double free: %s; foreign free: %s\n", cudaGetErrorName(again),
           cudaGetErrorName(foreign));
    if (again == cudaSuccess || foreign == cudaSuccess)
        return 1; /* the platform must refuse both */
    ex_expect("invalid-free", "release_buffer", 1, -1, NULL);
    ex_expect("invalid-free", "free_foreign", 1, -1, NULL);
    return 0;
}
