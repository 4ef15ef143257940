/* CUDA arrays: cudaMallocArray/cudaMalloc3DArray take device memory (cudaMemGetInfo, capacity), cudaArrayGetInfo describes them, every runtime and driver copy into, out of and between arrays moves exactly its box (2D with offsets, the linear deprecated forms across rows, 3D in elements), and the documented errors. */
/* The linear array copies are deprecated, and tested all the same. */
#define CUDA_ENABLE_DEPRECATED 1
#include "xpt_check.h"

#include <cuda.h>
#include <dlfcn.h>
#include <stdbool.h>

/* The bytes of a W x H array of elem-byte elements, read back whole. */
static void read_array(cudaArray_t a, unsigned char *out, size_t row, size_t rows)
{
    CHECK_OK(cudaMemcpy2DFromArray(out, row, a, 0, 0, row, rows, cudaMemcpyDeviceToHost));
}

static void runtime_2d(void)
{
    enum { W = 100, H = 30, ELEM = 8, ROW = W * ELEM };
    size_t free0, free1, total;
    CHECK_OK(cudaMemGetInfo(&free0, &total));
    struct cudaChannelFormatDesc fd = cudaCreateChannelDesc(32, 32, 0, 0,
                                                            cudaChannelFormatKindFloat);
    cudaArray_t a, b;
    CHECK_OK(cudaMallocArray(&a, &fd, W, H, cudaArraySurfaceLoadStore));
    CHECK(a != NULL);
    CHECK_OK(cudaMemGetInfo(&free1, &total));
    CHECK_MSG(free0 - free1 >= (size_t)ROW * H, "an array of %d bytes took %zu", ROW * H,
              free0 - free1);

    struct cudaChannelFormatDesc got;
    struct cudaExtent ext;
    unsigned flags;
    CHECK_OK(cudaArrayGetInfo(&got, &ext, &flags, a));
    CHECK_EQ(got.x, 32);
    CHECK_EQ(got.y, 32);
    CHECK_EQ(got.z, 0);
    CHECK_EQ(got.f, cudaChannelFormatKindFloat);
    CHECK_EQ(ext.width, W);
    CHECK_EQ(ext.height, H);
    CHECK_EQ(ext.depth, 0);
    CHECK_EQ(flags, cudaArraySurfaceLoadStore);

    /* The whole array from a pitched pageable buffer, and back. */
    size_t spitch = ROW + 200;
    unsigned char *src = malloc(spitch * H), *back = malloc(ROW * H);
    CHECK(src && back);
    xpt_fill(src, spitch * H, 7);
    CHECK_OK(cudaMemcpy2DToArray(a, 0, 0, src, spitch, ROW, H, cudaMemcpyHostToDevice));
    read_array(a, back, ROW, H);
    for (size_t y = 0; y < H; y++)
        CHECK_MSG(memcmp(back + y * ROW, src + y * spitch, ROW) == 0, "row %zu", y);

    /* A box at (16 bytes, row 2), 64 x 5: only it changes. */
    unsigned char box[64 * 5];
    memset(box, 0xab, sizeof box);
    CHECK_OK(cudaMemcpy2DToArrayAsync(a, 16, 2, box, 64, 64, 5, cudaMemcpyDefault, 0));
    CHECK_OK(cudaStreamSynchronize(0));
    read_array(a, back, ROW, H);
    for (size_t y = 0; y < H; y++)
        for (size_t x = 0; x < ROW; x++) {
            bool in = y >= 2 && y < 7 && x >= 16 && x < 80;
            CHECK_MSG(back[y * ROW + x] == (in ? 0xab : src[y * spitch + x]), "(%zu, %zu)", x,
                      y);
        }
    unsigned char out[64 * 5];
    CHECK_OK(cudaMemcpy2DFromArray(out, 64, a, 16, 2, 64, 5, cudaMemcpyDeviceToHost));
    CHECK_BYTES(out, sizeof out, 0xab);

    /* Linear copies run across rows: 1200 bytes from (400 bytes, row 1). */
    unsigned char lin[1200], lin2[1200];
    xpt_fill(lin, sizeof lin, 9);
    CHECK_OK(cudaMemcpyToArray(a, 400, 1, lin, sizeof lin, cudaMemcpyHostToDevice));
    read_array(a, back, ROW, H);
    CHECK(memcmp(back + ROW + 400, lin, sizeof lin) == 0);
    CHECK(memcmp(back, src, ROW) == 0);   /* row 0 untouched */
    CHECK_OK(cudaMemcpyFromArray(lin2, a, 400, 1, sizeof lin2, cudaMemcpyDeviceToHost));
    CHECK(memcmp(lin, lin2, sizeof lin) == 0);

    /* Between arrays, and between an array and device memory. */
    CHECK_OK(cudaMallocArray(&b, &fd, W, H, 0));
    CHECK_OK(cudaMemcpy2DArrayToArray(b, 0, 0, a, 0, 0, ROW, H, cudaMemcpyDeviceToDevice));
    unsigned char *back2 = malloc(ROW * H);
    CHECK(back2);
    read_array(a, back, ROW, H);
    read_array(b, back2, ROW, H);
    CHECK(memcmp(back, back2, ROW * H) == 0);
    CHECK_OK(cudaMemcpyArrayToArray(b, 0, 3, a, 0, 1, 1200, cudaMemcpyDefault));
    read_array(b, back2, ROW, H);
    /* a's row 1 holds lin from byte 400 on, row 2 the rest of it. */
    CHECK(memcmp(back2 + 3 * ROW + 400, lin, 400) == 0);
    CHECK(memcmp(back2 + 4 * ROW, lin + 400, 400) == 0);
    CHECK(memcmp(back2 + 4 * ROW + 400, back + 4 * ROW + 400, 400) == 0);
    void *dev;
    CHECK_OK(cudaMalloc(&dev, ROW * H));
    CHECK_OK(cudaMemcpy2DFromArray(dev, ROW, a, 0, 0, ROW, H, cudaMemcpyDeviceToDevice));
    CHECK_OK(cudaMemcpy(back2, dev, ROW * H, cudaMemcpyDeviceToHost));
    CHECK(memcmp(back, back2, ROW * H) == 0);

    /* Errors: out of the array, the wrong direction, a bad descriptor, a
     * freed array; none of them writes anything. */
    CHECK_CUDA(cudaMemcpy2DToArray(a, ROW - 8, 0, box, 64, 64, 1, cudaMemcpyHostToDevice),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpy2DToArray(a, 0, H - 1, box, 64, 64, 2, cudaMemcpyHostToDevice),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpy2DToArray(a, 0, 0, box, 64, 64, 1, cudaMemcpyDeviceToHost),
               cudaErrorInvalidMemcpyDirection);
    CHECK_CUDA(cudaMemcpy2DToArray(a, 0, 0, box, 64, 64, 1, cudaMemcpyDeviceToDevice),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpyToArray(a, 0, H - 1, lin, ROW + 1, cudaMemcpyHostToDevice),
               cudaErrorInvalidValue);
    struct cudaChannelFormatDesc bad = cudaCreateChannelDesc(32, 16, 0, 0,
                                                             cudaChannelFormatKindFloat);
    cudaArray_t c;
    CHECK_CUDA(cudaMallocArray(&c, &bad, W, H, 0), cudaErrorInvalidChannelDescriptor);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidChannelDescriptor);
    read_array(a, back2, ROW, H);
    CHECK(memcmp(back, back2, ROW * H) == 0);

    CHECK_OK(cudaFree(dev));
    CHECK_OK(cudaFreeArray(b));
    CHECK_OK(cudaFreeArray(a));
    CHECK_CUDA(cudaFreeArray(a), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_OK(cudaFreeArray(NULL));
    CHECK_OK(cudaMemGetInfo(&free1, &total));
    CHECK_EQ(free1, free0);
    free(src);
    free(back);
    free(back2);
}

/* A 3D array of uchar4: cudaMemcpy3D's extent and the array's position are
 * in elements, the host side's position in bytes. */
static void runtime_3d(void)
{
    enum { W = 16, H = 8, D = 4, ELEM = 4, ROW = W * ELEM };
    struct cudaChannelFormatDesc fd = cudaCreateChannelDesc(8, 8, 8, 8,
                                                            cudaChannelFormatKindUnsigned);
    cudaArray_t a;
    CHECK_OK(cudaMalloc3DArray(&a, &fd, (struct cudaExtent){W, H, D}, 0));
    unsigned char whole[ROW * H * D], back[ROW * H * D];
    memset(whole, 0, sizeof whole);
    struct cudaMemcpy3DParms p = {0};
    p.srcPtr = (struct cudaPitchedPtr){whole, ROW, W, H};
    p.dstArray = a;
    p.extent = (struct cudaExtent){W, H, D};
    p.kind = cudaMemcpyHostToDevice;
    CHECK_OK(cudaMemcpy3D(&p));
    /* 2 x 3 x 2 elements from host byte (5, 1, 0) to element (4, 2, 1). */
    unsigned char host[100 * 10 * 2];
    xpt_fill(host, sizeof host, 3);
    struct cudaMemcpy3DParms q = {0};
    q.srcPtr = (struct cudaPitchedPtr){host, 100, 100, 10};
    q.srcPos = (struct cudaPos){5, 1, 0};
    q.dstArray = a;
    q.dstPos = (struct cudaPos){4, 2, 1};
    q.extent = (struct cudaExtent){2, 3, 2};
    q.kind = cudaMemcpyHostToDevice;
    CHECK_OK(cudaMemcpy3DAsync(&q, 0));
    struct cudaMemcpy3DParms r = {0};
    r.srcArray = a;
    r.dstPtr = (struct cudaPitchedPtr){back, ROW, W, H};
    r.extent = (struct cudaExtent){W, H, D};
    r.kind = cudaMemcpyDeviceToHost;
    CHECK_OK(cudaMemcpy3D(&r));
    for (size_t z = 0; z < D; z++)
        for (size_t y = 0; y < H; y++)
            for (size_t x = 0; x < ROW; x++) {
                bool in = z >= 1 && z < 3 && y >= 2 && y < 5 && x >= 16 && x < 24;
                unsigned char want =
                    in ? host[(z - 1) * 1000 + (y - 2 + 1) * 100 + (x - 16 + 5)] : 0;
                CHECK_MSG(back[(z * H + y) * ROW + x] == want, "(%zu, %zu, %zu)", x, y, z);
            }
    q.extent.depth = D;   /* runs out of the array */
    CHECK_CUDA(cudaMemcpy3D(&q), cudaErrorInvalidValue);
    CHECK_OK(cudaFreeArray(a));
}

/* More than the device holds (XFERPROF_SIM_MEMORY=64M): out of memory. */
static void capacity(void)
{
    struct cudaChannelFormatDesc fd = cudaCreateChannelDesc(32, 32, 32, 32,
                                                            cudaChannelFormatKindFloat);
    cudaArray_t a;
    CHECK_CUDA(cudaMallocArray(&a, &fd, 4096, 2048, 0), cudaErrorMemoryAllocation);
    CHECK_CUDA(cudaGetLastError(), cudaErrorMemoryAllocation);
}

/* The driver's forms, from the libcuda.so.1 the runtime uses. */
static void driver(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    CHECK(h != NULL);
#define SYM(name) __typeof__(name) *p_##name = (__typeof__(name) *)dlsym(h, #name); CHECK(p_##name)
    SYM(cuArrayCreate_v2);
    SYM(cuArrayGetDescriptor_v2);
    SYM(cuArrayDestroy);
    SYM(cuMemcpyHtoA_v2);
    SYM(cuMemcpyAtoH_v2);
    SYM(cuMemcpy2D_v2);
#undef SYM
    CUDA_ARRAY_DESCRIPTOR ad = {.Width = 64, .Height = 4, .Format = CU_AD_FORMAT_UNSIGNED_INT16,
                                .NumChannels = 1};
    CUarray a;
    CHECK_EQ(p_cuArrayCreate_v2(&a, &ad), CUDA_SUCCESS);
    CUDA_ARRAY_DESCRIPTOR got;
    CHECK_EQ(p_cuArrayGetDescriptor_v2(&got, a), CUDA_SUCCESS);
    CHECK_EQ(got.Width, 64);
    CHECK_EQ(got.Height, 4);
    CHECK_EQ(got.Format, CU_AD_FORMAT_UNSIGNED_INT16);
    unsigned char in[512], out[512];
    xpt_fill(in, sizeof in, 5);
    CHECK_EQ(p_cuMemcpyHtoA_v2(a, 0, in, sizeof in), CUDA_SUCCESS);
    CHECK_EQ(p_cuMemcpyAtoH_v2(out, a, 0, sizeof out), CUDA_SUCCESS);
    CHECK(memcmp(in, out, sizeof in) == 0);
    CHECK_EQ(p_cuMemcpyHtoA_v2(a, 2, in, sizeof in), CUDA_ERROR_INVALID_VALUE);
    /* Row 1, bytes 8..40, into a host buffer by cuMemcpy2D. */
    CUDA_MEMCPY2D c = {.srcMemoryType = CU_MEMORYTYPE_ARRAY, .srcArray = a, .srcXInBytes = 8,
                       .srcY = 1, .dstMemoryType = CU_MEMORYTYPE_HOST, .dstHost = out,
                       .dstPitch = 32, .WidthInBytes = 32, .Height = 1};
    CHECK_EQ(p_cuMemcpy2D_v2(&c), CUDA_SUCCESS);
    CHECK(memcmp(out, in + 128 + 8, 32) == 0);
    c.srcXInBytes = 7;   /* not a whole element */
    CHECK_EQ(p_cuMemcpy2D_v2(&c), CUDA_ERROR_INVALID_VALUE);
    CHECK_EQ(p_cuArrayDestroy(a), CUDA_SUCCESS);
    CHECK_EQ(p_cuArrayDestroy(a), CUDA_ERROR_INVALID_HANDLE);
    dlclose(h);
}

int main(void)
{
    CHECK_FROM_SIM("cudaMallocArray");
    runtime_2d();
    runtime_3d();
    capacity();
    driver();
    puts("arrays: ok");
    return 0;
}
