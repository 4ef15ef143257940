// Module globals and kernel launches as nvcc emits them: symbol copies, launch configuration errors, (argv "fault") a sticky asynchronous kernel fault, and (argv "graph") graph memcpy nodes to and from symbols, kernel nodes and captured launches.
#include "xpt_check.h"

__device__ int dev_var[16];
__constant__ float c[4];

__global__ void touch(int *p, int n)
{
    // Never observed: the simulator does not execute device code, only
    // accounts for its time.  The kernel exists so nvcc registers a function.
    if ((int)threadIdx.x < n)
        p[threadIdx.x] += dev_var[threadIdx.x % 16] + (int)c[threadIdx.x % 4];
}

static int symbols(void)
{
    int in[16], out[16];
    for (int i = 0; i < 16; i++)
        in[i] = 1000 + i * 7;

    size_t sz = 0;
    CHECK_OK(cudaGetSymbolSize(&sz, dev_var));
    CHECK_EQ(sz, sizeof in);
    CHECK_OK(cudaGetSymbolSize(&sz, c));
    CHECK_EQ(sz, 4 * sizeof(float));

    // Round trip through a __device__ array.
    CHECK_OK(cudaMemcpyToSymbol(dev_var, in, sizeof in));
    memset(out, 0, sizeof out);
    CHECK_OK(cudaMemcpyFromSymbol(out, dev_var, sizeof out));
    CHECK(memcmp(in, out, sizeof in) == 0);

    // The symbol's address is ordinary device memory holding the same bytes.
    void *addr = NULL;
    CHECK_OK(cudaGetSymbolAddress(&addr, dev_var));
    CHECK(addr != NULL);
    struct cudaPointerAttributes a;
    CHECK_OK(cudaPointerGetAttributes(&a, addr));
    CHECK_EQ(a.type, cudaMemoryTypeDevice);
    memset(out, 0, sizeof out);
    CHECK_OK(cudaMemcpy(out, addr, sizeof out, cudaMemcpyDeviceToHost));
    CHECK(memcmp(in, out, sizeof in) == 0);

    // With an offset: only elements 4..7 change.
    int part[4] = {-1, -2, -3, -4};
    CHECK_OK(cudaMemcpyToSymbol(dev_var, part, sizeof part, 4 * sizeof(int)));
    CHECK_OK(cudaMemcpyFromSymbol(out, dev_var, sizeof out));
    for (int i = 0; i < 16; i++)
        CHECK_EQ(out[i], (i >= 4 && i < 8) ? part[i - 4] : in[i]);
    int two[2] = {0, 0};
    CHECK_OK(cudaMemcpyFromSymbol(two, dev_var, sizeof two, 14 * sizeof(int)));
    CHECK_EQ(two[0], in[14]);
    CHECK_EQ(two[1], in[15]);

    // Beyond the symbol: rejected, nothing written.
    CHECK_CUDA(cudaMemcpyToSymbol(dev_var, part, sizeof(int), sizeof in), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpyToSymbol(dev_var, part, sizeof part, sizeof in - sizeof(int)),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_CUDA(cudaMemcpyFromSymbol(out, dev_var, sizeof out + 1), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);
    CHECK_OK(cudaMemcpyFromSymbol(out, dev_var, sizeof out));
    CHECK_EQ(out[15], in[15]);

    // __constant__ memory round trip.
    float cin[4] = {1.5f, -2.25f, 3.0f, 1e6f}, cout[4] = {0, 0, 0, 0};
    CHECK_OK(cudaMemcpyToSymbol(c, cin, sizeof cin));
    CHECK_OK(cudaMemcpyFromSymbol(cout, c, sizeof cout));
    CHECK(memcmp(cin, cout, sizeof cin) == 0);
    CHECK_CUDA(cudaMemcpyToSymbol(c, cin, sizeof cin, sizeof(float)), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    // Async symbol copies on a stream.
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    CHECK_OK(cudaMemcpyToSymbolAsync(dev_var, in, sizeof in, 0, cudaMemcpyHostToDevice, s));
    memset(out, 0, sizeof out);
    CHECK_OK(cudaMemcpyFromSymbolAsync(out, dev_var, sizeof out, 0, cudaMemcpyDeviceToHost, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK(memcmp(in, out, sizeof in) == 0);

    // Launches.
    int *d = NULL;
    CHECK_OK(cudaMalloc(&d, 64 * sizeof(int)));
    touch<<<1, 64>>>(d, 64);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    touch<<<dim3(4, 2), dim3(8, 8), 0, s>>>(d, 64);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    CHECK_OK(cudaDeviceSynchronize());

    // An empty grid is an invalid configuration, reported as the last error.
    touch<<<0, 1>>>(d, 1);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidConfiguration);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    // So are more threads per block than any device allows.
    touch<<<1, 1025>>>(d, 1);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidConfiguration);
    // A configuration error is not sticky.
    touch<<<1, 1>>>(d, 1);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    CHECK_OK(cudaDeviceSynchronize());

    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(d));
    return 0;
}

// Run with XFERPROF_SIM_FAULT=launch:2: the second launch corrupts the
// context, which every later call reports until cudaDeviceReset.
static int fault(void)
{
    int *d = NULL;
    CHECK_OK(cudaMalloc(&d, 64 * sizeof(int)));
    // The launches are asynchronous: all three are accepted.  The kernel time
    // is set long (see meson.build) so the fault cannot have happened yet.
    for (int i = 0; i < 3; i++) {
        touch<<<1, 32>>>(d, 32);
        CHECK_CUDA(cudaPeekAtLastError(), cudaSuccess);
    }
    CHECK_CUDA(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    void *p = NULL;
    CHECK_CUDA(cudaMalloc(&p, 16), cudaErrorIllegalAddress);
    int host[4] = {0, 0, 0, 0};
    CHECK_CUDA(cudaMemcpy(d, host, sizeof host, cudaMemcpyHostToDevice), cudaErrorIllegalAddress);
    // Sticky: reading the last error does not clear it.
    CHECK_CUDA(cudaGetLastError(), cudaErrorIllegalAddress);
    CHECK_CUDA(cudaGetLastError(), cudaErrorIllegalAddress);
    CHECK_CUDA(cudaPeekAtLastError(), cudaErrorIllegalAddress);
    CHECK_CUDA(cudaStreamSynchronize(0), cudaErrorIllegalAddress);
    // The driver's UUID query needs no context: it answers, and leaves the
    // sticky error as it was (the preload relies on both, src/xp_devices.c).
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    CHECK(cuda != NULL);
    typedef int (*uuid_fn)(cudaUUID_t *, int);
    uuid_fn get_uuid = (uuid_fn)dlsym(cuda, "cuDeviceGetUuid_v2");
    CHECK(get_uuid != NULL);
    cudaUUID_t uuid;
    CHECK_EQ(get_uuid(&uuid, 0), 0);
    CHECK_CUDA(cudaPeekAtLastError(), cudaErrorIllegalAddress);
    CHECK_CUDA(cudaMalloc(&p, 16), cudaErrorIllegalAddress);

    CHECK_OK(cudaDeviceReset());
    // A fresh context: allocation, copies and launches work again.  (Launch
    // 4 and later do not fault: only the second one was chosen.)
    CHECK_OK(cudaMalloc(&p, 16));
    int in[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
    CHECK_OK(cudaMemcpy(p, in, sizeof in, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(out, p, sizeof out, cudaMemcpyDeviceToHost));
    CHECK(memcmp(in, out, sizeof in) == 0);
    touch<<<1, 4>>>((int *)p, 4);
    CHECK_OK(cudaDeviceSynchronize());
    CHECK_OK(cudaFree(p));
    return 0;
}

static unsigned long long kernel_launches(void)
{
    void *cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    CHECK(cuda != NULL);
    typedef unsigned long long (*count_fn)(int);
    count_fn count = (count_fn)dlsym(cuda, "xpsimKernelLaunchCount");
    CHECK(count != NULL);
    return count(0);
}

// Memcpy nodes to and from a __device__ variable copy the host's bytes of
// each launch; a captured <<<>>> launch and a kernel node run (are counted)
// at each launch of the graph, not when captured or added.
static int graph(void)
{
    int in[16], out[16], *d = NULL;
    CHECK_OK(cudaMalloc(&d, 64 * sizeof(int)));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    unsigned long long before = kernel_launches();

    CHECK_OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    touch<<<1, 4, 0, s>>>(d, 4);
    CHECK_OK(cudaGetLastError());
    cudaGraph_t g;
    CHECK_OK(cudaStreamEndCapture(s, &g));
    CHECK_EQ(kernel_launches(), before);
    cudaGraphNode_t nodes[1];
    size_t n = 1;
    CHECK_OK(cudaGraphGetNodes(g, nodes, &n));
    CHECK_EQ(n, 1);
    enum cudaGraphNodeType t;
    CHECK_OK(cudaGraphNodeGetType(nodes[0], &t));
    CHECK_EQ(t, cudaGraphNodeTypeKernel);

    cudaGraphNode_t to, from, k;
    CHECK_OK(cudaGraphAddMemcpyNodeToSymbol(&to, g, nodes, 1, dev_var, in, sizeof in, 0,
                                            cudaMemcpyHostToDevice));
    int nn = 4;
    void *args[] = {&d, &nn};
    cudaKernelNodeParams kp = {(void *)touch, dim3(1), dim3(4), 0, args, NULL};
    CHECK_OK(cudaGraphAddKernelNode(&k, g, &to, 1, &kp));
    // The last 8 ints, read back to the front of out.
    CHECK_OK(cudaGraphAddMemcpyNodeFromSymbol(&from, g, &k, 1, out, dev_var, 8 * sizeof(int),
                                              8 * sizeof(int), cudaMemcpyDefault));
    cudaGraphExec_t x;
    CHECK_OK(cudaGraphInstantiate(&x, g, 0));
    for (int round = 1; round <= 2; round++) {
        for (int i = 0; i < 16; i++)
            in[i] = round * 100 + i;
        memset(out, 0, sizeof out);
        CHECK_OK(cudaGraphLaunch(x, s));
        CHECK_OK(cudaStreamSynchronize(s));
        for (int i = 0; i < 8; i++)
            CHECK_EQ(out[i], round * 100 + 8 + i);
        CHECK_EQ(kernel_launches(), before + 2u * (unsigned)round);
    }
    // Re-aimed in the executable graph: the first 4 ints, to out[8..].
    CHECK_OK(cudaGraphExecMemcpyNodeSetParamsFromSymbol(x, from, out + 8, dev_var, 4 * sizeof(int),
                                                        0, cudaMemcpyDeviceToHost));
    CHECK_OK(cudaGraphLaunch(x, s));
    CHECK_OK(cudaStreamSynchronize(s));
    for (int i = 0; i < 4; i++)
        CHECK_EQ(out[8 + i], 200 + i);
    // The kernel node re-launched with another configuration, in the
    // executable graph (jacobiCudaGraphs' way of alternating arguments) and
    // in the graph; still one launch per graph launch.
    kp.gridDim = dim3(2);
    CHECK_OK(cudaGraphExecKernelNodeSetParams(x, k, &kp));
    CHECK_OK(cudaGraphKernelNodeSetParams(k, &kp));
    unsigned long long at = kernel_launches();
    CHECK_OK(cudaGraphLaunch(x, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_EQ(kernel_launches(), at + 2u);
    CHECK_CUDA(cudaGraphExecKernelNodeSetParams(x, from, &kp), cudaErrorInvalidValue);
    cudaKernelNodeParams bad = kp;
    bad.func = (void *)in;   // not a registered kernel
    CHECK_CUDA(cudaGraphExecKernelNodeSetParams(x, k, &bad), cudaErrorInvalidDeviceFunction);
    CHECK_CUDA(cudaGraphKernelNodeSetParams(k, NULL), cudaErrorInvalidValue);
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);   // the last failure, cleared
    // Beyond the variable, and not a symbol at all.
    CHECK_CUDA(cudaGraphMemcpyNodeSetParamsToSymbol(to, dev_var, in, sizeof in, 4,
                                                    cudaMemcpyHostToDevice),
               cudaErrorInvalidValue);
    CHECK_CUDA(cudaGraphMemcpyNodeSetParamsToSymbol(to, in, in, 4, 0, cudaMemcpyHostToDevice),
               cudaErrorInvalidSymbol);
    CHECK_OK(cudaGraphMemcpyNodeSetParamsToSymbol(to, c, in, sizeof(float), 0,
                                                  cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidSymbol);   // the last failure
    CHECK_OK(cudaGetLastError());

    CHECK_OK(cudaGraphExecDestroy(x));
    CHECK_OK(cudaGraphDestroy(g));
    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(d));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "fault") == 0)
        return fault();
    if (argc > 1 && strcmp(argv[1], "graph") == 0)
        return graph();
    return symbols();
}
