/* xpt_check_cu.h: the driver-API check of the simulator scenario tests that call libcuda directly. */
#ifndef XPT_CHECK_CU_H
#define XPT_CHECK_CU_H

#include "xpt_check.h"

#include <cuda.h>

/* Driver API call whose result must be exactly `expected`. */
#define CHECK_CU(call, expected)                                               \
    do {                                                                       \
        CUresult xpt_r_ = (call);                                              \
        if (xpt_r_ != (expected)) {                                            \
            const char *xpt_n_ = NULL;                                         \
            cuGetErrorName(xpt_r_, &xpt_n_);                                   \
            XPT_FAIL("%s returned %d (%s), expected %d", #call, (int)xpt_r_,   \
                     xpt_n_ ? xpt_n_ : "?", (int)(expected));                  \
        }                                                                      \
    } while (0)
#define CHECK_CU_OK(call) CHECK_CU(call, CUDA_SUCCESS)

#endif
