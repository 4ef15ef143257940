/* xp_live.h: reading a run that is still going, without consuming its journal. */
#ifndef XP_LIVE_H
#define XP_LIVE_H

#include <stdbool.h>
#include <stddef.h>

/* A snapshot of the live database db: a copy (SQLite's backup, which reads
 * under the writer's WAL without disturbing it) into which what the
 * journal holds so far is ingested, leaving the journal and the database
 * as they were.  The copy's path goes to out; the file is removed when this
 * process exits.  Returns 0, or -1 with a reason in err. */
int xp_live_snapshot(const char *db, const char *journal, char *out, size_t outlen, char *err,
                     size_t errlen);

#endif
