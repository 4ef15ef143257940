/* cap_arrays.c: CUDA arrays: two allocated through the runtime (2D float2,
 * 3D uchar4) and one through the driver, copies into, out of and between
 * them by every kind of array copy (2D, linear, 3D, driver linear), all freed.
 * Prints what test_arrays.py looks for. */
#define CUDA_ENABLE_DEPRECATED 1   /* cudaMemcpyToArray is deprecated, still used */
#include "cap_util.h"

#include <cuda.h>
#include <dlfcn.h>

enum { W = 64, H = 16, ROW = W * 8, SPITCH = 600 };

int main(void)
{
    CHECK_OK(cudaSetDevice(0));
    struct cudaChannelFormatDesc f2 = cudaCreateChannelDesc(32, 32, 0, 0,
                                                            cudaChannelFormatKindFloat);
    struct cudaChannelFormatDesc u4 = cudaCreateChannelDesc(8, 8, 8, 8,
                                                            cudaChannelFormatKindUnsigned);
    cudaArray_t a, b;
    CHECK_OK(cudaMallocArray(&a, &f2, W, H, 0));
    CHECK_OK(cudaMalloc3DArray(&b, &u4, (struct cudaExtent){16, 8, 4}, 0));
    CAP_PRINT("a", a);
    CAP_PRINT("b", b);

    unsigned char *host = malloc(SPITCH * H);
    CHECK(host != NULL);
    for (size_t i = 0; i < SPITCH * H; i++)
        host[i] = (unsigned char)(i * 7 + 3);
    CAP_PRINT("host", host);
    unsigned char *pin;
    CHECK_OK(cudaMallocHost((void **)&pin, ROW * H));
    CAP_PRINT("pin", pin);
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));

    /* Texture upload from pageable rows, read back asynchronously into pinned memory. */
    CHECK_OK(cudaMemcpy2DToArray(a, 0, 0, host, SPITCH, ROW, H, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy2DFromArrayAsync(pin, ROW, a, 0, 0, ROW, H, cudaMemcpyDeviceToHost, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK(pin[ROW + 5] == host[SPITCH + 5]);
    /* Linear, by address (cudaMemcpyDefault): 1000 bytes from (16 bytes, row 1). */
    CHECK_OK(cudaMemcpyToArray(a, 16, 1, host, 1000, cudaMemcpyDefault));
    /* Array to array, and a 3D upload in elements (16 x 8 x 4 uchar4). */
    CHECK_OK(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, 64, 8, cudaMemcpyDeviceToDevice));
    struct cudaMemcpy3DParms p = {0};
    p.srcPtr = (struct cudaPitchedPtr){pin, 64, 64, 8};
    p.dstArray = b;
    p.extent = (struct cudaExtent){16, 8, 4};
    p.kind = cudaMemcpyHostToDevice;
    CHECK_OK(cudaMemcpy3D(&p));

    /* The driver's own: an array of 128 x 4 16-bit values, up and down. */
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
    CUresult (*create)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *) =
        (CUresult (*)(CUarray *, const CUDA_ARRAY_DESCRIPTOR *))dlsym(h, "cuArrayCreate_v2");
    CUresult (*htoa)(CUarray, size_t, const void *, size_t) =
        (CUresult (*)(CUarray, size_t, const void *, size_t))dlsym(h, "cuMemcpyHtoA_v2");
    CUresult (*atoh)(void *, CUarray, size_t, size_t) =
        (CUresult (*)(void *, CUarray, size_t, size_t))dlsym(h, "cuMemcpyAtoH_v2");
    CUresult (*destroy)(CUarray) = (CUresult (*)(CUarray))dlsym(h, "cuArrayDestroy");
    CHECK(create && htoa && atoh && destroy);
    CUDA_ARRAY_DESCRIPTOR ad = {.Width = 128, .Height = 4, .Format = CU_AD_FORMAT_UNSIGNED_INT16,
                                .NumChannels = 1};
    CUarray c;
    CHECK(create(&c, &ad) == CUDA_SUCCESS);
    CAP_PRINT("c", c);
    CHECK(htoa(c, 0, host, 1024) == CUDA_SUCCESS);
    CHECK(atoh(pin, c, 24, 1000) == CUDA_SUCCESS);
    CHECK(pin[0] == host[24]);
    CHECK(destroy(c) == CUDA_SUCCESS);
    dlclose(h);

    CHECK_OK(cudaFreeArray(a));
    CHECK_OK(cudaFreeArray(b));
    CHECK_OK(cudaFreeHost(pin));
    CHECK_OK(cudaStreamDestroy(s));
    free(host);
    puts("arrays: done");
    return 0;
}
