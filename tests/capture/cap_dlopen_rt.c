/* cap_dlopen_rt.c: the CUDA runtime reached only through dlopen() and
 * dlsym()/dlvsym(), as ctypes, TensorFlow's stream executor and CuPy reach
 * it: no NEEDED entry, no link-time binding.  argv[1] is the runtime to
 * open (libcudart.so.13, or the simulator's libcudart.so.12 by its path),
 * argv[2] its major version, which says the prefetch's signature. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAY(name, value) printf("%s 0x%llx\n", (name), (unsigned long long)(uintptr_t)(value))

enum { N = 4096 };

static void *must(void *p, const char *what)
{
    if (p == NULL) {
        fprintf(stderr, "%s: %s\n", what, dlerror());
        exit(2);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int major = atoi(argv[2]);
    void *h = must(dlopen(argv[1], RTLD_NOW | RTLD_LOCAL), "dlopen");
    cudaError_t (*malloc_)(void **, size_t) = (cudaError_t (*)(void **, size_t))must(
        dlsym(h, "cudaMalloc"), "cudaMalloc");
    cudaError_t (*managed)(void **, size_t, unsigned) =
        (cudaError_t (*)(void **, size_t, unsigned))must(dlsym(h, "cudaMallocManaged"),
                                                         "cudaMallocManaged");
    cudaError_t (*copy)(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t) =
        (cudaError_t (*)(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t))must(
            dlsym(h, "cudaMemcpyAsync"), "cudaMemcpyAsync");
    /* The same function by its version, as a versioned lookup asks for it. */
    char node[32];
    snprintf(node, sizeof node, "libcudart.so.%d", major);
    cudaError_t (*copy_v)(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t) =
        (cudaError_t (*)(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t))must(
            dlvsym(h, "cudaMemcpyAsync", node), "dlvsym cudaMemcpyAsync");
    cudaError_t (*sync)(cudaStream_t) =
        (cudaError_t (*)(cudaStream_t))must(dlsym(h, "cudaStreamSynchronize"), "sync");
    cudaError_t (*free_)(void *) = (cudaError_t (*)(void *))must(dlsym(h, "cudaFree"), "free");
    void *prefetch = must(dlsym(h, "cudaMemPrefetchAsync"), "cudaMemPrefetchAsync");
    SAY("same_fn", copy == copy_v);

    unsigned char host[N], back[N];
    for (size_t i = 0; i < N; i++)
        host[i] = (unsigned char)(i * 7);
    void *d = NULL;
    SAY("rc_malloc", malloc_(&d, N));
    SAY("rc_h2d", copy(d, host, N, cudaMemcpyHostToDevice, NULL));
    SAY("rc_d2h", copy_v(back, d, N / 2, cudaMemcpyDeviceToHost, NULL));
    SAY("rc_sync", sync(NULL));
    SAY("same", memcmp(back, host, N / 2) == 0);
    void *m = NULL;
    SAY("rc_managed", managed(&m, N, cudaMemAttachGlobal));
    if (major >= 13) {
        struct cudaMemLocation loc = {.type = cudaMemLocationTypeDevice, .id = 0};
        SAY("rc_prefetch", ((cudaError_t (*)(const void *, size_t, struct cudaMemLocation,
                                             unsigned, cudaStream_t))prefetch)(m, N, loc, 0,
                                                                               NULL));
    } else {
        SAY("rc_prefetch", ((cudaError_t (*)(const void *, size_t, int, cudaStream_t))prefetch)(
                               m, N, 0, NULL));
    }
    SAY("rc_sync", sync(NULL));
    SAY("rc_free", free_(d));
    SAY("rc_free", free_(m));
    return 0;
}
