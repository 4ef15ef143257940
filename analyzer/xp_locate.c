/* xp_locate.c: finding libxferprof.so and the simulator relative to /proc/self/exe (build tree or install). */
#include "xp_locate.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Library folders of an installed xferprof, relative to <prefix>/bin.  meson
 * can pass its libdir (XP_LIBDIR, relative to the prefix, e.g.
 * "lib/x86_64-linux-gnu") so that the exact one is tried first; the others
 * cover the usual choices so a build without it still finds an install. */
static const char *const xp_libdirs[] = {
#ifdef XP_LIBDIR
    "../" XP_LIBDIR "/xferprof",
#endif
    "../lib/xferprof",
    "../lib64/xferprof",
    "../lib/x86_64-linux-gnu/xferprof",
    "../lib/aarch64-linux-gnu/xferprof",
};
#define XP_NLIBDIRS (sizeof xp_libdirs / sizeof xp_libdirs[0])

/* The folder of the running executable, symlinks resolved (the kernel's
 * answer), so a symlink to build/analyzer/xferprof still finds build/hooks. */
static int xp_exe_dir(char *out, size_t outlen, char *err, size_t errlen)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) {
        snprintf(err, errlen, "cannot read /proc/self/exe: %s", strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) {
        snprintf(err, errlen, "odd executable path '%s'", exe);
        return -1;
    }
    *slash = '\0';
    if ((size_t)snprintf(out, outlen, "%s", exe) >= outlen) {
        snprintf(err, errlen, "executable path too long");
        return -1;
    }
    return 0;
}

static bool xp_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A simulator folder is one that holds both libraries the program will load
 * through LD_LIBRARY_PATH. */
static bool xp_is_sim_dir(const char *dir)
{
    char p[PATH_MAX];
    if ((size_t)snprintf(p, sizeof p, "%s/libcudart.so.13", dir) >= sizeof p || !xp_is_file(p))
        return false;
    if ((size_t)snprintf(p, sizeof p, "%s/libcuda.so.1", dir) >= sizeof p || !xp_is_file(p))
        return false;
    return true;
}

/* realpath() of dir/rel into out when it exists and passes ok(). */
static bool xp_try(const char *dir, const char *rel, bool (*ok)(const char *), char *out,
                   size_t outlen)
{
    char joined[PATH_MAX], real[PATH_MAX];
    if (rel && (size_t)snprintf(joined, sizeof joined, "%s/%s", dir, rel) >= sizeof joined)
        return false;
    if (!realpath(rel ? joined : dir, real) || !ok(real))
        return false;
    if ((size_t)snprintf(out, outlen, "%s", real) >= outlen)
        return false;
    return true;
}

/* The places tried, for the error message: "../hooks, ../lib/xferprof, ...". */
static void xp_tried(char *buf, size_t len, const char *first, const char *suffix)
{
    size_t pos = (size_t)snprintf(buf, len, "%s", first);
    for (size_t i = 0; i < XP_NLIBDIRS && pos < len; i++)
        pos += (size_t)snprintf(buf + pos, len - pos, ", %s%s", xp_libdirs[i], suffix);
}

int xp_locate_preload(char *out, size_t outlen, char *err, size_t errlen)
{
    char dir[PATH_MAX], rel[PATH_MAX], tried[1024];
    const char *env = getenv("XFERPROF_PRELOAD_LIB");

    if (env && *env) {
        errno = 0;
        if (xp_try(env, NULL, xp_is_file, out, outlen))
            return 0;
        snprintf(err, errlen, "XFERPROF_PRELOAD_LIB='%s': %s", env,
                 errno ? strerror(errno) : "not a file");
        return -1;
    }
    if (xp_exe_dir(dir, sizeof dir, err, errlen) != 0)
        return -1;
    if (xp_try(dir, "../hooks/libxferprof.so", xp_is_file, out, outlen))
        return 0;
    for (size_t i = 0; i < XP_NLIBDIRS; i++) {
        snprintf(rel, sizeof rel, "%s/libxferprof.so", xp_libdirs[i]);
        if (xp_try(dir, rel, xp_is_file, out, outlen))
            return 0;
    }
    xp_tried(tried, sizeof tried, "../hooks", "");
    snprintf(err, errlen,
             "cannot find libxferprof.so relative to %s (tried %s); set XFERPROF_PRELOAD_LIB",
             dir, tried);
    return -1;
}

int xp_locate_sim_dir(char *out, size_t outlen, char *err, size_t errlen)
{
    char dir[PATH_MAX], rel[PATH_MAX], tried[1024];
    const char *env = getenv("XFERPROF_SIM_DIR");

    if (env && *env) {
        if (xp_try(env, NULL, xp_is_sim_dir, out, outlen))
            return 0;
        snprintf(err, errlen, "XFERPROF_SIM_DIR='%s' does not hold libcudart.so.13 and libcuda.so.1",
                 env);
        return -1;
    }
    if (xp_exe_dir(dir, sizeof dir, err, errlen) != 0)
        return -1;
    if (xp_try(dir, "../sim", xp_is_sim_dir, out, outlen))
        return 0;
    for (size_t i = 0; i < XP_NLIBDIRS; i++) {
        snprintf(rel, sizeof rel, "%s/sim", xp_libdirs[i]);
        if (xp_try(dir, rel, xp_is_sim_dir, out, outlen))
            return 0;
    }
    xp_tried(tried, sizeof tried, "../sim", "/sim");
    snprintf(err, errlen,
             "cannot find the simulator (libcudart.so.13, libcuda.so.1) relative to %s (tried %s); "
             "set XFERPROF_SIM_DIR",
             dir, tried);
    return -1;
}
