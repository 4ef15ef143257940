/* Host memory kinds (pinned, registered, managed, pageable) as cudaPointerGetAttributes classifies them, plus the registration and free error cases. */
#include "xpt_check.h"

#include <unistd.h>

#define N (64u << 10)

static void expect_type(const void *p, enum cudaMemoryType want, const char *what)
{
    struct cudaPointerAttributes a;
    memset(&a, 0xa5, sizeof a);
    cudaError_t rc = cudaPointerGetAttributes(&a, p);
    CHECK_MSG(rc == cudaSuccess, "cudaPointerGetAttributes(%s %p) returned %s", what, p,
              cudaGetErrorName(rc));
    CHECK_MSG(a.type == want, "%s %p has memory type %d, expected %d", what, p, (int)a.type,
              (int)want);
    /* Querying never leaves an error behind (pageable memory included). */
    CHECK_CUDA(cudaPeekAtLastError(), cudaSuccess);
}

int main(void)
{
    void *dev = NULL, *pinned = NULL, *hostalloc = NULL, *managed = NULL;
    CHECK_OK(cudaMalloc(&dev, N));
    CHECK_OK(cudaMallocHost(&pinned, N));
    CHECK_OK(cudaHostAlloc(&hostalloc, N, cudaHostAllocDefault));
    CHECK_OK(cudaMallocManaged(&managed, N, cudaMemAttachGlobal));
    CHECK(dev && pinned && hostalloc && managed);

    long page = sysconf(_SC_PAGESIZE);
    void *reg = NULL;
    CHECK(posix_memalign(&reg, (size_t)page, N) == 0);
    CHECK_OK(cudaHostRegister(reg, N, cudaHostRegisterDefault));

    unsigned char *plain = malloc(N);
    int on_stack = 0;
    CHECK(plain);

    /* Pinned memory is ordinary host memory the program can use directly. */
    memset(pinned, 0x11, N);
    memset(hostalloc, 0x22, N);

    expect_type(dev, cudaMemoryTypeDevice, "device");
    expect_type((unsigned char *)dev + N - 1, cudaMemoryTypeDevice, "device end");
    expect_type(pinned, cudaMemoryTypeHost, "cudaMallocHost");
    expect_type(hostalloc, cudaMemoryTypeHost, "cudaHostAlloc");
    expect_type((unsigned char *)hostalloc + 4097, cudaMemoryTypeHost, "cudaHostAlloc+4097");
    expect_type(reg, cudaMemoryTypeHost, "registered");
    expect_type((unsigned char *)reg + 1000, cudaMemoryTypeHost, "registered+1000");
    expect_type((unsigned char *)reg + N - 1, cudaMemoryTypeHost, "registered end");
    expect_type(managed, cudaMemoryTypeManaged, "managed");
    expect_type(plain, cudaMemoryTypeUnregistered, "malloc");
    expect_type(&on_stack, cudaMemoryTypeUnregistered, "stack");
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);

    /* Details that unified addressing fixes. */
    struct cudaPointerAttributes a;
    CHECK_OK(cudaPointerGetAttributes(&a, dev));
    CHECK(a.devicePointer == dev);
    CHECK(a.hostPointer == NULL);
    CHECK_EQ(a.device, 0);
    CHECK_OK(cudaPointerGetAttributes(&a, pinned));
    CHECK(a.hostPointer == pinned);
    CHECK(a.devicePointer == pinned);
    CHECK_OK(cudaPointerGetAttributes(&a, (unsigned char *)reg + 1000));
    CHECK(a.hostPointer == (unsigned char *)reg + 1000);

    /* Registration errors. */
    CHECK_CUDA(cudaHostRegister(reg, N, cudaHostRegisterDefault),
               cudaErrorHostMemoryAlreadyRegistered);
    CHECK_CUDA(cudaGetLastError(), cudaErrorHostMemoryAlreadyRegistered);
    CHECK_CUDA(cudaHostUnregister(plain), cudaErrorHostMemoryNotRegistered);
    CHECK_CUDA(cudaGetLastError(), cudaErrorHostMemoryNotRegistered);

    /* Unregistering makes the range pageable again, and it can be registered anew. */
    CHECK_OK(cudaHostUnregister(reg));
    expect_type(reg, cudaMemoryTypeUnregistered, "unregistered");
    CHECK_CUDA(cudaHostUnregister(reg), cudaErrorHostMemoryNotRegistered);
    CHECK_CUDA(cudaGetLastError(), cudaErrorHostMemoryNotRegistered);
    CHECK_OK(cudaHostRegister(reg, N, cudaHostRegisterDefault));
    expect_type(reg, cudaMemoryTypeHost, "re-registered");

    /* Registered memory works as a copy source and destination. */
    unsigned char *r = reg;
    xpt_fill(r, N, 7);
    CHECK_OK(cudaMemcpy(dev, r, N, cudaMemcpyHostToDevice));
    memset(r, 0, N);
    CHECK_OK(cudaMemcpy(r, dev, N, cudaMemcpyDeviceToHost));
    CHECK_PATTERN(r, N, 7);

    /* cudaFreeHost only takes what cudaMallocHost/cudaHostAlloc returned. */
    CHECK_CUDA(cudaFreeHost(plain), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    /* Managed memory: the host reads and writes it directly... */
    unsigned char *m = managed;
    xpt_fill(m, N, 8);
    CHECK_PATTERN(m, N, 8);
    /* ...and copies with cudaMemcpyDefault move it to and from device memory.
     * Managed memory counts as device memory for the copy, and a device to
     * device cudaMemcpy need not hold the host ("API synchronization
     * behavior"), so synchronize before the host touches it again. */
    CHECK_OK(cudaMemcpy(dev, m, N, cudaMemcpyDefault));
    CHECK_OK(cudaDeviceSynchronize());
    memset(m, 0, N);
    CHECK_OK(cudaMemcpy(m, dev, N, cudaMemcpyDefault));
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_PATTERN(m, N, 8);
    /* Device memory written into managed memory shows up for the host. */
    CHECK_OK(cudaMemset(dev, 0x3c, N));
    CHECK_OK(cudaMemcpy(m, dev, N, cudaMemcpyDeviceToDevice));
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_BYTES(m, N, 0x3c);

    /* Pinned memory kept the host's writes made before the copies. */
    CHECK_BYTES(pinned, N, 0x11);
    CHECK_BYTES(hostalloc, N, 0x22);

    CHECK_OK(cudaHostUnregister(reg));
    free(reg);
    CHECK_OK(cudaFree(managed));
    expect_type(plain, cudaMemoryTypeUnregistered, "malloc");
    CHECK_OK(cudaFreeHost(hostalloc));
    CHECK_OK(cudaFreeHost(pinned));
    /* After cudaFreeHost the address is no longer pinned memory. */
    CHECK_CUDA(cudaFreeHost(pinned), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_OK(cudaFree(dev));
    free(plain);
    return 0;
}
