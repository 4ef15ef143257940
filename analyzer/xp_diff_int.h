/* xp_diff_int.h: what the parts of xferprof diff share among themselves
 * (xp_diff.c matches and classifies sites, xp_diff_totals.c compares totals,
 * xp_diff_findings.c the findings); not for the renderers. */
#ifndef XP_DIFF_INT_H
#define XP_DIFF_INT_H

#include "xp_diff.h"

/* strcmp that orders NULL first. */
int xp_diff_strcmp0(const char *a, const char *b);
/* Orders two keys; exact compares lines too, else only (module, function). */
int xp_diff_frames_cmp(const struct xp_diff_frame *a, size_t na, const struct xp_diff_frame *b,
                       size_t nb, bool exact);
/* The key frames of one stack, allocated (NULL with *n 0 when there are none
 * or memory ran out: the key is then the empty one, "(no stack)"). */
struct xp_diff_frame *xp_diff_stack_key_alloc(const struct xp_process *p, uint32_t stack_id,
                                              bool innermost, size_t *n);
/* Adds a reason to a site (up to XP_DIFF_MAX_REASONS). */
void xp_diff_reason(struct xp_diff_site *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* -1 improved, 1 regressed, 0 neither, for a value where more is worse:
 * past the floor and past pct_threshold percent. */
int xp_diff_judge(double base, double new_, double floor, double pct_threshold);

/* Totals of some processes of each side (NULL entries: no partner) compared. */
int xp_diff_compare_totals(const struct xp_process *const *bp, size_t nb, const struct xp_process *const *np,
                           size_t nn, double threshold, const double job_cv[2],
                           struct xp_diff_totals_cmp *out);
size_t xp_diff_count_class(const struct xp_diff_totals_cmp *t, enum xp_diff_class c);
/* Pairs the processes of two runs: by rank when all have one, else by order. */
int xp_diff_make_pairs(const struct xp_report *b, const struct xp_report *n, struct xp_diff *d);

/* Matches the findings of two runs into d->findings, and counts a finding
 * that appeared (disappeared) on a matched site in worse (better). */
int xp_diff_findings_compare(struct xp_diff *d, const struct xp_report *base, const struct xp_report *new_,
                             int *worse, int *better);

#endif
