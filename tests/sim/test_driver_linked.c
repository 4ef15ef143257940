/* A driver-API program linked with NVIDIA's stub libcuda.so runs on the simulator's libcuda.so.1 (same SONAME, found first through LD_LIBRARY_PATH). */
#include "xpt_check_cu.h"

int main(void)
{
    /* The stub only satisfies the linker; at run time every entry point must
     * come from the simulator. */
    CHECK_FROM_SIM("cuInit");
    CHECK_FROM_SIM("cuMemAlloc_v2");
    CHECK_FROM_SIM("cuMemcpyHtoD_v2");

    CHECK_CU_OK(cuInit(0));
    int version = 0;
    CHECK_CU_OK(cuDriverGetVersion(&version));
    CHECK(version >= 13000);

    CUdevice dev;
    CHECK_CU_OK(cuDeviceGet(&dev, 0));
    char name[256] = {0};
    CHECK_CU_OK(cuDeviceGetName(name, sizeof name, dev));
    CHECK(name[0] != '\0');
    size_t total = 0;
    CHECK_CU_OK(cuDeviceTotalMem(&total, dev));   /* cuDeviceTotalMem_v2 */
    unsigned long long want = xpt_env_size("XFERPROF_SIM_MEMORY", 16ull << 30);
    CHECK_MSG(total == want, "cuDeviceTotalMem %zu, expected %llu", total, want);

    CUcontext ctx;
    CHECK_CU_OK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CHECK_CU_OK(cuCtxSetCurrent(ctx));

    enum { SZ = 4096 };
    unsigned char src[SZ], dst[SZ];
    CUdeviceptr d;
    CHECK_CU_OK(cuMemAlloc(&d, SZ));
    size_t free_b = 0, total_b = 0;
    CHECK_CU_OK(cuMemGetInfo(&free_b, &total_b));
    CHECK_EQ(total_b, total);
    CHECK(free_b <= total_b - SZ);
    xpt_fill(src, SZ, 9);
    CHECK_CU_OK(cuMemcpyHtoD(d, src, SZ));
    CHECK_CU_OK(cuMemsetD8(d + 100, 0xee, 10));
    memset(dst, 0, SZ);
    CHECK_CU_OK(cuMemcpyDtoH(dst, d, SZ));
    CHECK_PATTERN(dst, 100, 9);
    CHECK_BYTES(dst + 100, 10, 0xee);
    CHECK(memcmp(dst + 110, src + 110, SZ - 110) == 0);
    CHECK_CU_OK(cuMemFree(d));
    CHECK_CU_OK(cuDevicePrimaryCtxRelease(dev));
    return 0;
}
