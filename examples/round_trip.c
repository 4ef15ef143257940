/* round_trip.c: the pitfall is copying a tensor to the host and straight
 * back (`x.cpu()` then `.cuda()`): the bytes come back unchanged, so both
 * crossings were pointless; keep the tensor on the device.
 *
 * xferprof report should say:
 *   round-trip (warning) at upload_activations: STEPS copies,
 *     STEPS * ACT_BYTES bytes (4 x 256 KiB = 1048576).
 *   nothing at upload_input: each step's input is new.
 * The activations go back to a different buffer than they came from, and each
 * step's data differ, so no upload is also redundant; STEPS is below 10. */
#include "example_util.h"

#include <string.h>

#define STEPS 4
#define ACT_BYTES (256u << 10)

static EX_SITE void upload_input(void *dev, const void *host)
{
    CHECK(cudaMemcpy(dev, host, ACT_BYTES, cudaMemcpyHostToDevice));
}

static EX_SITE void download_activations(void *host, const void *dev)
{
    CHECK(cudaMemcpy(host, dev, ACT_BYTES, cudaMemcpyDeviceToHost));
}

static EX_SITE void upload_activations(void *dev, const void *host)
{
    CHECK(cudaMemcpy(dev, host, ACT_BYTES, cudaMemcpyHostToDevice));
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    void *dev_in, *dev_next;
    CHECK(cudaMalloc(&dev_in, ACT_BYTES));
    CHECK(cudaMalloc(&dev_next, ACT_BYTES));
    unsigned char *input = malloc(ACT_BYTES);
    unsigned char *act = malloc(ACT_BYTES);
    if (input == NULL || act == NULL)
        return 1;

    for (int step = 0; step < STEPS; step++) {
        memset(input, step + 1, ACT_BYTES);
        upload_input(dev_in, input);
        ex_kernel_launch(&k, 0);
        download_activations(act, dev_in);  /* e.g. to log or inspect them */
        upload_activations(dev_next, act);  /* ... and back for the next layer */
        ex_kernel_launch(&k, 0);
    }
    CHECK(cudaDeviceSynchronize());

    free(act);
    free(input);
    CHECK(cudaFree(dev_next));
    CHECK(cudaFree(dev_in));
    ex_kernel_fini(&k);
    ex_expect("round-trip", "upload_activations", STEPS, (long long)STEPS * ACT_BYTES, NULL);
    return 0;
}
