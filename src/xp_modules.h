/* xp_modules.h: the map of loaded objects that stacks are symbolized against. */
#ifndef XP_MODULES_H
#define XP_MODULES_H

#include "xp_journal.h"

/* Writes an XP_REC_MODULE record for every loaded object not yet written
 * (path, load bias, extent, GNU build id).  Called at start, periodically by
 * the ingest thread and at exit, since a dlopen'd library must be known
 * before the analyzer sees its addresses.  Not for the hot path (it takes
 * the loader's lock). */
void xp_modules_scan(xp_journal *j);

/* Forgets what was written (a forked child starts a new journal). */
void xp_modules_reset(void);

#endif
