/* xp_diff_totals.h: the few totals `xferprof diff` compares, computed from the
 * model.  MERGE: a stand-in for the report's xp_totals.c (written in another
 * branch); once that lands, xp_diff_metrics_from_process() should read the
 * shared totals instead and this file goes away.  Kept to what the diff
 * contract's "totals" member needs, with the report contract's definitions
 * (blocked = dur of sync + async_pageable copies; bandwidth over copies whose
 * call covered the transfer; memory = device + physical allocations). */
#ifndef XP_DIFF_TOTALS_H
#define XP_DIFF_TOTALS_H

#include <stdint.h>

#include "xp_report.h"

struct xp_diff_dir_totals {
    uint64_t copies, bytes;
    int64_t time_ns, blocked_ns;
    uint64_t bw_bytes;          /* copies that covered the transfer, status 0, dur > 0 */
    int64_t bw_ns;
};

struct xp_diff_totals {
    uint64_t copies, bytes;
    int64_t time_ns, blocked_ns;
    struct xp_diff_dir_totals dir[XP_DIR_COUNT];
    uint64_t host_bytes, pinned_bytes; /* bytes of copies with a host side / a pinned one */
    uint64_t blocking_copies;
    uint64_t peak_bytes;        /* per process peak of live device memory, summed over processes */
    uint64_t live_at_exit_bytes;
    uint64_t failed_calls;
};

/* Adds one process's numbers to t (start from a zeroed struct).  Returns 0,
 * or -1 when out of memory (t then lacks this process's peak). */
int xp_diff_totals_add(struct xp_diff_totals *t, const struct xp_process *p);

#endif
