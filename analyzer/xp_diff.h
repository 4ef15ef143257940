/* xp_diff.h: `xferprof diff`, the comparison of two runs (base and new)
 * call site by call site, on the analyzer's in-memory model (xp_report.h).
 *
 * xp_diff_compute only reads the two reports: it never opens a database, so
 * the unit tests build models by hand and the command (cmd_diff.c) hands it
 * whatever the loader produced.  Contract: /work/contract/diff-contract.md,
 * user documentation: docs/diff.md. */
#ifndef XP_DIFF_H
#define XP_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "xp_report.h"

enum xp_diff_by { XP_DIFF_BY_SITE = 0, XP_DIFF_BY_FUNCTION, XP_DIFF_BY_NVTX };
enum xp_diff_fail_on { XP_DIFF_FAIL_NEVER = 0, XP_DIFF_FAIL_REGRESSION, XP_DIFF_FAIL_ANY };

/* Order is the order sites are listed in: regressions first, unchanged last. */
enum xp_diff_class { XP_DC_REGRESSED = 0, XP_DC_NEW, XP_DC_GONE, XP_DC_IMPROVED, XP_DC_UNCHANGED,
                     XP_DC_COUNT };
enum xp_diff_match { XP_DM_EXACT = 0, XP_DM_APPROXIMATE, XP_DM_NONE };

const char *xp_diff_class_name(enum xp_diff_class c);  /* "regressed", ... */
const char *xp_diff_match_name(enum xp_diff_match m);  /* "exact", "approximate", "none" */
const char *xp_diff_by_name(enum xp_diff_by b);        /* "site", "function", "nvtx" */
int xp_diff_by_parse(const char *s, enum xp_diff_by *out);          /* 0 or -1 */
int xp_diff_fail_on_parse(const char *s, enum xp_diff_fail_on *out); /* 0 or -1 */

/* A change counts only past both the relative threshold and these floors,
 * so that tiny sites (and timing noise) do not flap. */
#define XP_DIFF_BYTES_FLOOR (64u * 1024u)
#define XP_DIFF_TIME_FLOOR_NS 1000000
/* Blocking copies a site needs on each side before a change of its blocked
 * time can count: one copy's time, preempted once on a busy machine, is no
 * evidence (and gives no spread to judge it by). */
#define XP_DIFF_TIME_MIN_COPIES 3
#define XP_DIFF_DEFAULT_THRESHOLD 10.0

struct xp_diff_options {
    double threshold_pct;       /* default XP_DIFF_DEFAULT_THRESHOLD */
    enum xp_diff_by by;
    enum xp_diff_fail_on fail_on;
};
void xp_diff_options_default(struct xp_diff_options *o);

/* One frame of a key, as matching sees it: basenames, never an address
 * (addr is kept for rendering only).  Strings point into the processes'
 * symbol caches, so a diff lives no longer than its reports. */
struct xp_diff_frame {
    const char *module, *function, *file; /* NULL when unknown; function as the object
                                           * names it (mangled), what matching compares */
    const char *demangled;                /* shown, never matched on (NULL: function) */
    int line;
    bool inlined;                         /* inlined into the next frame (shown only) */
    uint64_t offset, addr;
};

/* Running mean and spread of per-copy values (Welford), for noise bands. */
struct xp_welford {
    double n, mean, m2;
    double min;                 /* the smallest value (valid when n > 0) */
};

/* A site's numbers on one side.  Doubles because --by nvtx divides by the
 * number of instances of the range. */
struct xp_diff_stats {
    double copies, bytes, time_ns, blocked_ns;
    struct xp_welford blocked;  /* per blocking copy's time: the run's own variation */
    uint32_t host_mem;          /* bit set of enum xp_hostmem seen */
    uint32_t blocking;          /* bit set of enum xp_block_class seen */
    const char **apis; size_t n_apis; /* distinct api names, owned array */
    uint64_t instances;         /* --by nvtx: range instances divided by; else 1 */
};

#define XP_DIFF_MAX_REASONS 8
struct xp_diff_site {
    enum xp_diff_class cls;
    enum xp_diff_match match;
    /* The key: frames (site: every non-internal frame; function: the
     * innermost one) or, for --by nvtx, the range name with no frames. */
    struct xp_diff_frame *frames; size_t n_frames; /* owned array; the new side's when matched */
    const char *range;          /* --by nvtx only */
    struct xp_diff_stats *base, *new_; /* NULL when the site is absent on that side; owned */
    char reasons[XP_DIFF_MAX_REASONS][48]; size_t n_reasons;
};

/* A total metric ("H2D.bytes", "pinned_share", ...). */
struct xp_diff_metric {
    char name[40];
    bool base_null, new_null;   /* no value (a share with no copies, a bandwidth with none) */
    double base, new_;
    enum xp_diff_class cls;     /* regressed / improved / unchanged */
};

struct xp_diff_totals_cmp {
    struct xp_diff_metric *m; size_t n;
};

struct xp_diff_pair {
    const struct xp_process *base, *new_; /* NULL when that side has no partner */
    struct xp_diff_totals_cmp totals;
};

struct xp_diff_finding_side { uint64_t count, bytes; int64_t time_ns; };
enum xp_diff_finding_kind { XP_DF_APPEARED = 0, XP_DF_DISAPPEARED, XP_DF_CHANGED };
struct xp_diff_finding {
    enum xp_diff_finding_kind kind;
    const char *rule;
    struct xp_diff_frame *frames; size_t n_frames; /* owned */
    struct xp_diff_finding_side base, new_;        /* the absent side zero */
};

struct xp_diff {
    struct xp_diff_options opt;
    size_t base_procs, new_procs;
    size_t n_exact, n_approximate, n_gone, n_new;
    struct xp_diff_totals_cmp totals;
    struct xp_diff_pair *pairs; size_t n_pairs;
    struct xp_diff_site *sites; size_t n_sites;     /* sorted: class order, then bytes desc */
    struct xp_diff_finding *findings; size_t n_findings; /* appeared, disappeared, changed */
    size_t regressions;         /* regressed sites + regressed totals (job, and pairs when > 1) */
    bool any_change;
    int exit_status;            /* 0 or 1, per opt.fail_on */
};

/* Compares base with new.  Returns 0 with *out (OUT) filled (free with
 * xp_diff_free), or -1 when out of memory (then *out is empty). */
int xp_diff_compute(const struct xp_report *base, const struct xp_report *new_,
                    const struct xp_diff_options *opt, struct xp_diff *out);
void xp_diff_free(struct xp_diff *d);

/* Noise bands (xp_diff_noise.c): a change of blocked time counts only past
 * this many standard deviations of the difference of two runs' sums. */
#define XP_DIFF_NOISE_SIGMAS 3.0
struct xp_diff_noise {
    double cv;                       /* the run's relative spread of a copy's blocked time */
    double var[1 + XP_DIR_COUNT];    /* variance of blocked_ns: all, then per direction */
    /* What blocked_ns would be were every copy as fast as the fastest of its
     * group (process, site, direction): a busy machine stretches most
     * copies but leaves some as fast as ever, so this floor stays where a
     * program whose copies got slower raises it (all, then per direction). */
    double floor[1 + XP_DIR_COUNT];
};
/* The noise of the blocked time of some processes (NULL entries skipped):
 * the spread of their copies, and job_cv (xp_diff_job_cv) of each
 * process's whole blocked time.  Returns 0, or -1 when out of memory. */
int xp_diff_noise_of(const struct xp_process *const *procs, size_t n, double job_cv,
                     struct xp_diff_noise *out);
/* How much the processes of one job (the ranks of one run, doing the same
 * work) differ in their mean blocked time per copy, relative to its mean:
 * a slowdown that hits one rank's copies all at once (its CPU taken by
 * others for a while) is noise the spread of its own copies does not show.
 * 0 for fewer than two processes with blocking copies. */
double xp_diff_job_cv(const struct xp_process *const *procs, size_t n);
void xp_welford_add(struct xp_welford *w, double x);
/* Variance of the sum of w's values, each at least cv * mean apart. */
double xp_welford_sum_var(const struct xp_welford *w, double cv);
/* Whether a change of a sum is past the noise of the two sums' variances. */
bool xp_diff_past_noise(double change, double var_base, double var_new);

/* Relative change in percent of a metric or site value; false when base is
 * zero (no finite percentage). */
bool xp_diff_change_pct(double base, double new_, double *pct);

/* Renderers (render_diff_*.c).  databases name the files of each side, for
 * the output's header.  Return 0, or -1 on a write error (errno set). */
struct xp_diff_inputs {
    char **base_dbs; size_t n_base_dbs;
    char **new_dbs; size_t n_new_dbs;
};
int xp_render_diff_json(FILE *f, const struct xp_diff *d, const struct xp_diff_inputs *in);
int xp_render_diff_text(FILE *f, const struct xp_diff *d, const struct xp_diff_inputs *in,
                        bool color);
int xp_render_diff_md(FILE *f, const struct xp_diff *d, const struct xp_diff_inputs *in);
int xp_render_diff_html(FILE *f, const struct xp_diff *d, const struct xp_diff_inputs *in);

/* Formatting helpers the renderers share (xp_diff.c). */
/* "1.5 MiB", "12 B" into buf. */
const char *xp_diff_fmt_bytes(double v, char *buf, size_t n);
/* "3.2 ms", "120 ns" into buf. */
const char *xp_diff_fmt_ns(double v, char *buf, size_t n);
/* A metric's value as text ("-" when null), by the unit its name implies. */
const char *xp_diff_fmt_metric(const struct xp_diff_metric *m, bool new_side, char *buf, size_t n);
/* "+12.5%", "n/a" (base zero), into buf. */
const char *xp_diff_fmt_pct(double base, double new_, char *buf, size_t n);
/* A frame as "function (file:line) [module]" or "module+0x1234", the
 * function demangled. */
const char *xp_diff_fmt_frame(const struct xp_diff_frame *f, char *buf, size_t n);
/* A site on one line: its first frame, and when that one is inlined,
 * " inlined into " the next; none when there is no frame. */
const char *xp_diff_fmt_site(const struct xp_diff_frame *f, size_t nframes, const char *none,
                             char *buf, size_t n);
/* The site's label: its innermost frame, or its range. */
const char *xp_diff_site_label(const struct xp_diff_site *s, char *buf, size_t n);

#endif
