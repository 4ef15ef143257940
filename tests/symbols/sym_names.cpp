/* sym_names.cpp: C++ and inlined call sites at -O2, for the symbolizer's tests.
 *
 * One run makes: 2 H2D copies of 4096 bytes from dl::Loader::upload (a
 * namespaced method, not inlined), 3 H2D copies of 2048 bytes from
 * copy_chunk, inlined into upload_weights, itself inlined into main, and 1
 * H2D copy of 1024 bytes from c_upload (sym_inline_c.c), a C function
 * inlined into c_step.  The driver finds each line by the marker comment on
 * it; test_names.py checks that these really are inlined in the binary. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK_OK(x)                                                                \
    do {                                                                           \
        if ((x) != cudaSuccess) {                                                  \
            fprintf(stderr, "%s failed\n", #x);                                    \
            exit(2);                                                               \
        }                                                                          \
    } while (0)

extern "C" void c_step(void *dev, const void *host);

namespace dl {
class Loader {
public:
    explicit Loader(void *dev) : dev_(dev) {}
    __attribute__((noinline)) void upload(float *host, unsigned long n);

private:
    void *dev_;
};

void Loader::upload(float *host, unsigned long n)
{
    for (int i = 0; i < 2; i++) {
        host[0] = (float)i;
        CHECK_OK(cudaMemcpy(dev_, host, n * sizeof *host, cudaMemcpyHostToDevice)); /* SYM_UPLOAD */
    }
}
} // namespace dl

static inline __attribute__((always_inline)) void copy_chunk(void *dev, const float *host,
                                                              size_t bytes)
{
    CHECK_OK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice)); /* SYM_CHUNK */
}

static inline __attribute__((always_inline)) void upload_weights(void *dev, const float *host)
{
    for (int i = 0; i < 3; i++)
        copy_chunk(dev, host + i, 2048); /* SYM_CHUNK_CALL */
}

static float host[1024];

int main()
{
    void *dev = NULL;
    CHECK_OK(cudaMalloc(&dev, 8192));
    dl::Loader loader(dev);
    loader.upload(host, 1024); /* SYM_UPLOAD_CALL */
    upload_weights(dev, host); /* SYM_WEIGHTS_CALL */
    c_step(dev, host); /* SYM_C_STEP_CALL */
    CHECK_OK(cudaFree(dev));
    printf("done\n");
    return 0;
}
