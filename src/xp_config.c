/* xp_config.c: the preload's settings from XFERPROF_* variables, and the expansion of output patterns. */
#include "xp_config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "xp_format.h"

/* Keeps the first reason only: the preload prints one line, and the first
 * malformed setting is the one to fix first. */
static void xp_config_fail(int *rc, char *err, size_t errlen, const char *name,
                           const char *value, const char *what)
{
    if (*rc == 0 && err && errlen)
        snprintf(err, errlen, "%s='%.64s%s' %s", name, value, strlen(value) > 64 ? "..." : "",
                 what);
    *rc = -1;
}

/* An empty variable counts as unset: `XFERPROF_OUTPUT= prog` is how people
 * clear a setting in a shell.  secure_getenv: in a set-user-ID program no
 * setting comes from the user's environment (the engine does not start
 * there at all; this is the second lock on that door). */
static const char *xp_env(const char *name)
{
    const char *v = secure_getenv(name);
    return v && *v ? v : NULL;
}

/* Decimal digits only (no sign, no blanks, no "0x"): a typo must not silently
 * become some other depth. */
int xp_config_parse_depth(const char *s, int *out)
{
    long v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        v = v * 10 + (*s - '0');
        if (v > XP_MAX_FRAMES)
            return -1;
    }
    *out = (int)v;
    return 0;
}

/* The index of s in names (n of them), or -1.  Exact words only: "Full"
 * or "on" is a typo to report, not a setting to guess. */
static int name_index(const char *const *names, unsigned n, const char *s)
{
    for (unsigned m = 0; m < n; m++)
        if (names[m] && strcmp(s, names[m]) == 0)
            return (int)m;
    return -1;
}

static const char *const fp_names[] = {
    [XP_FP_MODE_OFF] = "off", [XP_FP_MODE_SAMPLED] = "sampled", [XP_FP_MODE_FULL] = "full"};

int xp_config_parse_fingerprint(const char *s, xp_fp_mode *out)
{
    int m = name_index(fp_names, sizeof fp_names / sizeof fp_names[0], s);
    if (m < 0)
        return -1;
    *out = (xp_fp_mode)m;
    return 0;
}

const char *xp_config_fingerprint_name(xp_fp_mode m)
{
    return (unsigned)m < sizeof fp_names / sizeof fp_names[0] ? fp_names[m] : "?";
}

static const char *const capture_names[] = {
    [XP_CAPTURE_NONE] = "none", [XP_CAPTURE_PROFILER] = "cudaProfilerApi",
    [XP_CAPTURE_NVTX] = "nvtx"};

int xp_config_parse_capture(const char *s, xp_capture *out)
{
    int m = name_index(capture_names, sizeof capture_names / sizeof capture_names[0], s);
    if (m < 0)
        return -1;
    *out = (xp_capture)m;
    return 0;
}

const char *xp_config_capture_name(xp_capture c)
{
    return (unsigned)c < sizeof capture_names / sizeof capture_names[0] ? capture_names[c] : "?";
}

/* Digits, then at most 9 after a '.': no sign, exponent or blank, which
 * strtod would take (and "1e9" seconds is a typo more often than a wish). */
int xp_config_parse_seconds(const char *s, uint64_t *ns)
{
    uint64_t whole = 0, frac = 0, scale = 1000000000u;
    const char *p = s;
    for (; *p >= '0' && *p <= '9'; p++) {
        whole = whole * 10 + (uint64_t)(*p - '0');
        if (whole > 1000000)
            return -1;
    }
    bool digits = p > s;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++, digits = true) {
            if (scale == 1)
                return -1;
            scale /= 10;
            frac += (uint64_t)(*p - '0') * scale;
        }
    }
    if (!digits || *p != '\0')
        return -1;
    *ns = whole * 1000000000u + frac;
    return 0;
}

int xp_config_parse_nvtx_capture(const char *s, xp_config *c)
{
    const char *at = strrchr(s, '@');
    size_t n = at ? (size_t)(at - s) : strlen(s);
    const char *dom = at ? at + 1 : "";
    if (n == 0 || n > XP_CAPTURE_NAME_MAX || (at && *dom == '\0') ||
        strlen(dom) > XP_CAPTURE_NAME_MAX)
        return -1;
    memcpy(c->nvtx_name, s, n);
    c->nvtx_name[n] = '\0';
    c->nvtx_any_domain = strcmp(dom, "*") == 0;
    snprintf(c->nvtx_domain, sizeof c->nvtx_domain, "%s", c->nvtx_any_domain ? "" : dom);
    return 0;
}

/* The capture window's settings (nsys's --capture-range, --nvtx-capture,
 * --delay, --duration), checked together: a range name without the nvtx
 * range, or the nvtx range without a name, is a mistake to report, not a
 * window to guess.  Any malformed setting leaves no window at all. */
static void xp_config_window(xp_config *c, int *rc, char *err, size_t errlen)
{
    const char *v;
    /* Its own result, so that a window setting is judged alone; a reason
     * is written only when no earlier setting gave one. */
    int wrc = 0;
    char *e = *rc == 0 ? err : NULL;
    if ((v = xp_env("XFERPROF_CAPTURE_RANGE")) && xp_config_parse_capture(v, &c->capture) != 0)
        xp_config_fail(&wrc, e, errlen, "XFERPROF_CAPTURE_RANGE", v,
                       "is not one of none, cudaProfilerApi, nvtx (--capture-range)");
    const char *nvtx = xp_env("XFERPROF_NVTX_CAPTURE");
    if (nvtx && xp_config_parse_nvtx_capture(nvtx, c) != 0)
        xp_config_fail(&wrc, e, errlen, "XFERPROF_NVTX_CAPTURE", nvtx,
                       "is not NAME, NAME@DOMAIN or NAME@* (--nvtx-capture)");
    else if (nvtx && c->capture != XP_CAPTURE_NVTX && wrc == 0)
        xp_config_fail(&wrc, e, errlen, "XFERPROF_NVTX_CAPTURE", nvtx,
                       "needs XFERPROF_CAPTURE_RANGE=nvtx (--capture-range=nvtx)");
    else if (!nvtx && c->capture == XP_CAPTURE_NVTX)
        xp_config_fail(&wrc, e, errlen, "XFERPROF_CAPTURE_RANGE", "nvtx",
                       "needs the range's name in XFERPROF_NVTX_CAPTURE (--nvtx-capture)");
    if ((v = xp_env("XFERPROF_DELAY")) && xp_config_parse_seconds(v, &c->delay_ns) != 0)
        xp_config_fail(&wrc, e, errlen, "XFERPROF_DELAY", v,
                       "is not a number of seconds such as 2 or 0.5 (--delay)");
    if ((v = xp_env("XFERPROF_DURATION")) &&
        (xp_config_parse_seconds(v, &c->duration_ns) != 0 || c->duration_ns == 0))
        xp_config_fail(&wrc, e, errlen, "XFERPROF_DURATION", v,
                       "is not a number of seconds above 0 such as 2 or 0.5 (--duration)");
    if (wrc != 0) {
        *rc = -1;
        c->capture = XP_CAPTURE_NONE;
        c->delay_ns = c->duration_ns = 0;
        c->nvtx_name[0] = c->nvtx_domain[0] = '\0';
        c->nvtx_any_domain = false;
    }
    c->window = c->capture != XP_CAPTURE_NONE || c->delay_ns || c->duration_ns;
}

int xp_config_load(xp_config *c, char *err, size_t errlen)
{
    int rc = 0;
    const char *v;

    if (err && errlen)
        err[0] = '\0';
    memset(c, 0, sizeof *c);
    snprintf(c->output, sizeof c->output, "%s", XP_DEFAULT_OUTPUT);
    c->stack_depth = XP_DEFAULT_STACK_DEPTH;
    c->fingerprint = XP_DEFAULT_FINGERPRINT;
    c->journal_max = XP_DEFAULT_JOURNAL_MAX;

    if ((v = xp_env("XFERPROF_OUTPUT"))) {
        if (strlen(v) < sizeof c->output)
            memcpy(c->output, v, strlen(v) + 1);
        else
            xp_config_fail(&rc, err, errlen, "XFERPROF_OUTPUT", v, "is longer than PATH_MAX");
    }
    if ((v = xp_env("XFERPROF_STACK_DEPTH")) && xp_config_parse_depth(v, &c->stack_depth) != 0) {
        c->stack_depth = XP_DEFAULT_STACK_DEPTH;
        xp_config_fail(&rc, err, errlen, "XFERPROF_STACK_DEPTH", v,
                       "is not an integer from 0 to 256");
    }
    if ((v = xp_env("XFERPROF_FINGERPRINT")) &&
        xp_config_parse_fingerprint(v, &c->fingerprint) != 0) {
        c->fingerprint = XP_DEFAULT_FINGERPRINT;
        xp_config_fail(&rc, err, errlen, "XFERPROF_FINGERPRINT", v,
                       "is not one of off, sampled, full");
    }
    if ((v = xp_env("XFERPROF_CLOCK"))) {
        if (strcmp(v, "monotonic") == 0 || strcmp(v, "tsc") == 0)
            c->clock_monotonic = v[0] == 'm';
        else
            xp_config_fail(&rc, err, errlen, "XFERPROF_CLOCK", v,
                           "is neither tsc nor monotonic");
    }
    if ((v = xp_env("XFERPROF_JOURNAL_MAX_MIB"))) {
        char *end;
        errno = 0;
        unsigned long long mib = strtoull(v, &end, 10);
        /* Under 16 MiB the growth steps and the chunks threads hold open
         * are most of it: not a bound that can be kept. */
        if (errno == 0 && end != v && *end == '\0' && v[0] != '-' &&
            (mib == 0 || (mib >= 16 && mib <= (1ull << 20))))
            c->journal_max = (uint64_t)mib << 20;
        else
            xp_config_fail(&rc, err, errlen, "XFERPROF_JOURNAL_MAX_MIB", v,
                           "is neither 0 (no bound) nor an integer from 16 to 1048576");
    }
    if ((v = xp_env("XFERPROF_QUIET"))) {
        if (strcmp(v, "1") == 0)
            c->quiet = true;
        else if (strcmp(v, "0") != 0)
            xp_config_fail(&rc, err, errlen, "XFERPROF_QUIET", v, "is neither 1 nor 0");
    }
    if ((v = xp_env("XFERPROF_MANIFEST"))) {
        if (strlen(v) < sizeof c->manifest)
            memcpy(c->manifest, v, strlen(v) + 1);
        else
            xp_config_fail(&rc, err, errlen, "XFERPROF_MANIFEST", v, "is longer than PATH_MAX");
    }
    xp_config_window(c, &rc, err, errlen);
    return rc;
}

/* The value of the first of `names` that is set (and not empty), or NULL. */
static const char *xp_first_env(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = xp_env(names[i]);
        if (v)
            return v;
    }
    return NULL;
}

const char *xp_config_rank(void)
{
    /* torchrun/accelerate, then per-node launchers, Open MPI, Slurm. */
    static const char *const names[] = {"RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
                                        "SLURM_PROCID"};
    return xp_first_env(names, sizeof names / sizeof names[0]);
}

const char *xp_config_local_rank(void)
{
    /* torchrun/accelerate, Open MPI, Slurm, MPICH/Intel MPI (Hydra). */
    static const char *const names[] = {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                        "SLURM_LOCALID", "MPI_LOCALRANKID"};
    return xp_first_env(names, sizeof names / sizeof names[0]);
}

/* Appends s to out at *pos; -1 when it (plus the final NUL) does not fit. */
static int xp_put(char *out, size_t outlen, size_t *pos, const char *s)
{
    size_t n = strlen(s);
    if (n >= outlen - *pos)
        return -1;
    memcpy(out + *pos, s, n);
    *pos += n;
    out[*pos] = '\0';
    return 0;
}

int xp_expand_output(const char *pattern, pid_t pid, const char *host, const char *rank,
                     int64_t start_wall_s, char *out, size_t outlen)
{
    char buf[256];
    size_t pos = 0;

    if (!out || outlen == 0)
        return -1;
    out[0] = '\0';
    for (const char *p = pattern; *p; p++) {
        if (*p != '%') {
            char c[2] = {*p, '\0'};
            if (xp_put(out, outlen, &pos, c) != 0)
                goto fail;
            continue;
        }
        const char *piece = buf;
        switch (*++p) {
        case 'p':
            snprintf(buf, sizeof buf, "%ld", (long)pid);
            break;
        case 'h':
            if (host) {
                piece = host;
            } else if (gethostname(buf, sizeof buf) != 0 || !buf[0]) {
                piece = "localhost";
            } else {
                buf[sizeof buf - 1] = '\0'; /* gethostname may not terminate a truncated name */
            }
            break;
        case 'r':
            piece = rank ? rank : "0";
            break;
        case 't': {
            time_t t = (time_t)start_wall_s;
            struct tm tm;
            if (!localtime_r(&t, &tm) || strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm) == 0)
                goto fail;
            break;
        }
        case '%':
            piece = "%";
            break;
        default: /* unknown letter, or a '%' ending the pattern */
            goto fail;
        }
        if (xp_put(out, outlen, &pos, piece) != 0)
            goto fail;
    }
    return 0;
fail:
    /* Never hand back half a path: a caller that ignores the result must not
     * create a file with a truncated name. */
    out[0] = '\0';
    return -1;
}

const char *xp_file_kind(mode_t m)
{
    return S_ISFIFO(m) ? "a FIFO" : S_ISCHR(m) ? "a character device"
         : S_ISBLK(m) ? "a block device" : S_ISDIR(m) ? "a directory"
         : S_ISLNK(m) ? "a symbolic link" : S_ISSOCK(m) ? "a socket" : "not a regular file";
}
