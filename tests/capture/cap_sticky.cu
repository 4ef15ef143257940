/* cap_sticky.cu: the sticky error state after a faulting kernel (run with
 * XFERPROF_SIM_FAULT=launch:1): every later call fails with
 * cudaErrorIllegalAddress and cudaGetLastError does not clear it.  Compared
 * byte for byte with and without the preload by test_transparency.py. */
#include <cuda_runtime.h>
#include <stdio.h>

__global__ void touch(int *p)
{
    p[threadIdx.x] = 1;
}

static void say(const char *what, cudaError_t rc)
{
    cudaError_t peek = cudaPeekAtLastError();
    cudaError_t last = cudaGetLastError();
    cudaError_t after = cudaGetLastError();
    printf("%-24s rc=%d (%s) peek=%d last=%d after=%d\n", what, (int)rc, cudaGetErrorName(rc),
           (int)peek, (int)last, (int)after);
}

int main()
{
    int *dev = NULL;
    static int host[64];
    say("cudaMalloc", cudaMalloc((void **)&dev, sizeof host));
    touch<<<1, 64>>>(dev);
    say("launch", cudaGetLastError());
    say("cudaDeviceSynchronize", cudaDeviceSynchronize());
    say("cudaMemcpy", cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    say("cudaStreamSynchronize", cudaStreamSynchronize(0));
    void *more = NULL;
    say("cudaMalloc again", cudaMalloc(&more, 256));
    say("cudaFree", cudaFree(dev));
    fflush(stdout);
    return 3;
}
