/* xp_pending.c: ingesting a database's pending journal before the report reads it. */
#include "xp_pending.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "xp_format.h"
#include "xp_ingest.h"

int xp_pending_ingest(const char *db, bool *did, char *err, size_t errlen)
{
    char journal[4096];
    *did = false;
    if ((size_t)snprintf(journal, sizeof journal, "%s%s", db, XP_JOURNAL_SUFFIX) >= sizeof journal)
        return 0;
    /* xp_recover would create a missing database; only a journal that is
     * there makes it worth calling. */
    if (access(journal, F_OK) != 0)
        return 0;
    char why[512] = "";
    if (xp_recover(db, did, why, sizeof why) != 0) {
        /* Ingest's reasons often start with the file they are about. */
        size_t n = strlen(db);
        const char *r = strncmp(why, db, n) == 0 && why[n] == ':' ? why + n + 1 : why;
        while (*r == ' ')
            r++;
        snprintf(err, errlen, "cannot ingest the pending journal (%s)", r);
        return -1;
    }
    return 0;
}
