/* example_util.h: what the pitfall examples share: error checks, the
 * "xferprof-expect" lines that say what `xferprof report` should find (the
 * golden tests in tests/golden read them, so expectations come from each
 * program's own constants), and a kernel launched from plain C.
 *
 * The kernel is a do-nothing PTX module loaded through the driver API, whose
 * functions are reached with cudaGetDriverEntryPointByVersion: the programs
 * then link only libcudart (like any CUDA program) and still put real kernel
 * launches between their copies, on a GPU (the driver JIT-compiles the PTX)
 * and on the simulator (which counts the launch). */
#ifndef EXAMPLE_UTIL_H
#define EXAMPLE_UTIL_H

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t err_ = (call);                                                       \
        if (err_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                \
                    cudaGetErrorString(err_));                                           \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

#define CHECK_CU(call)                                                                   \
    do {                                                                                 \
        CUresult err_ = (call);                                                          \
        if (err_ != CUDA_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s: CUresult %d\n", __FILE__, __LINE__, #call,       \
                    (int)err_);                                                          \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

/* Call sites are named functions that the compiler must not fold into their
 * callers, nor clone under another name (GCC's "f.constprop.0"): the report
 * names a site by its innermost frame's function. */
#if defined(__clang__)
#define EX_SITE __attribute__((noinline))
#else
#define EX_SITE __attribute__((noinline, noclone))
#endif

/* One expected finding: "xferprof-expect rule=R site=F count=N bytes=B [k=v...]".
 * site "-" is a finding without a call site of its own (per device); bytes < 0
 * means the finding's bytes are not part of the expectation; extra holds
 * " key=value" pairs that must appear in the finding's details. */
static inline void ex_expect(const char *rule, const char *site, long long count,
                             long long bytes, const char *extra)
{
    printf("xferprof-expect rule=%s site=%s count=%lld", rule, site, count);
    if (bytes >= 0)
        printf(" bytes=%lld", bytes);
    printf("%s\n", extra != NULL ? extra : "");
}

/* A program with no findings says so, so a golden test can tell "expects
 * nothing" from "printed nothing". */
static inline void ex_expect_none(void)
{
    printf("xferprof-expect none\n");
}

typedef CUresult (*ex_module_load_fn)(CUmodule *, const void *);
typedef CUresult (*ex_module_unload_fn)(CUmodule);
typedef CUresult (*ex_get_function_fn)(CUfunction *, CUmodule, const char *);
typedef CUresult (*ex_launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
                                 unsigned, unsigned, CUstream, void **, void **);

typedef struct ex_kernel {
    CUmodule module;
    CUfunction fn;
    ex_launch_fn launch;
    ex_module_unload_fn unload;
} ex_kernel;

/* The kernel every example launches: one "training step" that does nothing. */
static const char ex_step_ptx[] =
    ".version 6.0\n"
    ".target sm_50\n"
    ".address_size 64\n"
    ".visible .entry train_step()\n"
    "{\n"
    "    ret;\n"
    "}\n";

static inline void *ex_driver_fn(const char *name)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || fn == NULL) {
        fprintf(stderr, "driver entry point %s not found\n", name);
        exit(1);
    }
    return fn;
}

static inline void ex_kernel_init(ex_kernel *k)
{
    CHECK(cudaFree(NULL)); /* creates the primary context the module loads into */
    ex_module_load_fn load = (ex_module_load_fn)ex_driver_fn("cuModuleLoadData");
    ex_get_function_fn get = (ex_get_function_fn)ex_driver_fn("cuModuleGetFunction");
    k->launch = (ex_launch_fn)ex_driver_fn("cuLaunchKernel");
    k->unload = (ex_module_unload_fn)ex_driver_fn("cuModuleUnload");
    CHECK_CU(load(&k->module, ex_step_ptx));
    CHECK_CU(get(&k->fn, k->module, "train_step"));
}

static inline void ex_kernel_launch(const ex_kernel *k, cudaStream_t s)
{
    CHECK_CU(k->launch(k->fn, 1, 1, 1, 32, 1, 1, 0, (CUstream)s, NULL, NULL));
}

static inline void ex_kernel_fini(ex_kernel *k)
{
    CHECK_CU(k->unload(k->module));
}

#endif
