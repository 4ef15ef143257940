/* cap_v12user.c: a library built against CUDA 12's runtime (linked with
 * libcudart.so.12, so its calls bind to cudaMemcpy@libcudart.so.12) in a
 * program whose own runtime is CUDA 13's (which dlopen()s it, as a plugin):
 * the two runtimes of one process. */
#include <cuda_runtime_api.h>
#include <stddef.h>

__attribute__((visibility("default"))) int cap_v12_copy(void *dst, const void *src, size_t n);
__attribute__((visibility("default"))) int cap_v12_bad_copy_error(void *dst, const void *src);

/* A copy through the CUDA 12 runtime. */
int cap_v12_copy(void *dst, const void *src, size_t n)
{
    return (int)cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
}

/* A copy the runtime refuses (an unknown kind), then that runtime's own
 * last error: the refusal must have happened in this runtime, not in the
 * program's CUDA 13 one. */
int cap_v12_bad_copy_error(void *dst, const void *src)
{
    cudaError_t rc = cudaMemcpy(dst, src, 16, (enum cudaMemcpyKind)77);
    cudaError_t last = cudaGetLastError();
    return rc == last ? (int)last : -1;
}
