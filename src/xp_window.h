/* xp_window.h: the capture window (nsys's --capture-range, --delay,
 * --duration): when traffic is recorded.  Outside it copies, memsets, syncs
 * and failed calls are counted, not recorded; allocations, frees and NVTX
 * ranges are always recorded, so the registry, leaks and OOMs stay right. */
#ifndef XP_WINDOW_H
#define XP_WINDOW_H

#include <stdbool.h>
#include <stdint.h>

#include "xp_config.h"

/* What a call skipped outside the window would have recorded (the
 * window_skipped_* meta keys, docs/schema.md). */
typedef enum xp_win_kind {
    XP_WIN_COPY,
    XP_WIN_MEMSET,
    XP_WIN_SYNC,
    XP_WIN_CALL,              /* a failed call (launch or other) */
    XP_WIN_KINDS
} xp_win_kind;

#pragma GCC visibility push(hidden)

/* Whether a capture window is set for this session: written once by
 * xp_window_start before the session is on (the state's release store
 * publishes it), read by every recorded call.  False: everything recorded,
 * and the one branch below is all a call pays. */
extern bool xp_window_set;

/* The out-of-line part of xp_window_skip: whether a call that started at
 * t_ns lies outside the window (then counted as one skipped `kind`). */
bool xp_window_outside(uint64_t t_ns, xp_win_kind kind);

/* Whether a recorded call of `kind` that started at t_ns is to be skipped. */
static inline bool xp_window_skip(uint64_t t_ns, xp_win_kind kind)
{
    return __builtin_expect(xp_window_set, 0) && xp_window_outside(t_ns, kind);
}

/* At the session's start (xp_engine.c, state STARTING): takes the window's
 * settings and writes them to meta. */
void xp_window_start(const xp_config *c);

/* At the session's end: closes the open window, writes the window count
 * and the skipped calls to meta. */
void xp_window_finish(void);

/* cudaProfilerStart/cuProfilerStart (start) or Stop returned success: the
 * window opens or closes (no nesting: CUDA's calls do not nest either). */
void xp_window_profiler(bool start);

/* An NVTX push or start range of `name` in `domain` (interned hashes) was
 * opened: whether it is a capture range (then it holds the window open
 * until xp_window_nvtx_closed).  False when no nvtx window is set. */
bool xp_window_nvtx_opened(uint64_t domain, uint64_t name);
void xp_window_nvtx_closed(void);

/* Start/end ranges that are capture ranges, by range id: noted when
 * started, looked up (and forgotten) when ended.  A full table (more than
 * XP_WINDOW_OPEN_IDS capture ranges open at once) does not hold the window:
 * xp_window_nvtx_opened is then undone (meta says so). */
#define XP_WINDOW_OPEN_IDS 64
bool xp_window_nvtx_note_id(uint64_t id);
bool xp_window_nvtx_take_id(uint64_t id);

#pragma GCC visibility pop

#endif
