/* cap_cuda11.c: a program linked against CUDA 11's runtime, libcudart.so.11.0
 * (the simulator's, built so in cuda11/): its calls bind to
 * cudaMalloc@libcudart.so.11.0 and so on.  Only calls whose signature CUDA 11
 * shares with CUDA 13, whose headers it is compiled with. */
#include "cap_util.h"

enum { N = 5000 };

int main(void)
{
    unsigned char host[N], back[N];
    for (size_t i = 0; i < N; i++)
        host[i] = (unsigned char)(i * 13);
    void *d = NULL;
    CHECK_OK(cudaMalloc(&d, N));
    CHECK_OK(cudaMemcpy(d, host, N, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(back, d, N, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, host, N) == 0);
    /* Refused (an unknown kind), the same with and without the profiler. */
    printf("rc_bad %d\n", (int)cudaMemcpy(d, host, 16, (enum cudaMemcpyKind)77));
    printf("last_error %d\n", (int)cudaGetLastError());
    CHECK_OK(cudaFree(d));
    return 0;
}
