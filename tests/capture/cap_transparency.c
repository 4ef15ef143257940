/* cap_transparency.c: prints what the program can see of a series of calls,
 * failing ones included: return codes, the last-error state after each,
 * errno across them.  test_transparency.py runs it with and without the
 * preload and compares the output byte for byte.  Exits with status 3 (or
 * argv[1]) so that passing the status through is checked too.  Nothing that
 * depends on addresses is printed. */
#include "cap_util.h"

#include <errno.h>

static void say(const char *what, cudaError_t rc)
{
    cudaError_t peek = cudaPeekAtLastError();
    cudaError_t last = cudaGetLastError();
    cudaError_t after = cudaGetLastError();
    printf("%-28s rc=%d (%s) peek=%d last=%d after=%d\n", what, (int)rc, cudaGetErrorName(rc),
           (int)peek, (int)last, (int)after);
}

int main(int argc, char **argv)
{
    int status = argc > 1 ? atoi(argv[1]) : 3;
    void *dev = NULL, *big = NULL, *pinned = NULL, *host = malloc(1 << 16);
    cudaError_t rc;

    errno = 4321;
    rc = cudaMalloc(&dev, 1 << 16);
    printf("errno after cudaMalloc ok: %d\n", errno);
    say("cudaMalloc", rc);

    errno = 1234;
    rc = cudaMalloc(&big, (size_t)1 << 40);
    printf("errno after cudaMalloc oom: %d\n", errno);
    printf("oom leaves pointer: %s\n", big == NULL ? "NULL" : "set");
    say("cudaMalloc oom", rc);

    /* Two failures in a row: the last one is what cudaGetLastError gives. */
    (void)cudaFree((void *)(uintptr_t)0x1000);
    rc = cudaMemcpy(dev, host, 64, (enum cudaMemcpyKind)9);
    say("cudaFree bogus + bad kind", rc);

    errno = 77;
    rc = cudaFree((void *)(uintptr_t)0x1000);
    printf("errno after cudaFree bogus: %d\n", errno);
    say("cudaFree bogus", rc);

    errno = 55;
    rc = cudaMemcpy(dev, host, 64, cudaMemcpyHostToDevice);
    printf("errno after cudaMemcpy: %d\n", errno);
    say("cudaMemcpy", rc);
    rc = cudaMemcpy(dev, host, 64, cudaMemcpyDeviceToHost); /* wrong way round */
    say("cudaMemcpy mismatched kind", rc);
    rc = cudaMemcpy(dev, host, (size_t)1 << 20, cudaMemcpyHostToDevice); /* past the end */
    say("cudaMemcpy too long", rc);
    rc = cudaMemcpy(dev, host, 64, (enum cudaMemcpyKind)7);
    say("cudaMemcpy invalid kind", rc);
    rc = cudaMemcpyAsync(dev, host, 64, cudaMemcpyHostToDevice, (cudaStream_t)(uintptr_t)0xdead0);
    say("cudaMemcpyAsync bad stream", rc);

    rc = cudaMallocHost(&pinned, 8192);
    say("cudaMallocHost", rc);
    rc = cudaHostRegister(pinned, 4096, cudaHostRegisterDefault); /* already pinned */
    say("cudaHostRegister pinned", rc);
    rc = cudaHostUnregister(host); /* never registered */
    say("cudaHostUnregister", rc);
    rc = cudaFree(pinned); /* pinned memory is not cudaFree's */
    say("cudaFree pinned", rc);
    rc = cudaFreeHost(pinned);
    say("cudaFreeHost", rc);
    rc = cudaFreeHost(pinned);
    say("cudaFreeHost twice", rc);

    rc = cudaStreamSynchronize((cudaStream_t)(uintptr_t)0xdead0);
    say("cudaStreamSynchronize bad", rc);
    rc = cudaEventSynchronize((cudaEvent_t)(uintptr_t)0xdead0);
    say("cudaEventSynchronize bad", rc);
    rc = cudaSetDevice(5);
    say("cudaSetDevice 5", rc);
    rc = cudaDeviceSynchronize();
    say("cudaDeviceSynchronize", rc);

    /* The error a failing call leaves is still there for a later query that
     * the preload does not hook. */
    (void)cudaFree((void *)(uintptr_t)0x1000);
    struct cudaPointerAttributes a;
    rc = cudaPointerGetAttributes(&a, host);
    printf("pageable type %d\n", (int)a.type);
    say("after attribute query", rc);

    rc = cudaFree(dev);
    say("cudaFree", rc);
    rc = cudaFree(dev);
    say("cudaFree twice", rc);
    free(host);
    fflush(stdout);
    fprintf(stderr, "cap_transparency: exiting with %d\n", status);
    return status;
}
