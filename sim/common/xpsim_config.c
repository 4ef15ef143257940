/* xpsim_config.c: reads the XFERPROF_SIM_* environment once, with defaults. */
#include "xpsim_config.h"
#include "xpsim_devices.h"

#include <cuda.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* Defaults: a 16 GiB device behind a PCIe 4.0 x16 link as measured in
 * practice (about 25 GB/s pinned, 10 GB/s pageable with staging). */
#define DEFAULT_MEMORY     (16ull << 30)
#define DEFAULT_PINNED     25e9
#define DEFAULT_PAGEABLE   10e9
#define DEFAULT_DEVICE     1000e9
#define DEFAULT_PEER       25e9
#define DEFAULT_HOST       10e9
#define DEFAULT_LATENCY_NS 2000u
#define DEFAULT_KERNEL_NS  5000u
/* Pending items per stream before a launch blocks: about what a real GPU
 * accepts (docs/simulator.md, "Streams and events"). */
#define DEFAULT_QUEUE_DEPTH 1024u

static xpsim_config config;            /* written once under config_once */
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

/* Parses a decimal number followed by an optional suffix into its two parts;
 * returns false if there is no number or anything after the suffix. */
static bool split_number(const char *text, double *out_value, char *suffix, size_t suffix_len)
{
    if (text == NULL)
        return false;
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (end == text || errno != 0 || !isfinite(v) || v < 0)
        return false;
    while (*end == ' ')
        end++;
    size_t n = strlen(end);
    if (n >= suffix_len)
        return false;
    for (size_t i = 0; i <= n; i++)
        suffix[i] = (char)tolower((unsigned char)end[i]);
    *out_value = v;
    return true;
}

bool xpsim_parse_size(const char *text, uint64_t *out_bytes)
{
    double v;
    char sfx[8];
    if (!split_number(text, &v, sfx, sizeof sfx))
        return false;
    double mult;
    if (!strcmp(sfx, "") || !strcmp(sfx, "b"))
        mult = 1;
    else if (!strcmp(sfx, "k") || !strcmp(sfx, "kb") || !strcmp(sfx, "kib"))
        mult = 1024.0;
    else if (!strcmp(sfx, "m") || !strcmp(sfx, "mb") || !strcmp(sfx, "mib"))
        mult = 1024.0 * 1024;
    else if (!strcmp(sfx, "g") || !strcmp(sfx, "gb") || !strcmp(sfx, "gib"))
        mult = 1024.0 * 1024 * 1024;
    else if (!strcmp(sfx, "t") || !strcmp(sfx, "tb") || !strcmp(sfx, "tib"))
        mult = 1024.0 * 1024 * 1024 * 1024;
    else
        return false;
    double bytes = v * mult;
    if (bytes >= 18446744073709551616.0)
        return false;
    *out_bytes = (uint64_t)bytes;
    return true;
}

bool xpsim_parse_rate(const char *text, double *out_bps)
{
    double v;
    char sfx[8];
    if (!split_number(text, &v, sfx, sizeof sfx))
        return false;
    /* Bandwidth is quoted in decimal units (GB/s), unlike memory sizes. */
    static const struct { const char *s; double m; } units[] = {
        {"", 1}, {"b", 1}, {"k", 1e3}, {"m", 1e6}, {"g", 1e9}, {"t", 1e12},
        {"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcmp(sfx, units[i].s)) {
            if (v * units[i].m <= 0)
                return false;
            *out_bps = v * units[i].m;
            return true;
        }
    }
    return false;
}

bool xpsim_parse_duration(const char *text, uint64_t *out_ns)
{
    double v;
    char sfx[8];
    if (!split_number(text, &v, sfx, sizeof sfx))
        return false;
    static const struct { const char *s; double m; } units[] = {
        {"", 1}, {"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9},
    };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcmp(sfx, units[i].s)) {
            *out_ns = (uint64_t)(v * units[i].m);
            return true;
        }
    }
    return false;
}

static void warn_bad(const char *name, const char *value)
{
    /* The one message the simulator prints without XFERPROF_SIM_DEBUG: a
     * setting that is silently ignored would make a test lie. */
    fprintf(stderr, "xferprof-sim: ignoring %s=%s (malformed)\n", name, value);
}

/* XFERPROF_SIM_BANDWIDTH: "25G" (pinned and pageable) or a comma list of
 * key=rate with keys pinned, pageable, device, peer, host. */
static void parse_bandwidth(const char *text)
{
    char buf[256];
    if (strlen(text) >= sizeof buf) {
        warn_bad("XFERPROF_SIM_BANDWIDTH", text);
        return;
    }
    strcpy(buf, text);
    if (strchr(buf, '=') == NULL) {
        double bps;
        if (xpsim_parse_rate(buf, &bps))
            config.pinned_bps = config.pageable_bps = bps;
        else
            warn_bad("XFERPROF_SIM_BANDWIDTH", text);
        return;
    }
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        double bps;
        if (eq == NULL || !xpsim_parse_rate(eq + 1, &bps)) {
            warn_bad("XFERPROF_SIM_BANDWIDTH", text);
            continue;
        }
        *eq = '\0';
        if (!strcasecmp(item, "pinned"))
            config.pinned_bps = bps;
        else if (!strcasecmp(item, "pageable"))
            config.pageable_bps = bps;
        else if (!strcasecmp(item, "device"))
            config.device_bps = bps;
        else if (!strcasecmp(item, "peer"))
            config.peer_bps = bps;
        else if (!strcasecmp(item, "host"))
            config.host_bps = bps;
        else
            warn_bad("XFERPROF_SIM_BANDWIDTH", text);
    }
}

/* XFERPROF_SIM_FAULT: "launch:N" — the Nth kernel launch faults. */
static void parse_fault(const char *text)
{
    unsigned long long n;
    char extra;
    if (sscanf(text, "launch:%llu%c", &n, &extra) == 1 && n > 0) {
        config.fault_launch = n;
        config.fault_error = CUDA_ERROR_ILLEGAL_ADDRESS;
    } else {
        warn_bad("XFERPROF_SIM_FAULT", text);
    }
}

static void load_config(void)
{
    config.memory_bytes = DEFAULT_MEMORY;
    config.devices = 1;
    config.pinned_bps = DEFAULT_PINNED;
    config.pageable_bps = DEFAULT_PAGEABLE;
    config.device_bps = DEFAULT_DEVICE;
    config.peer_bps = DEFAULT_PEER;
    config.host_bps = DEFAULT_HOST;
    config.latency_ns = DEFAULT_LATENCY_NS;
    config.kernel_ns = DEFAULT_KERNEL_NS;
    config.queue_depth = DEFAULT_QUEUE_DEPTH;

    const char *v;
    if ((v = getenv("XFERPROF_SIM_DEBUG")) && *v && strcmp(v, "0") != 0)
        config.debug = true;
    if ((v = getenv("XFERPROF_SIM_MEMORY")) && *v) {
        uint64_t bytes;
        /* At least 1 MiB so that the allocator's bookkeeping makes sense. */
        if (xpsim_parse_size(v, &bytes) && bytes >= (1u << 20) && bytes <= (1ull << 44))
            config.memory_bytes = bytes;
        else
            warn_bad("XFERPROF_SIM_MEMORY", v);
    }
    if ((v = getenv("XFERPROF_SIM_DEVICES")) && *v) {
        char *end;
        long n = strtol(v, &end, 10);
        if (*end == '\0' && n >= 0 && n <= XPSIM_MAX_DEVICES)
            config.devices = (int)n;
        else
            warn_bad("XFERPROF_SIM_DEVICES", v);
    }
    if (gethostname(config.hostname, sizeof config.hostname - 1) != 0)
        config.hostname[0] = '\0';
    /* Read once, at the first CUDA call, as the real driver does. */
    config.visible_count = xpsim_visible_parse(getenv("CUDA_VISIBLE_DEVICES"), config.devices,
                                               config.hostname, config.visible);
    if ((v = getenv("XFERPROF_SIM_BANDWIDTH")) && *v)
        parse_bandwidth(v);
    if ((v = getenv("XFERPROF_SIM_LATENCY")) && *v && !xpsim_parse_duration(v, &config.latency_ns))
        warn_bad("XFERPROF_SIM_LATENCY", v);
    if ((v = getenv("XFERPROF_SIM_KERNEL_TIME")) && *v && !xpsim_parse_duration(v, &config.kernel_ns))
        warn_bad("XFERPROF_SIM_KERNEL_TIME", v);
    if ((v = getenv("XFERPROF_SIM_QUEUE_DEPTH")) && *v) {
        char *end;
        errno = 0;
        unsigned long long n = strtoull(v, &end, 10);
        /* strtoull accepts a sign; a depth is a plain positive count. */
        if (isdigit((unsigned char)*v) && *end == '\0' && errno == 0 && n >= 1 &&
            n <= XPSIM_MAX_QUEUE_DEPTH)
            config.queue_depth = n;
        else
            warn_bad("XFERPROF_SIM_QUEUE_DEPTH", v);
    }
    if ((v = getenv("XFERPROF_SIM_FAULT")) && *v)
        parse_fault(v);
}

const xpsim_config *xpsim_config_get(void)
{
    pthread_once(&config_once, load_config);
    return &config;
}
