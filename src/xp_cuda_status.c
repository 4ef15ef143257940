/* xp_cuda_status.c: CUDA status codes by name, from the generated table
 * (xp_cuda_errors.h), so that no CUDA header is needed to name them. */
#include "xp_cuda_status.h"

#include <stdio.h>

#include "xp_cuda_errors.h"

struct xp_code_name {
    int64_t code;
    const char *name;
};

#define XP_CODE_NAME(code, name) {code, name},
static const struct xp_code_name xp_runtime_names[] = {XP_CUDA_RUNTIME_ERRORS(XP_CODE_NAME)};
static const struct xp_code_name xp_driver_names[] = {XP_CUDA_DRIVER_ERRORS(XP_CODE_NAME)};
#undef XP_CODE_NAME

/* One layer's table and its length (OUT). */
static const struct xp_code_name *xp_table(bool driver, size_t *n)
{
    *n = driver ? sizeof xp_driver_names / sizeof *xp_driver_names
                : sizeof xp_runtime_names / sizeof *xp_runtime_names;
    return driver ? xp_driver_names : xp_runtime_names;
}

const char *xp_cuda_status_name(bool driver, int64_t code)
{
    size_t n, lo = 0;
    const struct xp_code_name *v = xp_table(driver, &n);
    /* The generator writes codes in increasing order: a binary search. */
    size_t hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].code < code)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && v[lo].code == code ? v[lo].name : NULL;
}

const char *xp_cuda_status_at(bool driver, size_t i, int64_t *code)
{
    size_t n;
    const struct xp_code_name *v = xp_table(driver, &n);
    if (i >= n)
        return NULL;
    *code = v[i].code;
    return v[i].name;
}

struct xp_status_str xp_cuda_status_str(bool driver, int64_t code)
{
    struct xp_status_str out;
    const char *name = xp_cuda_status_name(driver, code);
    snprintf(out.s, sizeof out.s, "%s (%lld)", name ? name : "unknown error", (long long)code);
    return out;
}
