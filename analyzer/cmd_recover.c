/* cmd_recover.c: `xferprof recover DB...`, ingesting what a dead process left in its journal. */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xp_commands.h"
#include "xp_cli.h"
#include "xp_format.h"
#include "xp_ingest.h"
#include "xp_journal.h"
#include "xp_progress.h"

static void xp_recover_usage(FILE *f)
{
    fprintf(f, "Usage: xferprof recover DB...\n"
               "\n"
               "A profiled process that was killed, crashed or called _exit() leaves its\n"
               "last records in a journal next to its database, DB" XP_JOURNAL_SUFFIX ". This stores\n"
               "them in DB, marks DB recovered and removes the journal. The journal's own\n"
               "name may be given instead of DB. `xferprof run` does this by itself for\n"
               "the processes it started.\n"
               "\n"
               "Exit status: 0, or 2 if any DB could not be recovered.\n");
}

/* One database: prints its line; returns 0 or 2. */
static int xp_recover_one(const char *arg)
{
    char db[4096], journal[4096 + sizeof XP_JOURNAL_SUFFIX], err[512];
    size_t n = strlen(arg), sl = strlen(XP_JOURNAL_SUFFIX);

    /* Accept the journal's own name too: it is what `ls` shows next to a crash. */
    if (n > sl && strcmp(arg + n - sl, XP_JOURNAL_SUFFIX) == 0)
        n -= sl;
    if (n == 0 || n >= sizeof db) {
        fprintf(stderr, "xferprof: '%s': not a database path\n", arg);
        return 2;
    }
    memcpy(db, arg, n);
    db[n] = '\0';
    snprintf(journal, sizeof journal, "%s%s", db, XP_JOURNAL_SUFFIX);

    /* A FIFO or a device would make SQLite, or the journal reader, wait. */
    struct stat st;
    if ((stat(db, &st) == 0 && !S_ISREG(st.st_mode)) ||
        (stat(journal, &st) == 0 && !S_ISREG(st.st_mode))) {
        fprintf(stderr, "xferprof: %s: not a regular file\n",
                stat(db, &st) == 0 && !S_ISREG(st.st_mode) ? db : journal);
        return 2;
    }
    bool has_journal = access(journal, F_OK) == 0;
    /* xp_recover would create a missing database; for a mistyped name that
     * would leave an empty file behind and claim success. */
    if (!has_journal && access(db, F_OK) != 0) {
        fprintf(stderr, "xferprof: %s: no such database or journal\n", db);
        return 2;
    }
    xp_progress_stage("recovering %s", db);
    bool did = false;
    uint64_t size = has_journal && stat(journal, &st) == 0 ? (uint64_t)st.st_size : 0;
    /* The count comes from the ingest pass itself: reading the journal a
     * second time only to count cost 3 % of a recovery (docs/performance.md). */
    uint64_t records = 0;
    int rc = xp_recover_progress(db, &did, xp_progress_recover, &size, &records, err, sizeof err);
    xp_progress_clear();
    if (rc != 0) {
        /* Ingest's reasons usually start with the file they are about. */
        if (strncmp(err, db, strlen(db)) == 0)
            fprintf(stderr, "xferprof: %s\n", err);
        else
            fprintf(stderr, "xferprof: %s: %s\n", db, err);
        return 2;
    }
    if (!did)
        printf("%s: nothing to recover\n", db);
    else
        printf("%s: recovered %" PRIu64 " record%s\n", db, records, records == 1 ? "" : "s");
    return 0;
}

int xp_command_recover(int argc, char **argv)
{
    xp_progress_start("recover");
    return xp_cli_each_db("recover", argc, argv, xp_recover_usage, xp_recover_one);
}
