/* A program built against NVIDIA's CUDA 12 headers and the simulator's libcudart.so.12: stream capture with CUDA 12's three forms of cudaStreamGetCaptureInfo (3, 6 and 7 arguments), and a captured graph replayed with new bytes at each launch. */
#include "xpt_check.h"

#if CUDART_VERSION < 12000 || CUDART_VERSION >= 13000
#error "built against CUDA 12's headers"
#endif

#define N (16u << 10)

typedef cudaError_t (*legacy_info_fn)(cudaStream_t, enum cudaStreamCaptureStatus *,
                                      unsigned long long *);

int main(void)
{
    CHECK_FROM_SIM("cudaStreamBeginCapture");
    unsigned char *pin, *out;
    void *dev;
    CHECK_OK(cudaMallocHost((void **)&pin, N));
    CHECK_OK(cudaMallocHost((void **)&out, N));
    CHECK_OK(cudaMalloc(&dev, N));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));

    CHECK_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    CHECK_OK(cudaMemcpyAsync(dev, pin, N, cudaMemcpyHostToDevice, s));
    CHECK_OK(cudaMemcpyAsync(out, dev, N, cudaMemcpyDeviceToHost, s));

    /* cudaStreamGetCaptureInfo is the 6-argument _v2 in CUDA 12's header. */
    enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    unsigned long long id2 = 0, id3 = 0, id1 = 0;
    cudaGraph_t g2 = NULL, g3 = NULL;
    const cudaGraphNode_t *deps = NULL;
    const cudaGraphEdgeData *edges = NULL;
    size_t n2 = 0, n3 = 0;
    CHECK_OK(cudaStreamGetCaptureInfo(s, &st, &id2, &g2, &deps, &n2));
    CHECK_EQ(st, cudaStreamCaptureStatusActive);
    CHECK_EQ(n2, 1);
    CHECK_OK(cudaStreamGetCaptureInfo_v3(s, &st, &id3, &g3, &deps, &edges, &n3));
    CHECK_EQ(st, cudaStreamCaptureStatusActive);
    CHECK(g3 == g2 && id3 == id2 && id2 != 0);
    CHECK_EQ(n3, 1);
    CHECK(edges != NULL && edges[0].type == 0);
    /* The legacy 3-argument export, as a binary built before 11.3 binds it. */
    legacy_info_fn legacy = (legacy_info_fn)dlsym(RTLD_DEFAULT, "cudaStreamGetCaptureInfo");
    CHECK(legacy != NULL);
    st = cudaStreamCaptureStatusNone;
    CHECK_OK(legacy(s, &st, &id1));
    CHECK_EQ(st, cudaStreamCaptureStatusActive);
    CHECK(id1 == id2);

    cudaGraph_t g;
    CHECK_OK(cudaStreamEndCapture(s, &g));
    CHECK(g == g2);
    CHECK_OK(legacy(s, &st, &id1));
    CHECK_EQ(st, cudaStreamCaptureStatusNone);

    cudaGraphExec_t x;
    CHECK_OK(cudaGraphInstantiate(&x, g, 0));
    for (unsigned seed = 1; seed <= 2; seed++) {
        xpt_fill(pin, N, seed);
        memset(out, 0, N);
        CHECK_OK(cudaGraphLaunch(x, s));
        CHECK_OK(cudaStreamSynchronize(s));
        CHECK_PATTERN(out, N, seed);
    }
    cudaGraphExecUpdateResultInfo info;
    CHECK_OK(cudaGraphExecUpdate(x, g, &info));
    CHECK_EQ(info.result, cudaGraphExecUpdateSuccess);
    CHECK_OK(cudaGraphExecDestroy(x));
    CHECK_OK(cudaGraphDestroy(g));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(dev));
    CHECK_OK(cudaFreeHost(pin));
    CHECK_OK(cudaFreeHost(out));
    printf("cuda12: capture info in three forms, replay\n");
    return 0;
}
