/* fp_pinned_per_request.c: an inference wrapper of the kind written around a
 * CUDA model in C++ services, called once per request. Each call allocates
 * its own pinned input and output buffers with cudaMallocHost (the author
 * read that pinned memory makes copies fast), copies the request into the
 * input, uploads it with cudaMemcpyAsync, runs the model's kernels,
 * downloads the 64 KiB result into the pinned output, waits for the stream,
 * hands the result back, and frees both buffers with cudaFreeHost. The
 * device buffers are allocated once.
 *
 * What a demanding user should be told: page-locking 4 MiB and 64 KiB on
 * every call costs more than the pinned copy saves (cudaMallocHost maps and
 * locks pages in the driver, far slower than a pageable copy of the same
 * bytes), and cudaFreeHost synchronizes the whole device: allocate the
 * pinned buffers once and reuse them. Written when no rule looked at
 * allocation churn (this truth then named one, pinned-churn, and counted as
 * a miss); alloc-churn came after. The output buffer is the same defect.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=200us
 * TRUTH: alloc-churn @ pin
 * ALLOW: alloc-churn @ pin_out
 * (the per-request read of the result into pinned memory, 64 KiB the caller
 * consumes, is a result, not a value the host watches: not sync-in-loop;
 * the uploads are new data each time) */
#include "fp_common.h"

#define REQUESTS 150
#define IN_BYTES (4u << 20)
#define OUT_BYTES (64u << 10)

typedef struct model {
    ex_kernel k;
    cudaStream_t s;
    void *d_in, *d_out;
} model;

/* One request: what the service's infer() does. */
static unsigned infer(model *m, const unsigned char *request, unsigned char *reply)
{
    unsigned char *h_in, *h_out;
    CHECK(cudaMallocHost((void **)&h_in, IN_BYTES));        /* @pin */
    CHECK(cudaMallocHost((void **)&h_out, OUT_BYTES));     /* @pin_out */
    memcpy(h_in, request, IN_BYTES);
    CHECK(cudaMemcpyAsync(m->d_in, h_in, IN_BYTES, cudaMemcpyHostToDevice, m->s));
    for (int l = 0; l < 6; l++)
        ex_kernel_launch(&m->k, m->s);                      /* the model's layers */
    CHECK(cudaMemcpyAsync(h_out, m->d_out, OUT_BYTES, cudaMemcpyDeviceToHost, m->s));
    CHECK(cudaStreamSynchronize(m->s));
    memcpy(reply, h_out, OUT_BYTES);
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    return reply[0];
}

int main(void)
{
    model m;
    ex_kernel_init(&m.k);
    CHECK(cudaStreamCreateWithFlags(&m.s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&m.d_in, IN_BYTES));
    CHECK(cudaMalloc(&m.d_out, OUT_BYTES));
    unsigned char *request = malloc(IN_BYTES), *reply = malloc(OUT_BYTES);
    if (!request || !reply)
        return 1;
    unsigned sum = 0;
    for (unsigned r = 0; r < REQUESTS; r++) {
        fp_fill_batch(request, IN_BYTES, r);                 /* decode the request */
        sum += infer(&m, request, reply);
        fp_host_work_us(300);                               /* answer the client */
    }
    printf("served %u requests (%u)\n", REQUESTS, sum);
    free(request);
    free(reply);
    CHECK(cudaFree(m.d_in));
    CHECK(cudaFree(m.d_out));
    CHECK(cudaStreamDestroy(m.s));
    ex_kernel_fini(&m.k);
    return 0;
}
