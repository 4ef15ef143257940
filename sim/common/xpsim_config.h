/* xpsim_config.h: the simulator's settings, read once from XFERPROF_SIM_*. */
#ifndef XPSIM_CONFIG_H
#define XPSIM_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#define XPSIM_MAX_DEVICES 16
/* Far beyond any real GPU's queue; a bound keeps a typo from meaning "never". */
#define XPSIM_MAX_QUEUE_DEPTH (1u << 24)

typedef struct xpsim_config {
    uint64_t memory_bytes;     /* XFERPROF_SIM_MEMORY: capacity of each device */
    int devices;               /* XFERPROF_SIM_DEVICES: number of physical devices (0..16) */
    /* CUDA_VISIBLE_DEVICES: the physical device behind each ordinal the
     * process sees, visible_count of them (xpsim_devices.h). */
    int visible[XPSIM_MAX_DEVICES];
    int visible_count;
    char hostname[256];        /* the machine the devices' UUIDs belong to */
    double pinned_bps;         /* XFERPROF_SIM_BANDWIDTH pinned=: host<->device, pinned host */
    double pageable_bps;       /* pageable=: host<->device through the staging buffer */
    double device_bps;         /* device=: device-to-device inside one device */
    double peer_bps;           /* peer=: device-to-device between two devices */
    double host_bps;           /* host=: host-to-host copies made by the copy API */
    uint64_t latency_ns;       /* XFERPROF_SIM_LATENCY: fixed device cost of every copy/memset */
    uint64_t kernel_ns;        /* XFERPROF_SIM_KERNEL_TIME: device time of one kernel launch */
    uint64_t queue_depth;      /* XFERPROF_SIM_QUEUE_DEPTH: incomplete items a stream holds
                                * before an enqueue blocks (1..XPSIM_MAX_QUEUE_DEPTH) */
    uint64_t fault_launch;     /* XFERPROF_SIM_FAULT=launch:N: the Nth launch faults (0 = never) */
    int fault_error;           /* CUresult the faulting launch raises (sticky) */
    bool debug;                /* XFERPROF_SIM_DEBUG: log every call to stderr */
} xpsim_config;

/* The settings, parsed on first use; never NULL.  A malformed variable is
 * reported once on stderr and its default is used. */
const xpsim_config *xpsim_config_get(void);

/* Parses "512M", "16G", "1.5K", "123" (binary multiples) into bytes.
 * Returns false on anything else.  Exposed for unit tests. */
bool xpsim_parse_size(const char *text, uint64_t *out_bytes);

/* Parses a rate "25G", "10M", "1e9" (decimal multiples, bytes per second). */
bool xpsim_parse_rate(const char *text, double *out_bps);

/* Parses a duration "2us", "5000ns", "1.5ms", "3s"; a bare number is ns. */
bool xpsim_parse_duration(const char *text, uint64_t *out_ns);

#endif
