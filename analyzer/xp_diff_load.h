/* xp_diff_load.h: how `xferprof diff` gets the model of one side (its databases).
 *
 * MERGE: implemented for now by xp_diff_load_stub.c, a minimal direct reader
 * without symbols or rules.  At merge, implement these two with the report's
 * loader (xp_load + symbolizer + the rules of xp_rules[]) and delete the stub:
 * cmd_diff.c only calls these. */
#ifndef XP_DIFF_LOAD_H
#define XP_DIFF_LOAD_H

#include <stddef.h>

#include "xp_report.h"

/* Loads the n databases of paths (a database with a pending journal,
 * DB.xpj, is ingested first) into out (OUT: processes in the order given,
 * findings of the rules).  Returns 0, or -1 with a one-line "DB: reason" in
 * err (OUT) and out emptied. */
int xp_diff_load_side(char **paths, size_t n, struct xp_report *out, char *err, size_t errlen);

/* Frees what xp_diff_load_side filled (and zeroes r). */
void xp_diff_free_side(struct xp_report *r);

#endif
