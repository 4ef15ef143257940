/* cap_allocations.c: every allocation API (stream-ordered ones too), some
 * freed and some leaked;
 * prints each pointer as "name 0x..." for test_allocations.py. */
#include "cap_util.h"

__attribute__((noinline)) static void allocate(void)
{
    void *d_freed, *d_leaked, *h_freed, *h_leaked, *ha_freed, *ha_leaked, *m_freed, *m_leaked;
    CHECK_OK(cudaMalloc(&d_freed, 1u << 20));
    CHECK_OK(cudaMalloc(&d_leaked, 3000));
    CHECK_OK(cudaMallocHost(&h_freed, 8192));
    CHECK_OK(cudaMallocHost(&h_leaked, 12288));
    CHECK_OK(cudaHostAlloc(&ha_freed, 20000, cudaHostAllocPortable));
    CHECK_OK(cudaHostAlloc(&ha_leaked, 24576, cudaHostAllocDefault));
    unsigned char *r_freed = cap_pages(65536), *r_leaked = cap_pages(32768);
    CHECK_OK(cudaHostRegister(r_freed, 65536, cudaHostRegisterDefault));
    CHECK_OK(cudaHostRegister(r_leaked, 32768, cudaHostRegisterDefault));
    CHECK_OK(cudaMallocManaged(&m_freed, 40000, cudaMemAttachGlobal));
    CHECK_OK(cudaMallocManaged(&m_leaked, 50000, cudaMemAttachGlobal));

    CAP_PRINT("d_freed", d_freed);
    CAP_PRINT("d_leaked", d_leaked);
    CAP_PRINT("h_freed", h_freed);
    CAP_PRINT("h_leaked", h_leaked);
    CAP_PRINT("ha_freed", ha_freed);
    CAP_PRINT("ha_leaked", ha_leaked);
    CAP_PRINT("r_freed", r_freed);
    CAP_PRINT("r_leaked", r_leaked);
    CAP_PRINT("m_freed", m_freed);
    CAP_PRINT("m_leaked", m_leaked);
    fflush(stdout);

    /* A free of NULL is no free: no row changes, no error. */
    CHECK_OK(cudaFree(NULL));
    CHECK_OK(cudaFree(d_freed));
    CHECK_OK(cudaFreeHost(h_freed));
    CHECK_OK(cudaFreeHost(ha_freed));
    CHECK_OK(cudaHostUnregister(r_freed));
    CHECK_OK(cudaFree(m_freed));
    free(r_freed);
}

/* Stream-ordered allocation: from the default pool and from a pool handle;
 * the free is issued (and recorded) when cudaFreeAsync is called. */
__attribute__((noinline)) static void allocate_async(void)
{
    cudaStream_t s;
    cudaMemPool_t pool;
    void *a_freed, *a_leaked, *p_freed;
    CHECK_OK(cudaStreamCreate(&s));
    CHECK_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
    CHECK_OK(cudaMallocAsync(&a_freed, 70000, s));
    CHECK_OK(cudaMallocAsync(&a_leaked, 80000, s));
    CHECK_OK(cudaMallocFromPoolAsync(&p_freed, 90000, pool, s));
    CAP_PRINT("a_freed", a_freed);
    CAP_PRINT("a_leaked", a_leaked);
    CAP_PRINT("p_freed", p_freed);
    fflush(stdout);
    CHECK_OK(cudaFreeAsync(a_freed, s));
    CHECK_OK(cudaFreeAsync(p_freed, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaStreamDestroy(s));
}

int main(void)
{
    allocate();
    allocate_async();
    return 0;
}
