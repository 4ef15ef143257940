/* One binary, two libraries: against NVIDIA's libcudart without a GPU every call fails cleanly with cudaErrorInsufficientDriver; against the simulator the same calls succeed. argv[1]: expect-real | expect-sim. */
#include "xpt_check.h"

enum { SZ = 1 << 16 };

static int expect_real(const char *from)
{
    /* NVIDIA's library, not the simulator's. */
    CHECK_MSG(!xpt_file_is_sim(from), "cudaMalloc from %s", from);
    CHECK_MSG(strstr(from, "cuda") != NULL, "cudaMalloc from %s", from);

    void *d = NULL;
    unsigned char h[64] = {0};
    CHECK_CUDA(cudaMalloc(&d, SZ), cudaErrorInsufficientDriver);
    CHECK(d == NULL);
    CHECK_CUDA(cudaMemcpy(h, h + 32, 16, cudaMemcpyHostToHost), cudaErrorInsufficientDriver);
    CHECK_CUDA(cudaMemcpy(d, h, 16, cudaMemcpyHostToDevice), cudaErrorInsufficientDriver);
    int count = 0;
    CHECK_CUDA(cudaGetDeviceCount(&count), cudaErrorInsufficientDriver);
    CHECK_CUDA(cudaFree(NULL), cudaErrorInsufficientDriver);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInsufficientDriver);
    CHECK(strcmp(cudaGetErrorName(cudaErrorInsufficientDriver), "cudaErrorInsufficientDriver") == 0);
    int rt = 0;
    CHECK_OK(cudaRuntimeGetVersion(&rt));
    CHECK_EQ(rt, CUDART_VERSION);
    printf("real libcudart (%s): cudaMalloc -> %s\n", from,
           cudaGetErrorName(cudaMalloc(&d, SZ)));
    return 0;
}

static int expect_sim(const char *from)
{
    CHECK_MSG(xpt_file_is_sim(from), "cudaMalloc from %s", from);
    CHECK_FROM_SIM("cudaMemcpy");
    CHECK_FROM_SIM("cudaGetErrorName");

    void *d = NULL;
    unsigned char src[SZ], dst[SZ];
    CHECK_OK(cudaMalloc(&d, SZ));
    CHECK(d != NULL);
    xpt_fill(src, SZ, 1);
    CHECK_OK(cudaMemcpy(d, src, SZ, cudaMemcpyHostToDevice));
    memset(dst, 0, SZ);
    CHECK_OK(cudaMemcpy(dst, d, SZ, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(dst, SZ, 1);
    int count = 0;
    CHECK_OK(cudaGetDeviceCount(&count));
    CHECK(count >= 1);
    CHECK_OK(cudaFree(d));
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    int rt = 0, drv = 0;
    CHECK_OK(cudaRuntimeGetVersion(&rt));
    CHECK_EQ(rt, CUDART_VERSION);
    CHECK_OK(cudaDriverGetVersion(&drv));
    CHECK_MSG(drv >= rt, "driver version %d older than runtime %d", drv, rt);
    printf("simulator (%s): cudaMalloc -> %s\n", from, cudaGetErrorName(cudaSuccess));
    return 0;
}

int main(int argc, char **argv)
{
    const char *from = xpt_symbol_file("cudaMalloc");
    CHECK_MSG(from != NULL, "cudaMalloc not resolvable");
    if (argc > 1 && strcmp(argv[1], "expect-real") == 0)
        return expect_real(from);
    if (argc > 1 && strcmp(argv[1], "expect-sim") == 0)
        return expect_sim(from);
    fprintf(stderr, "usage: %s expect-real|expect-sim\n", argv[0]);
    return 2;
}
