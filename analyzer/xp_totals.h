/* xp_totals.h: the report's aggregates: totals per process and overall, and per-call-site sums. */
#ifndef XP_TOTALS_H
#define XP_TOTALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xp_report.h"

/* Timeline points kept at most (docs/report.md). */
#define XP_TIMELINE_MAX 512

/* Copies of one direction (successful copies only, as every copy sum). */
struct xp_dir_totals {
    uint64_t count, bytes;
    int64_t time_ns, blocked_ns;
    uint64_t pinned_bytes, pageable_bytes, managed_bytes;
    uint64_t sync, async, async_pageable;
    uint64_t bw_bytes;      /* over copies that count for bandwidth (below) */
    int64_t bw_ns;
};

/* Copies that held their caller for the whole transfer (sync,
 * async_pageable), status 0, dur > 0: their bytes over their time is a
 * measured bandwidth. */
struct xp_bw_totals {
    uint64_t copies, bytes;
    int64_t time_ns;
};

struct xp_api_count {
    const char *api;        /* points into a process's api_names */
    uint64_t n;
};

/* Failed calls of one entry point with one status. */
struct xp_status_count {
    const char *api;        /* points into a process's api_names */
    int32_t status;
    bool driver;            /* the api's layer: status is a CUresult, else a cudaError_t */
    uint64_t n;
};

struct xp_mem_point {
    int64_t t_ns, live_bytes;
};

struct xp_totals {
    uint64_t copies, bytes;
    int64_t time_ns, blocked_ns;
    uint64_t blocking_copies;           /* sync + async_pageable */
    uint64_t host_bytes, pinned_bytes;  /* bytes with a host side; of which pinned */
    struct xp_dir_totals dir[XP_DIR_COUNT];
    struct xp_bw_totals bw[XP_DIR_COUNT][XP_HM_COUNT];

    /* Device memory: allocations of kinds device and physical. */
    uint64_t peak_bytes, live_at_exit_bytes, live_at_exit_count, allocations, frees;
    int64_t peak_ns;
    struct xp_mem_point *timeline;      /* owned, at most XP_TIMELINE_MAX points */
    size_t n_timeline;

    uint64_t failed_calls;
    struct xp_api_count *failed_by_api; /* owned, sorted by api name */
    size_t n_failed_by_api;
    struct xp_status_count *failed_by_status; /* owned, most first, then by api and status */
    size_t n_failed_by_status;
    uint64_t memsets, syncs;
    int64_t sync_time_ns;
    uint64_t graph_copies, graph_launches;   /* copies CUDA graph launches ran, and those launches */
};

/* Totals over the n processes of procs together (one process: its own).
 * The memory timeline replays all their allocations in monotonic time
 * order, which is meaningful for processes of one host.  Returns 0, or -1
 * when out of memory (t then freed). */
int xp_totals_compute(const struct xp_process *procs, size_t n, struct xp_totals *t);
void xp_totals_free(struct xp_totals *t);

/* bytes / ns in GB/s (1e9 bytes per second); NaN when ns <= 0. */
double xp_gbps(uint64_t bytes, int64_t ns);

/* Share num / den, NaN when den is 0 (rendered as null). */
double xp_share(uint64_t num, uint64_t den);

/* The copies of one call site (stack) of one process, successful ones. */
struct xp_site {
    const struct xp_process *proc;
    size_t proc_index;
    uint32_t stack_id;      /* XP_NONE_ID: copies without a stack */
    uint64_t copies, bytes;
    int64_t time_ns, blocked_ns;
    uint32_t apis[8];       /* api indexes, first seen first */
    uint8_t n_apis;
    uint8_t directions, host_mems, blockings; /* bit sets of enum codes */
};

/* The call sites of process p worth showing: the top `top` by bytes and the
 * top `top` by blocked time, each once, ordered by bytes (then blocked time,
 * then stack id), appended to *sites (grown, count *n).  Returns 0 or -1
 * (out of memory). */
int xp_sites_top(const struct xp_process *p, size_t proc_index, size_t top,
                 struct xp_site **sites, size_t *n);

#endif
