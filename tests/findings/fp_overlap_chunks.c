/* fp_overlap_chunks.c: a streaming filter over a long signal, written the way
 * NVIDIA's "How to Overlap Data Transfers in CUDA C/C++" and the
 * simpleMultiCopy sample teach it. The input is cut into 4 MiB chunks; two
 * streams take chunks in turn, each with its own pinned input and output
 * buffers and device buffers: upload, filter kernels, download, event. Before
 * a stream's buffers are reused the host waits for that stream's event (the
 * chunk two back), folds its output into a checksum and refills the input.
 * Transfers of one stream overlap the other stream's kernels; the host waits
 * only for work two chunks old. Everything is freed at exit.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=250us
 * TRUTH: none
 * (the pinned async uploads and downloads overlap compute and are completed
 * by an event two chunks later, not by a sync right after; there is nothing
 * to fix) */
#include "fp_common.h"

#define CHUNKS 160
#define NSTREAMS 2
#define CHUNK_BYTES (4u << 20)

typedef struct lane {
    cudaStream_t s;
    cudaEvent_t done;
    unsigned char *h_in, *h_out;
    void *d_in, *d_out;
    int busy;
} lane;

/* What the application does with a filtered chunk (writes it out). */
static unsigned long long consume(const unsigned char *out, size_t bytes)
{
    unsigned long long sum = 0;
    for (size_t i = 0; i < bytes; i += 4096)
        sum += out[i];
    return sum;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    lane ln[NSTREAMS];
    for (int i = 0; i < NSTREAMS; i++) {
        CHECK(cudaStreamCreateWithFlags(&ln[i].s, cudaStreamNonBlocking));
        CHECK(cudaEventCreateWithFlags(&ln[i].done, cudaEventDisableTiming));
        CHECK(cudaMallocHost((void **)&ln[i].h_in, CHUNK_BYTES));
        CHECK(cudaMallocHost((void **)&ln[i].h_out, CHUNK_BYTES));
        CHECK(cudaMalloc(&ln[i].d_in, CHUNK_BYTES));
        CHECK(cudaMalloc(&ln[i].d_out, CHUNK_BYTES));
        ln[i].busy = 0;
    }
    unsigned long long checksum = 0;
    for (unsigned c = 0; c < CHUNKS; c++) {
        lane *l = &ln[c % NSTREAMS];
        if (l->busy) {
            CHECK(cudaEventSynchronize(l->done));          /* chunk c - 2 */
            checksum += consume(l->h_out, CHUNK_BYTES);
        }
        fp_fill_batch(l->h_in, CHUNK_BYTES, c);            /* read the next chunk */
        CHECK(cudaMemcpyAsync(l->d_in, l->h_in, CHUNK_BYTES, cudaMemcpyHostToDevice, l->s)); /* @in */
        for (int f = 0; f < 3; f++)
            ex_kernel_launch(&k, l->s);                    /* filter stages */
        CHECK(cudaMemcpyAsync(l->h_out, l->d_out, CHUNK_BYTES, cudaMemcpyDeviceToHost, l->s)); /* @out */
        CHECK(cudaEventRecord(l->done, l->s));
        l->busy = 1;
    }
    for (int i = 0; i < NSTREAMS; i++) {
        CHECK(cudaEventSynchronize(ln[i].done));
        checksum += consume(ln[i].h_out, CHUNK_BYTES);
    }
    printf("checksum %llu\n", checksum);
    for (int i = 0; i < NSTREAMS; i++) {
        CHECK(cudaFreeHost(ln[i].h_in));
        CHECK(cudaFreeHost(ln[i].h_out));
        CHECK(cudaFree(ln[i].d_in));
        CHECK(cudaFree(ln[i].d_out));
        CHECK(cudaEventDestroy(ln[i].done));
        CHECK(cudaStreamDestroy(ln[i].s));
    }
    ex_kernel_fini(&k);
    return 0;
}
