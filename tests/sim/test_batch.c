/* cudaMemcpyBatchAsync (CUDA 13 form): every entry is a copy queued on the stream in turn, after the stream's earlier work; a bad entry or attribute fails the call before anything is queued; the legacy stream is refused.  Needs XFERPROF_SIM_BANDWIDTH=pinned=100M,pageable=100M. */
#include "xpt_check.h"

#define N (16u << 20)   /* ~168 ms at 100 MB/s */
#define M (1u << 20)

int main(void)
{
    unsigned char *h1 = NULL, *h2 = NULL, *h3 = NULL, *out = NULL;
    CHECK_OK(cudaMallocHost((void **)&h1, N));
    CHECK_OK(cudaMallocHost((void **)&h2, M));
    CHECK_OK(cudaMallocHost((void **)&h3, M));
    CHECK_OK(cudaMallocHost((void **)&out, M));
    void *big = NULL, *da = NULL, *db = NULL;
    CHECK_OK(cudaMalloc(&big, N));
    CHECK_OK(cudaMalloc(&da, M));
    CHECK_OK(cudaMalloc(&db, M));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));

    struct cudaMemcpyAttributes attr;
    memset(&attr, 0, sizeof attr);
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    size_t idx0 = 0;

    /* Behind a long copy on the stream; in order within the batch: h2 goes
     * to da, da to db, db back to out, and h3 to h2 afterwards (host to
     * host), so every later entry sees what the earlier ones wrote. */
    xpt_fill(h1, N, 1);
    xpt_fill(h2, M, 2);
    xpt_fill(h3, M, 3);
    memset(out, 0, M);
    CHECK_OK(cudaMemcpyAsync(big, h1, N, cudaMemcpyHostToDevice, s));
    void *dsts[] = {da, db, out, h2};
    const void *srcs[] = {h2, da, db, h3};
    size_t sizes[] = {M, M, M, M};
    CHECK_OK(cudaMemcpyBatchAsync(dsts, srcs, sizes, 4, &attr, &idx0, 1, s));
    /* Queued after the long copy: nothing landed yet. */
    CHECK_CUDA(cudaStreamQuery(s), cudaErrorNotReady);
#ifndef __SANITIZE_THREAD__
    /* (A deliberate race with the copy engine, left out under TSan.) */
    for (size_t i = 0; i < M; i += 4093)
        CHECK_MSG(out[i] == 0, "out[%zu] written before the stream reached the batch", i);
#endif
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_PATTERN(out, M, 2);
    CHECK_PATTERN(h2, M, 3);

    /* Several attribute sets, each for a run of entries; the per-thread
     * stream is a valid stream for batches. */
    struct cudaMemcpyAttributes two[2];
    memset(two, 0, sizeof two);
    two[0].srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    two[1].srcAccessOrder = cudaMemcpySrcAccessOrderDuringApiCall;
    size_t idx2[] = {0, 1};
    xpt_fill(h3, M, 5);
    void *dsts2[] = {da, out};
    const void *srcs2[] = {h3, da};
    size_t sizes2[] = {M, M};
    CHECK_OK(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, two, idx2, 2, cudaStreamPerThread));
    CHECK_OK(cudaStreamSynchronize(cudaStreamPerThread));
    CHECK_PATTERN(out, M, 5);

    /* Errors leave everything untouched: a bad pointer in the last entry
     * stops the first from being queued. */
    memset(out, 0, M);
    xpt_fill(h3, M, 6);
    void *gone = NULL;   /* device addresses that are no allocation any more */
    CHECK_OK(cudaMalloc(&gone, M));
    CHECK_OK(cudaFree(gone));
    void *bad_dsts[] = {out, gone};
    const void *bad_srcs[] = {h3, h3};
    CHECK_CUDA(cudaMemcpyBatchAsync(bad_dsts, bad_srcs, sizes2, 2, &attr, &idx0, 1, s),
               cudaErrorInvalidValue);
    void *over_dsts[] = {out, da};
    const void *over_srcs[] = {h3, h3};
    size_t over_sizes[] = {M, M + 1};   /* past the end of da */
    CHECK_CUDA(cudaMemcpyBatchAsync(over_dsts, over_srcs, over_sizes, 2, &attr, &idx0, 1, s),
               cudaErrorInvalidValue);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_BYTES(out, M, 0);
    /* The legacy stream is refused ("Must not be legacy NULL stream"). */
    CHECK_CUDA(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, &attr, &idx0, 1, 0),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, &attr, &idx0, 1, cudaStreamLegacy),
               cudaErrorInvalidValue);
    /* Attributes: the first index 0, increasing, below count; a valid order. */
    size_t idx_bad[] = {1};
    CHECK_CUDA(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, &attr, idx_bad, 1, s),
               cudaErrorInvalidValue);
    size_t idx_dup[] = {0, 0};
    CHECK_CUDA(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, two, idx_dup, 2, s),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, two, idx2, 3, s),
               cudaErrorInvalidValue);
    struct cudaMemcpyAttributes unordered;
    memset(&unordered, 0, sizeof unordered);
    CHECK_CUDA(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 2, &unordered, &idx0, 1, s),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpyBatchAsync(dsts2, srcs2, sizes2, 0, &attr, &idx0, 1, s),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_BYTES(out, M, 0);

    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(big));
    CHECK_OK(cudaFree(da));
    CHECK_OK(cudaFree(db));
    CHECK_OK(cudaFreeHost(h1));
    CHECK_OK(cudaFreeHost(h2));
    CHECK_OK(cudaFreeHost(h3));
    CHECK_OK(cudaFreeHost(out));
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
