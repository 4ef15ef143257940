/* sym_inline_c.c: a C function inlined at -O2 into its caller, for sym_names.cpp. */
#include <cuda_runtime_api.h>
#include <stdlib.h>

void c_step(void *dev, const void *host);

static inline __attribute__((always_inline)) void c_upload(void *dev, const void *host)
{
    if (cudaMemcpy(dev, host, 1024, cudaMemcpyHostToDevice) != cudaSuccess) /* SYM_C_UPLOAD */
        exit(2);
}

__attribute__((noinline)) void c_step(void *dev, const void *host)
{
    c_upload(dev, host); /* SYM_C_CALL */
}
