/* drv_error.c: cuGetErrorName and cuGetErrorString. */
#include "xpsim_driver.h"


/* NVIDIA's wording for the codes programs commonly print; the rest fall back
 * to the code's name. */
static const struct { CUresult code; const char *text; } texts[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"},
    {CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, "part or all of the requested memory range is already mapped"},
    {CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, "pointer does not correspond to a registered memory region"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

/* Generated from cuda.h (sim/gen/gen_errors.py). */
const char *xpdrv_error_name(int code);

static const char *name_of(CUresult error)
{
    return xpdrv_error_name((int)error);
}

XPSIM_API CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const char *name = name_of(error);
    *pStr = name;
    return name ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

XPSIM_API CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (pStr == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    const char *name = name_of(error);
    if (name == NULL) {
        *pStr = NULL;
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (texts[i].code == error) {
            *pStr = texts[i].text;
            return CUDA_SUCCESS;
        }
    }
    *pStr = name;
    return CUDA_SUCCESS;
}
