/* fp_fresh_buffer.c: a constant table (rotary position embedding, 256 KiB,
 * computed once on the host in pinned memory) uploaded every step into a
 * buffer the step allocates and frees: cudaMalloc, cudaMemcpyAsync of the
 * same bytes, the kernels, cudaFree. The device never keeps the table, so each
 * upload is needed as the code stands, but the same bytes cross the bus every
 * step: it belongs on the device for the whole run.
 *
 * TRUTH: reupload-fresh @ table_upload
 * (not redundant-upload: the destination was freed and allocated again in
 * between, it did not hold the bytes) */
#include "fp_common.h"

#define STEPS 30
#define TABLE_BYTES (256u << 10)
#define BATCH_BYTES (1u << 20)

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    unsigned char *table, *batch;
    CHECK(cudaMallocHost((void **)&table, TABLE_BYTES));
    CHECK(cudaMallocHost((void **)&batch, BATCH_BYTES));
    fp_fill_batch(table, TABLE_BYTES, 999);
    void *dev_batch;
    CHECK(cudaMalloc(&dev_batch, BATCH_BYTES));
    for (unsigned step = 0; step < STEPS; step++) {
        fp_fill_batch(batch, BATCH_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_batch, batch, BATCH_BYTES, cudaMemcpyHostToDevice, s)); /* @batch */
        void *dev_table;
        CHECK(cudaMalloc(&dev_table, TABLE_BYTES)); /* @table_alloc */
        CHECK(cudaMemcpyAsync(dev_table, table, TABLE_BYTES, cudaMemcpyHostToDevice, s)); /* @table_upload */
        ex_kernel_launch(&k, s);
        CHECK(cudaStreamSynchronize(s));
        CHECK(cudaFree(dev_table));
        fp_host_work_us(500);
    }
    CHECK(cudaFree(dev_batch));
    CHECK(cudaFreeHost(batch));
    CHECK(cudaFreeHost(table));
    CHECK(cudaStreamDestroy(s));
    ex_kernel_fini(&k);
    return 0;
}
