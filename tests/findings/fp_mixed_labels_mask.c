/* fp_mixed_labels_mask.c: a sequence model's training loop that does most
 * things right and two things wrong. Right: the token batches come from two
 * pinned buffers with cudaMemcpyAsync and an event per buffer; the learning
 * rate schedule (16 bytes) goes up each step asynchronously from pinned
 * memory; the loss is accumulated on the device and read every 25 steps; an
 * evaluation pass every 100 steps counts correct tokens on the device and
 * reads the count once per pass; a checkpoint every 100 steps downloads the 6
 * weight tensors; the weights are uploaded once and everything is freed.
 * Wrong: the batch's labels (2 KiB of int32) are sent with a plain cudaMemcpy
 * from a malloc'd array, so every step the host waits for the previous step's
 * kernels before it can queue the next; and the causal attention mask (128 KiB,
 * the same every step: the sequence length is fixed) is rebuilt on the host
 * and uploaded again every step into the same device buffer.
 *
 * ENV: XFERPROF_SIM_KERNEL_TIME=100us
 * TRUTH: sync-in-loop @ labels
 * TRUTH: redundant-upload @ mask
 * (the fixes: send the labels with the batch, pinned and async; build the mask
 * on the device once. The loss read every 25 steps, the eval count once per
 * pass and the checkpoint every 100 steps are each rare, needed reads; the
 * 16-byte schedule upload costs microseconds of a 2 ms step: not small-copies) */
#include "fp_common.h"

#include <stdlib.h>

#define STEPS 300
#define SEQ 128
#define BATCH 16
#define TOKENS_BYTES (BATCH * SEQ * 256u)  /* 512 KiB of embeddings in */
#define LABEL_BYTES (BATCH * SEQ * 4u)     /* 2 KiB of int32 labels */
#define MASK_BYTES (SEQ * SEQ * 8u)        /* 128 KiB: one float2 per pair */
#define TENSORS 6
#define TENSOR_BYTES (2u << 20)
#define LOG_EVERY 25
#define EVAL_EVERY 100
#define EVAL_BATCHES 8

struct schedule {
    float step, lr, warmup, pad;
};

/* Fills the causal mask: pair (i, j) is visible when j <= i */
static void build_mask(float *mask)
{
    for (unsigned i = 0; i < SEQ; i++)
        for (unsigned j = 0; j < SEQ; j++) {
            mask[2 * (i * SEQ + j)] = j <= i ? 0.0f : -1e9f;
            mask[2 * (i * SEQ + j) + 1] = 1.0f;
        }
}

static EX_SITE void save_checkpoint(void *const *dev_w, unsigned char *host, FILE *f)
{
    for (int i = 0; i < TENSORS; i++) {
        CHECK(cudaMemcpy(host, dev_w[i], TENSOR_BYTES, cudaMemcpyDeviceToHost)); /* @ckpt */
        fwrite(host, 1, TENSOR_BYTES, f);
    }
    fflush(f);
}

/* An evaluation pass over the same double buffers as training: the host
 * fills one while the GPU reads the other. */
static EX_SITE long evaluate(const ex_kernel *k, unsigned char *const *tokens,
                             void *const *dev_tokens, cudaEvent_t *sent, int *dev_correct,
                             unsigned pass, cudaStream_t s)
{
    CHECK(cudaMemsetAsync(dev_correct, 0, sizeof *dev_correct, s));
    for (unsigned e = 0; e < EVAL_BATCHES; e++) {
        int b = e % 2;
        CHECK(cudaEventSynchronize(sent[b]));
        fp_fill_batch(tokens[b], TOKENS_BYTES, 900000 + pass * EVAL_BATCHES + e);
        CHECK(cudaMemcpyAsync(dev_tokens[b], tokens[b], TOKENS_BYTES, cudaMemcpyHostToDevice, s)); /* @eval_batch */
        CHECK(cudaEventRecord(sent[b], s));
        ex_kernel_launch(k, s); /* forward; adds its correct tokens to *dev_correct */
    }
    CHECK(cudaMemsetAsync(dev_correct, (int)pass, 1, s));
    int correct;
    CHECK(cudaMemcpy(&correct, dev_correct, sizeof correct, cudaMemcpyDeviceToHost)); /* @eval_count */
    return correct;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    cudaStream_t s = 0; /* the legacy default stream: cudaMemcpy orders with it */
    void *dev_w[TENSORS];
    unsigned char *host_w = malloc(TENSOR_BYTES);
    for (int i = 0; i < TENSORS; i++) {
        CHECK(cudaMalloc(&dev_w[i], TENSOR_BYTES));
        fp_fill_batch(host_w, TENSOR_BYTES, 300 + i);
        CHECK(cudaMemcpy(dev_w[i], host_w, TENSOR_BYTES, cudaMemcpyHostToDevice)); /* @weights */
    }
    unsigned char *tokens[2];
    void *dev_tokens[2];
    cudaEvent_t sent[2];
    for (int i = 0; i < 2; i++) {
        CHECK(cudaMallocHost((void **)&tokens[i], TOKENS_BYTES));
        CHECK(cudaMalloc(&dev_tokens[i], TOKENS_BYTES));
        CHECK(cudaEventCreateWithFlags(&sent[i], cudaEventDisableTiming));
    }
    int32_t *labels = malloc(LABEL_BYTES);
    void *dev_labels;
    CHECK(cudaMalloc(&dev_labels, LABEL_BYTES));
    float *mask, *dev_mask;
    CHECK(cudaMallocHost((void **)&mask, MASK_BYTES));
    CHECK(cudaMalloc((void **)&dev_mask, MASK_BYTES));
    struct schedule *sched, *dev_sched;
    CHECK(cudaMallocHost((void **)&sched, sizeof *sched));
    CHECK(cudaMalloc((void **)&dev_sched, sizeof *sched));
    float *loss, *dev_loss;
    CHECK(cudaMallocHost((void **)&loss, sizeof *loss));
    CHECK(cudaMalloc((void **)&dev_loss, sizeof *dev_loss));
    CHECK(cudaMemsetAsync(dev_loss, 0, sizeof *dev_loss, s));
    int *dev_correct;
    CHECK(cudaMalloc((void **)&dev_correct, sizeof *dev_correct));
    FILE *ckpt = tmpfile();
    if (ckpt == NULL) {
        perror("tmpfile");
        return 1;
    }

    for (unsigned step = 0; step < STEPS; step++) {
        int b = step % 2;
        if (step >= 2)
            CHECK(cudaEventSynchronize(sent[b]));
        fp_fill_batch(tokens[b], TOKENS_BYTES, step);
        CHECK(cudaMemcpyAsync(dev_tokens[b], tokens[b], TOKENS_BYTES, cudaMemcpyHostToDevice, s)); /* @tokens */
        CHECK(cudaEventRecord(sent[b], s));
        fp_fill_batch(labels, LABEL_BYTES, 50000 + step);
        CHECK(cudaMemcpy(dev_labels, labels, LABEL_BYTES, cudaMemcpyHostToDevice)); /* @labels */
        build_mask(mask);
        CHECK(cudaMemcpyAsync(dev_mask, mask, MASK_BYTES, cudaMemcpyHostToDevice, s)); /* @mask */
        sched->step = (float)step;
        sched->lr = 3e-4f * (step < 50 ? (float)(step + 1) / 50.0f : 1.0f);
        sched->warmup = 50.0f;
        CHECK(cudaMemcpyAsync(dev_sched, sched, sizeof *sched, cudaMemcpyHostToDevice, s)); /* @sched */
        ex_kernel_launch(&k, s); /* forward, with the mask */
        ex_kernel_launch(&k, s); /* backward */
        ex_kernel_launch(&k, s); /* optimizer, reads the schedule; adds the loss */
        CHECK(cudaMemsetAsync(dev_loss, step & 0x3f, 1, s));
        if (step % LOG_EVERY == LOG_EVERY - 1) {
            CHECK(cudaMemcpyAsync(loss, dev_loss, sizeof *loss, cudaMemcpyDeviceToHost, s)); /* @loss_log */
            CHECK(cudaStreamSynchronize(s));
            CHECK(cudaMemsetAsync(dev_loss, 0, sizeof *dev_loss, s));
            if (step % 100 == 99)
                printf("step %u mean loss %g\n", step + 1, *loss / LOG_EVERY);
        }
        if (step % EVAL_EVERY == EVAL_EVERY - 1) {
            long c = evaluate(&k, tokens, dev_tokens, sent, dev_correct, step / EVAL_EVERY, s);
            printf("eval after step %u: %ld correct tokens\n", step + 1, c);
            save_checkpoint(dev_w, host_w, ckpt);
        }
        fp_host_work_us(600); /* tokenizing the next batch */
    }
    CHECK(cudaDeviceSynchronize());
    printf("checkpoint bytes %ld\n", ftell(ckpt));
    fclose(ckpt);
    free(labels);
    free(host_w);
    for (int i = 0; i < 2; i++) {
        CHECK(cudaFreeHost(tokens[i]));
        CHECK(cudaFree(dev_tokens[i]));
        CHECK(cudaEventDestroy(sent[i]));
    }
    for (int i = 0; i < TENSORS; i++)
        CHECK(cudaFree(dev_w[i]));
    CHECK(cudaFreeHost(mask));
    CHECK(cudaFreeHost(sched));
    CHECK(cudaFreeHost(loss));
    CHECK(cudaFree(dev_labels));
    CHECK(cudaFree(dev_mask));
    CHECK(cudaFree(dev_sched));
    CHECK(cudaFree(dev_loss));
    CHECK(cudaFree(dev_correct));
    ex_kernel_fini(&k);
    return 0;
}
