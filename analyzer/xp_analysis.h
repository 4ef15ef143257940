/* xp_analysis.h: from database paths to a report with findings, shared by `xferprof report` and `xferprof diff`. */
#ifndef XP_ANALYSIS_H
#define XP_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>

#include "xp_report.h"

/* Loads the n databases of paths into r (its thresholds already set; r's
 * processes in the order given; xp_load ingests a pending journal first).
 * Names the database it reads in the progress line (xp_progress.h).
 * Returns 0, or -1 with "DB: reason" in err (OUT); r is then freed. */
int xp_analysis_load(struct xp_report *r, char *const *paths, size_t n, char *err,
                     size_t errlen);

/* Runs every rule of xp_rules[] on r, keeps the findings at or above min,
 * and sorts them: severity first, then the time they cost. */
void xp_analysis_findings(struct xp_report *r, enum xp_severity min);

/* Frees what the two above filled and zeroes r (its thresholds kept). */
void xp_analysis_free(struct xp_report *r);

#endif
