/* xpt_check.h: assertion macros shared by the simulator scenario tests. */
#ifndef XPT_CHECK_H
#define XPT_CHECK_H

/* Every scenario test is a plain CUDA program: it exits 0 when all checks
 * hold and 1 at the first one that does not, after saying on stderr where,
 * what was checked and which values were seen, so a failing meson test log
 * alone tells what broke. */

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define XPT_FAIL(...)                                                          \
    do {                                                                       \
        fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);                  \
        fprintf(stderr, __VA_ARGS__);                                          \
        fputc('\n', stderr);                                                   \
        exit(1);                                                               \
    } while (0)

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond))                                                           \
            XPT_FAIL("CHECK(%s)", #cond);                                      \
    } while (0)

/* CHECK with a printf-style explanation of the values involved. */
#define CHECK_MSG(cond, ...)                                                   \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: FAIL: CHECK(%s): ", __FILE__, __LINE__,    \
                    #cond);                                                    \
            fprintf(stderr, __VA_ARGS__);                                      \
            fputc('\n', stderr);                                               \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

/* Runtime API call whose result must be exactly `expected`. */
#define CHECK_CUDA(call, expected)                                             \
    do {                                                                       \
        cudaError_t xpt_got_ = (call);                                         \
        cudaError_t xpt_want_ = (expected);                                    \
        if (xpt_got_ != xpt_want_)                                             \
            XPT_FAIL("%s returned %d (%s), expected %d (%s)", #call,           \
                     (int)xpt_got_, cudaGetErrorName(xpt_got_),                \
                     (int)xpt_want_, cudaGetErrorName(xpt_want_));             \
    } while (0)

#define CHECK_OK(call) CHECK_CUDA(call, cudaSuccess)

/* Integer equality with both values printed. */
#define CHECK_EQ(a, b)                                                         \
    do {                                                                       \
        long long xpt_a_ = (long long)(a);                                     \
        long long xpt_b_ = (long long)(b);                                     \
        if (xpt_a_ != xpt_b_)                                                  \
            XPT_FAIL("CHECK_EQ(%s, %s): %lld != %lld", #a, #b, xpt_a_, xpt_b_); \
    } while (0)

/* Wall clock of the host, in seconds, for lower-bound timing checks. */
static inline double xpt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Byte i of the test pattern number `seed`: varies with both so a copy from
 * the wrong offset or the wrong buffer is caught. */
static inline unsigned char xpt_pattern(size_t i, unsigned seed)
{
    return (unsigned char)((i * 131u + (i >> 8) * 7u + seed * 29u + 1u) & 0xffu);
}

static inline void xpt_fill(void *buf, size_t n, unsigned seed)
{
    unsigned char *p = (unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        p[i] = xpt_pattern(i, seed);
}

/* Index of the first byte that differs from the pattern, or n if none. */
static inline size_t xpt_find_mismatch(const void *buf, size_t n, unsigned seed)
{
    const unsigned char *p = (const unsigned char *)buf;
    for (size_t i = 0; i < n; i++)
        if (p[i] != xpt_pattern(i, seed))
            return i;
    return n;
}

#define CHECK_PATTERN(buf, n, seed)                                            \
    do {                                                                       \
        size_t xpt_n_ = (n);                                                   \
        size_t xpt_at_ = xpt_find_mismatch((buf), xpt_n_, (seed));             \
        if (xpt_at_ != xpt_n_)                                                 \
            XPT_FAIL("%s does not hold pattern %u: byte %zu is 0x%02x, "       \
                     "expected 0x%02x", #buf, (unsigned)(seed), xpt_at_,        \
                     ((const unsigned char *)(buf))[xpt_at_],                  \
                     xpt_pattern(xpt_at_, (seed)));                            \
    } while (0)

/* Every byte of buf[0..n) equals v. */
#define CHECK_BYTES(buf, n, v)                                                 \
    do {                                                                       \
        const unsigned char *xpt_p_ = (const unsigned char *)(buf);            \
        size_t xpt_n_ = (n);                                                   \
        for (size_t xpt_i_ = 0; xpt_i_ < xpt_n_; xpt_i_++)                     \
            if (xpt_p_[xpt_i_] != (unsigned char)(v))                          \
                XPT_FAIL("%s[%zu] is 0x%02x, expected 0x%02x", #buf, xpt_i_,   \
                         xpt_p_[xpt_i_], (unsigned)(unsigned char)(v));        \
    } while (0)

/* Reads an unsigned size from the environment with the simulator's binary
 * suffixes (K/M/G), so a test agrees with XFERPROF_SIM_MEMORY as set by meson. */
static inline unsigned long long xpt_env_size(const char *name, unsigned long long fallback)
{
    const char *s = getenv(name);
    if (!s || !*s)
        return fallback;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'K': case 'k': v <<= 10; break;
    case 'M': case 'm': v <<= 20; break;
    case 'G': case 'g': v <<= 30; break;
    default: break;
    }
    return v;
}

/* The file the dynamic linker bound `name` to, as it sees it now. */
static inline const char *xpt_symbol_file(const char *name)
{
    void *f = dlsym(RTLD_DEFAULT, name);
    Dl_info info;
    if (!f || !dladdr(f, &info) || !info.dli_fname)
        return NULL;
    return info.dli_fname;
}

/* True when `file` lies in the simulator's build directory: XPT_SIM_DIR (set
 * by meson.build) when given, else any directory named sim. */
static inline int xpt_file_is_sim(const char *file)
{
    if (!file)
        return 0;
    const char *dir = getenv("XPT_SIM_DIR");
    char rdir[PATH_MAX], rfile[PATH_MAX];
    if (dir && realpath(dir, rdir) && realpath(file, rfile)) {
        size_t n = strlen(rdir);
        return strncmp(rfile, rdir, n) == 0 && rfile[n] == '/';
    }
    return strstr(file, "/sim/") != NULL || strncmp(file, "sim/", 4) == 0;
}

/* True when `file` is xferprof's preload, which `xferprof run --sim` puts in
 * front of the simulator (the sim-profiled suite): it forwards every call it
 * hooks to the next definition, the simulator's. */
static inline int xpt_file_is_profiler(const char *file)
{
    const char *base = file ? strrchr(file, '/') : NULL;
    return base && strcmp(base + 1, "libxferprof.so") == 0;
}

#define CHECK_FROM_SIM(name)                                                   \
    do {                                                                       \
        const char *xpt_f_ = xpt_symbol_file(name);                            \
        CHECK_MSG(xpt_file_is_sim(xpt_f_) || xpt_file_is_profiler(xpt_f_),     \
                  "%s comes from %s, not the simulator", (name),               \
                  xpt_f_ ? xpt_f_ : "(unresolved)");                           \
    } while (0)

#endif
