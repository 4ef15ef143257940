/* cap_peer.c: two devices with peer access enabled both ways; copies between
 * their memory by address (cudaMemcpy with cudaMemcpyDefault, async on a
 * stream), by the peer API and by the driver (cuMemcpy).  Prints the
 * pointers on stderr (they differ from run to run) and only what does not
 * vary on stdout, so test_peer.py can compare stdout with and without the
 * profiler. */
#include "cap_util.h"

#include <cuda.h>
#include <dlfcn.h>

#define SAY(name, value) \
    fprintf(stderr, "%s 0x%llx\n", (name), (unsigned long long)(uintptr_t)(value))

enum { N = 1 << 16 };

int main(void)
{
    int can = 0;
    CHECK_OK(cudaDeviceCanAccessPeer(&can, 0, 1));
    printf("can access %d\n", can);
    void *a = NULL, *b = NULL;
    CHECK_OK(cudaSetDevice(1));
    CHECK_OK(cudaDeviceEnablePeerAccess(0, 0));
    CHECK_OK(cudaMalloc(&b, N));
    CHECK_OK(cudaSetDevice(0));
    CHECK_OK(cudaDeviceEnablePeerAccess(1, 0));
    printf("again %d\n", (int)cudaDeviceEnablePeerAccess(1, 0));
    printf("last error %d\n", (int)cudaGetLastError());
    CHECK_OK(cudaMalloc(&a, N));
    SAY("a", a);
    SAY("b", b);
    static unsigned char host[N];
    memset(host, 0x5c, sizeof host);
    CHECK_OK(cudaMemcpy(a, host, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(b, a, N, cudaMemcpyDefault));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    CHECK_OK(cudaMemcpyAsync(a, b, N / 2, cudaMemcpyDeviceToDevice, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaMemcpyPeer(b, 1, a, 0, N / 4));
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    CUresult (*copy)(CUdeviceptr, CUdeviceptr, size_t) =
        (CUresult (*)(CUdeviceptr, CUdeviceptr, size_t))dlsym(h, "cuMemcpy");
    CHECK(copy != NULL);
    CHECK(copy((CUdeviceptr)(uintptr_t)a, (CUdeviceptr)(uintptr_t)b, N / 8) == CUDA_SUCCESS);
    dlclose(h);
    static unsigned char back[16];
    SAY("host", host);
    SAY("back", back);
    CHECK_OK(cudaMemcpy(back, b, sizeof back, cudaMemcpyDeviceToHost));
    printf("byte %d\n", back[7]);
    CHECK_OK(cudaDeviceDisablePeerAccess(1));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(a));
    CHECK_OK(cudaFree(b));
    puts("peer: done");
    return 0;
}
