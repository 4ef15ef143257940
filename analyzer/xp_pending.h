/* xp_pending.h: ingesting a database's pending journal before the report reads it.
 *
 * Its own file because the journal format (xp_format.h) and the report model
 * (xp_report.h) both name enums xp_alloc_kind and xp_blocking: one
 * translation unit cannot include both. */
#ifndef XP_PENDING_H
#define XP_PENDING_H

#include <stdbool.h>
#include <stddef.h>

/* If DB.xpj exists, stores what it holds in db (xp_recover) and sets *did
 * (OUT).  Returns 0, or -1 with the reason in err (OUT). */
int xp_pending_ingest(const char *db, bool *did, char *err, size_t errlen);

#endif
