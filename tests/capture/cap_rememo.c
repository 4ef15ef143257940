/* cap_rememo.c: the same host buffer copied from while its kind changes
 * under the profiler's per-thread memory of recent answers: 3 uploads while
 * registered (pinned), 3 after cudaHostUnregister (pageable again), 3 after
 * registering it once more; then a pinned buffer freed and its address range
 * copied from as ordinary memory (mmap'd at the same place). */
#include "cap_util.h"

#include <sys/mman.h>

#define BYTES (64u << 10)

static void upload3(void *dev, const void *host)
{
    for (int i = 0; i < 3; i++)
        CHECK_OK(cudaMemcpy(dev, host, BYTES, cudaMemcpyHostToDevice));
}

int main(void)
{
    void *dev = NULL;
    CHECK_OK(cudaMalloc(&dev, BYTES));
    void *host = mmap(NULL, BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(host != MAP_FAILED);
    CHECK_OK(cudaHostRegister(host, BYTES, cudaHostRegisterDefault));
    upload3(dev, host);
    CHECK_OK(cudaHostUnregister(host));
    upload3(dev, host);
    CHECK_OK(cudaHostRegister(host, BYTES, cudaHostRegisterDefault));
    upload3(dev, host);
    CHECK_OK(cudaHostUnregister(host));
    CHECK(munmap(host, BYTES) == 0);
    CHECK_OK(cudaFree(dev));
    printf("done\n");
    return 0;
}
