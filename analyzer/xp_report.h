/* xp_report.h: the analyzer's in-memory model of one or more run databases,
 * shared by the loader (xp_load.c), the symbolizer (xp_symbols.c), the rules
 * (rules/rule_*.c), and the renderers (render_*.c).
 *
 * Why a model in memory rather than SQL per rule: a report on 10 million
 * copies must finish in under a minute, and each scan of the copies view
 * costs about half a second per million rows; loading once and letting every
 * rule work on arrays keeps the report to one scan per table.  Every number
 * the report prints can still be reproduced with SQL over the documented
 * schema (docs/findings.md gives the query for each rule). */
#ifndef XP_REPORT_H
#define XP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The codes of directions, host memory, blocking classes and allocation
 * kinds are the journal's (src/xp_format.h), which call_sites and alloc_rows
 * store; the model adds a count or an "unknown" to some. */
#include "xp_cuda_status.h"
#include "xp_format.h"

#define XP_DIR_COUNT 5
enum xp_hostmem { XP_HM_NONE = XP_HOST_NONE, XP_HM_PAGEABLE = XP_HOST_PAGEABLE,
                  XP_HM_PINNED = XP_HOST_PINNED, XP_HM_MANAGED = XP_HOST_MANAGED,
                  XP_HM_COUNT = 4 };
enum xp_block_class { XP_BL_UNKNOWN = 0, XP_BL_SYNC = XP_BLOCK_SYNC, XP_BL_ASYNC = XP_BLOCK_ASYNC,
                      XP_BL_ASYNC_PAGEABLE = XP_BLOCK_ASYNC_PAGEABLE, XP_BL_COUNT = 4 };
/* allocations.kind; device memory in use is XP_AK_DEVICE + XP_AK_PHYSICAL +
 * XP_AK_ARRAY. */
enum xp_mem_kind { XP_AK_OTHER = 0, XP_AK_DEVICE = XP_ALLOC_DEVICE, XP_AK_PINNED = XP_ALLOC_PINNED,
                   XP_AK_REGISTERED = XP_ALLOC_REGISTERED, XP_AK_MANAGED = XP_ALLOC_MANAGED,
                   XP_AK_RESERVED = XP_ALLOC_RESERVED, XP_AK_PHYSICAL = XP_ALLOC_PHYSICAL,
                   XP_AK_MAPPED = XP_ALLOC_MAPPED, XP_AK_ARRAY = XP_ALLOC_ARRAY,
                   XP_AK_IPC = XP_ALLOC_IPC, XP_AK_COUNT };

const char *xp_dir_name(xp_direction d);          /* "H2D", ... "unknown" */
const char *xp_hostmem_name(enum xp_hostmem h);  /* "pageable", ... "none" */
const char *xp_blocking_name(enum xp_block_class b); /* "sync", "async", "async_pageable" */
const char *xp_alloc_kind_name(enum xp_mem_kind k);

#define XP_NONE_ID 0 /* stack_id / nvtx range absent (ids in the database start at 1) */

/* What a copy shares with every copy of its call site (a call_sites row):
 * held once per site rather than once per copy, which is what keeps the
 * model of a 10-million-copy run within memory (docs/performance.md,
 * "The report's memory"). */
struct xp_call_site {
    uint64_t stream;
    uint32_t stack_id;      /* XP_NONE_ID without stacks */
    uint32_t api;           /* index into xp_process.api_names */
    int32_t status, device, tid;
    uint8_t direction, host_mem, blocking;
    bool driver;            /* layer = driver */
};

/* The bits of a copy's kernel count kept (struct xp_copy.kernel_seq). */
#define XP_COPY_KSEQ_BITS 28

/* One row of the copies view: 64 bytes, the facts of its own; the site's
 * through cs, the rare ones (a paired sync's wait, a full fingerprint) in
 * the process's side tables (xp_copy_wait, xp_copy_full_fp). */
struct xp_copy {
    int64_t start_ns, dur_ns;
    uint64_t bytes, src, dst;
    uint64_t fingerprint;   /* valid when fp_kind != 0 */
    const struct xp_call_site *cs;  /* never NULL: owned by the process (or the test building it) */
    uint32_t nvtx_range;    /* nvtx_ranges.id, XP_NONE_ID when none (or column absent) */
    /* Kernel launches on the copy's device so far, modulo 2^28: the rules
     * only ask whether two copies' counts are equal (no kernel ran between
     * them), which the wrap makes wrong only where a multiple of 2^28
     * (268 M) launches came between the two.  (NVTX ids keep 32 bits: they
     * only grow, and a run pushing a range per operator passes 2^28.) */
    uint32_t kernel_seq : XP_COPY_KSEQ_BITS;
    uint32_t fp_kind : 2;   /* 0 none, 1 full, 2 sampled */
    /* Completed by the next call on its thread, a sync of its stream or
     * device (syncs.copy_start_ns): one blocking copy in effect, which held
     * the caller dur_ns + xp_copy_wait. */
    uint32_t paired : 1;
    /* Set while the rules run: reported by a rule that ran before (xp_claim
     * in rules/xp_group.h), so later rules leave it alone: one finding per
     * copy problem. */
    uint32_t claimed : 1;
};

/* The report of a million copies holds a million of these: the size is
 * what its 96 MiB budget allows (docs/performance.md, "The report's memory"). */
_Static_assert(sizeof(struct xp_copy) <= 64, "struct xp_copy grew past 64 bytes");

/* A rare fact of one copy, by its index in xp_process.copies. */
struct xp_copy_fact {
    size_t copy;
    uint64_t value;
};

/* A memset's target and time, for the lifetimes of device content. */
struct xp_memset_span {
    int64_t start_ns;
    uint64_t dst, bytes;
};

/* One row of the allocations view (successful allocations only). */
struct xp_alloc {
    int64_t alloc_ns, alloc_end_ns;
    int64_t free_ns;        /* -1 while live at exit */
    uint64_t ptr, bytes;
    uint32_t alloc_stack, free_stack;
    uint32_t api;
    int32_t device;
    uint8_t kind;           /* enum xp_mem_kind */
};

struct xp_sync {
    int64_t start_ns, dur_ns;
    uint64_t stream;
    uint32_t stack_id, api;
    int32_t status, device, tid;
};

/* One row of the errors view. */
struct xp_error {
    int64_t start_ns;
    uint32_t stack_id, api;
    int32_t status, device, tid;
    char record[8];         /* "copy", "alloc", "free", "sync", "call", "memset" */
    char *detail;           /* owned, may be NULL */
    uint64_t requested;     /* for record "alloc": bytes requested (parsed from detail), else 0 */
    int64_t dev_free, dev_total; /* device free/total at the failure, -1 unknown */
};

struct xp_unknown_free {
    int64_t start_ns;
    uint64_t ptr;
    uint32_t stack_id, api;
    uint8_t kind;
};

struct xp_nvtx_range {
    int64_t id, parent_id;  /* parent XP_NONE_ID at top level */
    int64_t start_ns, end_ns; /* end -1 when never closed */
    char *name, *domain;    /* owned */
    int32_t tid, depth;
    bool push;              /* push/pop (thread-bound) vs start/end */
};

/* A symbolized frame.  Strings are owned by the process's symbol cache.
 * A return address inside inlined code gives several frames, innermost
 * first, all with the same addr: each but the last is `inlined` into the
 * function of the frame after it, whose line is then the line of the call. */
struct xp_frame {
    uint64_t addr;
    const char *module;     /* basename of the object, NULL if no module contains addr */
    const char *module_path;
    uint64_t offset;        /* addr - module load bias (file virtual address) */
    const char *function;   /* as the object names it (C++: mangled), what matching compares;
                             * NULL when unknown */
    const char *demangled;  /* what people read (function itself when not mangled); NULL
                             * when function is, or when a frame was built by hand */
    const char *file;       /* NULL when no debug info */
    int line;               /* 0 when unknown */
    bool inlined;           /* inlined into the next frame's function */
    bool internal;          /* inside libcudart/libcuda/libxferprof: left out of call sites */
    /* A Python frame (xp_pyframes.c): module is the .py file's basename (or
     * "python" when its code object is unknown), function the qualified
     * name, offset the instruction's byte offset in its code, addr 0. */
    bool python;
    bool library;           /* a framework's (torch, c10, NVIDIA's) between Python and CUDA */
};

/* The name a frame shows: demangled, else as the object names it (NULL
 * when unknown). */
static inline const char *xp_frame_name(const struct xp_frame *f)
{
    return f->demangled ? f->demangled : f->function;
}

/* A stack's frames, the internal ones already left out, Python frames
 * spliced in where the interpreter ran them. */
struct xp_stack {
    uint32_t id;
    uint32_t nframes;
    struct xp_frame *frames;
    uint32_t top;           /* the top user frame: the first not `library` (0 without Python) */
};

/* Per-process facts from meta, plus what the symbolizer found. */
struct xp_process {
    char *db_path;
    char *label;             /* "pid 1234" or "rank 3 (pid 1234)" */
    int64_t pid, ppid, rank; /* rank -1 when none */
    char *hostname, *cmdline;
    int64_t start_mono_ns, end_mono_ns; /* end: last event seen */
    int64_t exit_status;     /* -1 unknown */
    int64_t records_lost;
    char *records_lost_reason;
    bool recovered, stacks_off;

    char **api_names; size_t n_api;            /* index = struct field api */
    bool *api_driver;                          /* same index: layer = driver (its statuses are CUresult) */
    struct xp_copy *copies; size_t n_copies;
    struct xp_call_site *call_sites; size_t n_call_sites; /* the copies' call sites (owned) */
    /* By copy index: the wait of a paired copy (its sync's dur_ns), and
     * copies.full_fingerprint where not 0. */
    struct xp_copy_fact *copy_waits; size_t n_copy_waits;
    struct xp_copy_fact *copy_full_fps; size_t n_copy_full_fps;
    struct xp_alloc *allocs; size_t n_allocs;
    /* The blocks a caching allocator (PyTorch's) handed out inside its
     * segments, by time taken (xp_load_blocks.c): not memory of their own,
     * never counted with allocs.  api 0, kind DEVICE, free_ns -1 when the
     * block was not returned. */
    struct xp_alloc *blocks; size_t n_blocks;
    struct xp_sync *syncs; size_t n_syncs;
    struct xp_error *errors; size_t n_errors;
    struct xp_unknown_free *unknown_frees; size_t n_unknown_frees;
    struct xp_nvtx_range *ranges; size_t n_ranges;
    uint64_t memsets, memset_bytes;
    /* Copies CUDA graph launches ran (copies.graph_node set), and the
     * launches that ran them; 0 in a database from before graphs. */
    uint64_t graph_copies, graph_launches;
    struct xp_memset_span *memset_spans; size_t n_memset_spans;   /* by start_ns */

    struct xp_stack *stacks; size_t n_stacks;   /* sorted by id */
    char **notes; size_t n_notes;               /* "module X is no longer on disk", ... */
    void *symbols;           /* owned by xp_symbols.c: the strings the frames point to */
    void *pyframes;          /* owned by xp_pyframes.c: the names Python frames point to */

    /* Where the process ran (meta, docs/schema.md): its LOCAL_RANK (-1 none),
     * CUDA_VISIBLE_DEVICES as it was (NULL when unset), and the UUID of each
     * device ordinal it used (index = ordinal; NULL when not recorded). */
    int64_t local_rank;
    char *cuda_visible_devices;
    char **device_uuids; size_t n_device_uuids;

    /* The capture window (xp_capture.c; docs/schema.md "Capture window"):
     * capture_range NULL when the whole run was recorded; the windows, their
     * total time, the calls skipped outside them. */
    char *capture_range;
    int64_t capture_windows, capture_ns, window_skipped;
    int64_t capture_duration_ns, capture_open_ns;   /* for a window left open */
};

/* xp_capture.c: a meta key of the capture window into p (1 taken, 0 not
 * one of its keys, -1 out of memory); xp_capture_done once meta and the
 * events are read. */
int xp_capture_meta(struct xp_process *p, const char *k, const char *v);
void xp_capture_done(struct xp_process *p);
/* The time the program was recorded: its capture windows when it had any,
 * else its run; what the rules measure a site's share of time against. */
int64_t xp_process_run_ns(const struct xp_process *p);
/* "captured: cudaProfilerApi, 2 windows, 1.2 s of 3.4 s; N calls outside
 * the capture window" into buf, or NULL when the whole run was recorded. */
const char *xp_capture_line(const struct xp_process *p, char *buf, size_t n);

enum xp_severity { XP_SEV_INFO = 0, XP_SEV_WARNING = 1, XP_SEV_ERROR = 2 };
const char *xp_severity_name(enum xp_severity s);  /* "info", "warning", "error" */
int xp_severity_parse(const char *s, enum xp_severity *out); /* 0 or -1 */

/* One extra fact of a finding, rendered as a JSON member and a text line. */
struct xp_fact {
    char key[40];
    bool is_text;
    int64_t num;
    char *text;             /* owned when is_text */
};

struct xp_finding {
    const char *rule;       /* stable id: "async-pageable", ... */
    enum xp_severity severity;
    const struct xp_process *proc;
    uint32_t stack_id;      /* the call site, XP_NONE_ID when none / not site-bound */
    uint64_t count, bytes;
    int64_t time_ns;        /* what it cost the program (host time held, wasted time) */
    char *message;          /* owned: one sentence, what is wrong, with numbers */
    const char *fix;        /* CUDA terms */
    const char *fix_pytorch;/* NULL when it does not apply */
    struct xp_fact *facts; size_t n_facts;
};

/* Rule thresholds, all configurable (--set rule.key=value), documented in
 * docs/findings.md with their defaults. */
struct xp_thresholds {
    uint64_t sync_in_loop_min_count;      /* stalls (blocking copies apart by GPU work) from one site */
    uint64_t sync_in_loop_sparse_every;   /* a site blocking once per this many loop iterations is quiet */
    uint64_t sync_in_loop_result_min_bytes; /* reads into pinned memory this large (median) are results: quiet */
    uint64_t redundant_min_repeats;       /* same content from one site */
    uint64_t small_copy_max_bytes;
    uint64_t small_copies_min_count;
    double low_bandwidth_fraction;        /* below this share of the run's reference */
    uint64_t low_bandwidth_min_bytes;     /* only copies at least this large */
    uint64_t low_bandwidth_min_count;     /* measured copies a site needs */
    double low_bandwidth_min_share;       /* of the run the site's copies held the caller */
    double small_copies_min_share;        /* of the run the site's small copies took */
    uint64_t small_copy_fixed_ns;         /* the least a copy costs, whatever its call took */
    double leak_growing_fraction;         /* share of the run a site's live allocations must span to be "growing" */
    double fragmentation_min_ratio;       /* 1 - largest hole / total free */
    uint64_t fragmentation_min_free;
    uint64_t leak_min_count;              /* live allocations a site must leave for "growing" */
    uint64_t alloc_churn_min_count;       /* allocations freed again a site must make to churn */
};
void xp_thresholds_default(struct xp_thresholds *t);
int xp_thresholds_set(struct xp_thresholds *t, const char *assignment, char *err, size_t errlen);

struct xp_report {
    struct xp_process *procs; size_t n_procs;
    struct xp_finding *findings; size_t n_findings, cap_findings;
    struct xp_thresholds th;
};

/* Adds a finding (copies message; facts start empty).  Returns it, or NULL
 * when out of memory. */
struct xp_finding *xp_report_add(struct xp_report *r, const char *rule, enum xp_severity sev,
                                 const struct xp_process *p, uint32_t stack_id,
                                 uint64_t count, uint64_t bytes, int64_t time_ns,
                                 const char *fix, const char *fix_pytorch,
                                 const char *message_fmt, ...)
    __attribute__((format(printf, 11, 12)));
void xp_finding_num(struct xp_finding *f, const char *key, int64_t v);
void xp_finding_text(struct xp_finding *f, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Forgets which copies the rules claimed (struct xp_copy.claimed): what
 * the report does before it runs its rules. */
void xp_report_forget_claims(struct xp_report *r);

/* Makes room for need elements of size in the array *arr (a pointer to the
 * array pointer; capacity *cap, in elements), the new ones zeroed.  Returns
 * 0, or -1 when out of memory (*arr and *cap unchanged). */
int xp_grow(void *arr, size_t *cap, size_t need, size_t size);

/* qsort, but for arrays of fewer than two elements (which may be NULL: qsort
 * must not be given a null pointer even with nothing to sort) it does nothing. */
void xp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* The name of a process's api index, "?" when unknown. */
const char *xp_process_api(const struct xp_process *p, uint32_t api);
/* Whether api is a driver entry point (its statuses are CUresult, else cudaError_t). */
bool xp_process_api_driver(const struct xp_process *p, uint32_t api);
/* A status of a call of api as a person reads it, "cudaErrorInvalidValue (1)"
 * (src/xp_cuda_status.h), and the bare name or NULL when unknown (for JSON). */
struct xp_status_str xp_process_status(const struct xp_process *p, uint32_t api, int64_t status);
const char *xp_process_status_name(const struct xp_process *p, uint32_t api, int64_t status);

/* The wait of a paired copy of p (its sync's dur_ns), 0 when not paired;
 * copies.full_fingerprint of a copy, 0 when none. */
int64_t xp_copy_wait(const struct xp_process *p, const struct xp_copy *c);
uint64_t xp_copy_full_fp(const struct xp_process *p, const struct xp_copy *c);

/* A stack of a process by id, NULL when unknown. */
const struct xp_stack *xp_process_stack(const struct xp_process *p, uint32_t id);

/* Each rule adds its findings for every process of r.  Rules never fail:
 * a process without the data a rule needs gets no finding from it. */
typedef void (*xp_rule_fn)(struct xp_report *r);
struct xp_rule {
    const char *id;
    xp_rule_fn run;
    const char *summary;
};
extern const struct xp_rule xp_rules[];
extern const size_t xp_nrules;

#endif
