/* fp_bounded_cache.c: a bounded device cache (preprocessed lookup tables,
 * one per key) that is filled on a miss. The keys cycle through 24 values, so
 * the cache fills during the first 24 of 40 steps and then only hits: its
 * memory rises for the first part of the run and stays flat to the end, where
 * the program exits without freeing the cache (it lives as long as the
 * process). The working buffers are freed.
 *
 * TRUTH: leak(held-to-exit) @ cache_alloc
 * (not "growing": the cache stopped growing long before the end) */
#include "fp_common.h"

#define STEPS 40
#define KEYS 24
#define ENTRY_BYTES (1u << 20)

static void *cache[KEYS];

static EX_SITE void *cache_get(unsigned key, const unsigned char *host_table, cudaStream_t s)
{
    if (cache[key] == NULL) {
        CHECK(cudaMalloc(&cache[key], ENTRY_BYTES)); /* @cache_alloc */
        CHECK(cudaMemcpyAsync(cache[key], host_table, ENTRY_BYTES, cudaMemcpyHostToDevice, s)); /* @cache_fill */
    }
    return cache[key];
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *table;
    CHECK(cudaMallocHost((void **)&table, ENTRY_BYTES));
    void *work;
    CHECK(cudaMalloc(&work, 4u << 20)); /* @work */
    for (unsigned step = 0; step < STEPS; step++) {
        unsigned key = step % KEYS;
        fp_fill_batch(table, ENTRY_BYTES, key);
        cache_get(key, table, s);
        ex_kernel_launch(&k, s);
        CHECK(cudaStreamSynchronize(s));
        fp_host_work_us(3000);
    }
    CHECK(cudaFree(work));
    CHECK(cudaFreeHost(table));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0; /* the cache is released by the process's exit */
}
