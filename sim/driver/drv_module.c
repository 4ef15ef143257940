/* drv_module.c: modules, functions and kernel launches (kernels do not run:
 * a launch is timed, ordered and counted work on its stream). */
#include "xpsim_driver.h"
#include "xpsim_graph.h"
#include "xpsim_stream.h"

#include <stdlib.h>
#include <string.h>

#define MODULE_MAGIC 0x58504d4fu   /* "XPMO" */
#define FUNCTION_MAGIC 0x58504655u /* "XPFU" */

/* The simulator cannot run device code, so a module is only a handle: any
 * image loads, and any name resolves to a function that launches as a no-op. */
struct CUmod_st {
    unsigned int magic;
    const void *image;
};

struct CUfunc_st {
    unsigned int magic;
    struct CUmod_st *module;
    /* What cuFuncSetAttribute may change: the dynamic shared memory a launch
     * may ask for (48 KiB until the function opts in to more) and the
     * preferred shared memory carveout (-1: none). */
    int max_dynamic_smem;
    int carveout;
    char name[];
};

XPSIM_API CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    if (module == NULL || image == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    struct CUmod_st *m = calloc(1, sizeof *m);
    if (m == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->magic = MODULE_MAGIC;
    m->image = image;
    *module = m;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                                      CUjit_option *options, void **optionValues)
{
    return cuModuleLoadData(module, image);
}

XPSIM_API CUresult cuModuleUnload(CUmodule hmod)
{
    if (hmod == NULL || hmod->magic != MODULE_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    /* Functions obtained from the module keep pointing at it; real CUDA makes
     * them invalid, so leaking the module record is the safe mirror. */
    hmod->magic = 0;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    if (hfunc == NULL || name == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (hmod == NULL || hmod->magic != MODULE_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    size_t n = strlen(name);
    struct CUfunc_st *f = malloc(sizeof *f + n + 1);
    if (f == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    f->magic = FUNCTION_MAGIC;
    f->module = hmod;
    f->max_dynamic_smem = XPDRV_FUNC_DEFAULT_DYNAMIC_SMEM;
    f->carveout = -1;
    memcpy(f->name, name, n + 1);
    *hfunc = f;
    return CUDA_SUCCESS;
}

XPSIM_API CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    if (pi == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    if (hfunc == NULL || hfunc->magic != FUNCTION_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = 32; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = hfunc->max_dynamic_smem; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = hfunc->carveout; break;
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

/* A launch's function and configuration (the device's limits). */
static CUresult check_launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                             unsigned int bx, unsigned int by, unsigned int bz,
                             unsigned int shmem)
{
    if (f == NULL || f->magic != FUNCTION_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || gy > 65535 || gz > 65535 ||
        bx > 1024 || by > 1024 || bz > 64 || (uint64_t)bx * by * bz > 1024 || shmem > 232448)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* The two limits a function sets for itself, checked against the device's
 * (a function has no static shared memory: all of the opt-in maximum may be
 * dynamic); the cluster settings are accepted and have no effect. */
XPSIM_API CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
    if (hfunc == NULL || hfunc->magic != FUNCTION_MAGIC)
        return CUDA_ERROR_INVALID_HANDLE;
    switch (attrib) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        if (value < 0 || value > XPDRV_SMEM_PER_BLOCK_OPTIN)
            return CUDA_ERROR_INVALID_VALUE;
        hfunc->max_dynamic_smem = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        if (value < -1 || value > 100)
            return CUDA_ERROR_INVALID_VALUE;
        hfunc->carveout = value;
        return CUDA_SUCCESS;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        return CUDA_SUCCESS;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

bool xpdrv_func_valid(CUfunction f)
{
    return f != NULL && f->magic == FUNCTION_MAGIC;
}

static CUresult launch_kernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                              unsigned int bx, unsigned int by, unsigned int bz, unsigned int shmem,
                              CUstream h, bool ptds)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    if ((rc = check_launch(f, gx, gy, gz, bx, by, bz, shmem)) != CUDA_SUCCESS)
        return rc;
    CUstream s;
    if ((rc = xpsim_stream_resolve(h, ptds, dev, &s)) != CUDA_SUCCESS)
        return rc;
    /* Captured: a kernel node (kernels do not run, so their arguments are
     * not kept). */
    xpsim_node_params np = {.type = CU_GRAPH_NODE_TYPE_KERNEL,
                            .u.kernel = {.func = f, .gridDimX = gx, .gridDimY = gy,
                                         .gridDimZ = gz, .blockDimX = bx, .blockDimY = by,
                                         .blockDimZ = bz, .sharedMemBytes = shmem}};
    bool captured;
    rc = xpsim_capture_work(s, &np, &captured);
    if (captured)
        return rc;
    const xpsim_config *cfg = xpsim_config_get();
    uint64_t n = xpdrv_next_launch_number();
    /* An injected fault surfaces the way a bad kernel's does: the launch
     * succeeds and the error appears at the next synchronization. */
    xpsim_work w = {.run = NULL, .release = NULL, .ctx = NULL, .duration_ns = cfg->kernel_ns,
                    .lane = XPSIM_LANE_NONE,
                    .fault = n == cfg->fault_launch ? (CUresult)cfg->fault_error : CUDA_SUCCESS,
                    .what = "kernel"};
    xpsim_device_count_kernel(xpsim_stream_device(s));
    xpsim_stream_enqueue(s, &w);
    xpsim_debug("cuLaunchKernel #%llu %s <<<(%u,%u,%u),(%u,%u,%u)>>> stream %p%s",
                (unsigned long long)n, f->name, gx, gy, gz, bx, by, bz, (void *)s,
                w.fault ? " (faults)" : "");
    return CUDA_SUCCESS;
}

XPDRV_TWINS(cuLaunchKernel, cuLaunchKernel_ptsz,
            (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra),
            launch_kernel(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                          sharedMemBytes, hStream, ptds))

/* Kernel nodes of graphs: func must be set (CUkernel handles are not
 * simulated). */
CUresult xpdrv_kernel_check(const CUDA_KERNEL_NODE_PARAMS *p)
{
    int dev;
    CUresult rc = xpdrv_enter(&dev);
    if (rc != CUDA_SUCCESS)
        return rc;
    return check_launch(p->func, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
                        p->blockDimY, p->blockDimZ, p->sharedMemBytes);
}

CUresult xpdrv_kernel_enqueue(const CUDA_KERNEL_NODE_PARAMS *p, CUstream h, bool ptds)
{
    return launch_kernel(p->func, p->gridDimX, p->gridDimY, p->gridDimZ, p->blockDimX,
                         p->blockDimY, p->blockDimZ, p->sharedMemBytes, h, ptds);
}

XPSIM_API unsigned long long xpsimKernelLaunchCount(int device)
{
    if (device < 0 || device >= xpdrv_device_count())
        return 0;
    return xpsim_device_kernel_count(device);
}
