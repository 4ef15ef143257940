/* fp_embedding_update.c: a 32 MiB embedding table kept in pinned host memory
 * (a parameter server's shard) and pushed whole to the device every step,
 * although each step changes only one 4 KiB row on the host (an online update
 * from the step's feedback). Every upload carries new bytes: the device did
 * not have them. The rows changed lie between the blocks a sampled
 * fingerprint reads, so only a full comparison can tell the uploads apart.
 *
 * TRUTH: none
 * (redundant-upload must not fire: no upload repeats content) */
#include "fp_common.h"

#define STEPS 12
#define TABLE_BYTES (32u << 20)
#define ROW_BYTES 4096u

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *table;
    void *dev_table;
    CHECK(cudaMallocHost((void **)&table, TABLE_BYTES));
    CHECK(cudaMalloc(&dev_table, TABLE_BYTES));
    fp_fill_batch(table, TABLE_BYTES, 77);
    for (unsigned step = 0; step < STEPS; step++) {
        /* The row the feedback touched: from 1 MiB on, one row further each
           step (inside the first gap of a sampled fingerprint's blocks) */
        size_t row = (1u << 20) + (size_t)step * ROW_BYTES;
        fp_fill_batch(table + row, ROW_BYTES, 1000 + step);
        CHECK(cudaMemcpyAsync(dev_table, table, TABLE_BYTES, cudaMemcpyHostToDevice, s)); /* @push */
        ex_kernel_launch(&k, s);
        CHECK(cudaStreamSynchronize(s)); /* the host table changes next step */
        fp_host_work_us(2000);
    }
    CHECK(cudaFreeHost(table));
    CHECK(cudaFree(dev_table));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
