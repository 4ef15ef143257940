/* xp_cuda_status.h: CUDA status codes by name, for whoever shows a failed call. */
#ifndef XP_CUDA_STATUS_H
#define XP_CUDA_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The enumerator's name of code: cudaError_t for the runtime, CUresult for
 * the driver (driver true); NULL for a code neither header names. */
const char *xp_cuda_status_name(bool driver, int64_t code);

/* The i-th named code of a layer in increasing code order, with *code (OUT);
 * NULL past the last: how the database's cuda_error_names is filled. */
const char *xp_cuda_status_at(bool driver, size_t i, int64_t *code);

/* "cudaErrorInvalidValue (1)", or "unknown error (12345)": how a status is
 * shown to a person (the code stays visible: it is what a search finds). */
struct xp_status_str {
    char s[96];
};
struct xp_status_str xp_cuda_status_str(bool driver, int64_t code);

#endif
