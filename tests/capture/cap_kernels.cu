// cap_kernels.cu: symbol copies and kernel launches as nvcc emits them (run
// with XFERPROF_SIM_DEVICES=2).  Built twice: plain, and with
// --default-stream per-thread (the _ptds/_ptsz entry points).  Prints the
// addresses test_kernels.py checks the copies against, and "rc" lines (return
// codes and last-error state) that must read the same with and without the
// profiler.
#include "cap_util.h"

__device__ int var[1024];
__constant__ int cst[16];

__global__ void touch(int *p)
{
    // Never executed by the simulator; it only counts and times launches.
    p[threadIdx.x] = var[threadIdx.x] + cst[threadIdx.x % 16];
}

static void rc(const char *what, cudaError_t e)
{
    cudaError_t last = cudaGetLastError();
    printf("rc %s %d last %d\n", what, (int)e, (int)last);
}

static int host[1024], back[1024];

int main()
{
    int *dev = NULL, *dev1 = NULL;
    void *addr = NULL, *caddr = NULL;
    cudaStream_t stream = NULL;
    for (int i = 0; i < 1024; i++)
        host[i] = i * 7 + 1;
    CHECK_OK(cudaMalloc((void **)&dev, sizeof host));
    CHECK_OK(cudaStreamCreate(&stream));
    CHECK_OK(cudaGetSymbolAddress(&addr, var));
    CHECK_OK(cudaGetSymbolAddress(&caddr, cst));
    CAP_PRINT("var", addr);
    CAP_PRINT("var_shadow", (const void *)var);
    CAP_PRINT("cst", caddr);
    CAP_PRINT("host", host);
    CAP_PRINT("back", back);
    CAP_PRINT("dev", dev);
    CAP_PRINT("stream", stream);
    fflush(stdout);

    // Symbol copies: the device side is the variable's device address.
    rc("to", cudaMemcpyToSymbol(var, host, sizeof host));                          // 1
    rc("from", cudaMemcpyFromSymbol(back, var, sizeof back));                      // 2
    CHECK(memcmp(host, back, sizeof host) == 0);
    rc("to_offset", cudaMemcpyToSymbol(var, host + 16, 64, 128));                  // 3
    // A pageable upload returns once staged; under --default-stream
    // per-thread nothing orders its DMA before `stream`'s next one.
    CHECK_OK(cudaStreamSynchronize(cudaStreamPerThread));
    rc("to_async", cudaMemcpyToSymbolAsync(var, host, sizeof host, 0,
                                           cudaMemcpyHostToDevice, stream));       // 4
    rc("from_async", cudaMemcpyFromSymbolAsync(back, var, sizeof back, 0,
                                               cudaMemcpyDeviceToHost, stream));   // 5
    rc("sync", cudaStreamSynchronize(stream));
    rc("to_d2d", cudaMemcpyToSymbol(var, dev, 256, 0, cudaMemcpyDeviceToDevice));  // 6
    rc("to_default", cudaMemcpyToSymbol(var, host, sizeof host, 0, cudaMemcpyDefault)); // 7
    rc("to_const", cudaMemcpyToSymbol(cst, host, sizeof cst));                     // 8
    // Beyond the variable: refused, and the last error is the program's own.
    rc("to_beyond", cudaMemcpyToSymbol(var, host, 8, sizeof host));                // 9
    rc("after", cudaSuccess);

    // Kernels between copies: kernel_seq counts the launches on the device.
    rc("before", cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));      // 10
    touch<<<1, 32>>>(dev);
    rc("launch1", cudaSuccess);
    touch<<<1, 32>>>(dev);
    rc("launch2", cudaSuccess);
    rc("between", cudaMemcpy(back, dev, sizeof back, cudaMemcpyDeviceToHost));     // 11
    void *args[] = {&dev};
    rc("launch3", cudaLaunchKernel((const void *)touch, dim3(1), dim3(32), args, 0, 0));
    // Failed launches (too many threads per block): errors, not counted.
    touch<<<1, 2048>>>(dev);
    rc("bad_launch", cudaSuccess);
    rc("bad_launch_api", cudaLaunchKernel((const void *)touch, dim3(1), dim3(2048), args, 0, 0));
    rc("after_launch3", cudaMemcpy(dev, host, 4, cudaMemcpyHostToDevice));        // 12
    // Device 1 has a count of its own.
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaMalloc((void **)&dev1, sizeof host));
    CAP_PRINT("dev1", dev1);
    fflush(stdout);
    touch<<<1, 32>>>(dev1);
    rc("launch_dev1", cudaSuccess);
    rc("on_dev1", cudaMemcpy(dev1, host, 4, cudaMemcpyHostToDevice));             // 13
    CHECK_OK(cudaFree(dev1));
    CHECK_OK(cudaSetDevice(0));
    rc("on_dev0", cudaMemcpy(dev, host, 4, cudaMemcpyHostToDevice));              // 14
    rc("memset", cudaMemset(dev, 0, 16));
    rc("sync_all", cudaDeviceSynchronize());

    CHECK_OK(cudaStreamDestroy(stream));
    CHECK_OK(cudaFree(dev));
    return 0;
}
