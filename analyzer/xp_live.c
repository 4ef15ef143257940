/* xp_live.c: reading a run that is still going, without consuming its journal.
 *
 * report, export and diff used to ingest a pending journal into the database
 * and remove it (what `recover` does for a process that died).  On a live
 * run that took the journal from under its writer: a SIGKILL afterwards
 * lost every completed call since, and the database said recovered=1 (issue
 * 14 item 8).  A live run is now read from a snapshot instead. */
#include "xp_live.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "xp_format.h"
#include "xp_ingest.h"
#include "xp_journal.h"

/* The snapshots this process made, removed at its exit. */
static char **snapshots;
static size_t n_snapshots;

static void xp_remove_snapshots(void)
{
    for (size_t i = 0; i < n_snapshots; i++) {
        unlink(snapshots[i]);
        free(snapshots[i]);
    }
    free(snapshots);
    snapshots = NULL;
    n_snapshots = 0;
}

static int xp_remember(const char *path)
{
    char **grown = realloc(snapshots, (n_snapshots + 1) * sizeof *grown);
    if (!grown)
        return -1;
    snapshots = grown;
    if ((snapshots[n_snapshots] = strdup(path)) == NULL)
        return -1;
    if (n_snapshots++ == 0)
        atexit(xp_remove_snapshots);
    return 0;
}

/* Copies the database at from into the (empty) file at to. */
static int xp_copy_db(const char *from, const char *to, char *err, size_t errlen)
{
    sqlite3 *src = NULL, *dst = NULL;
    int rc = sqlite3_open_v2(from, &src, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_open_v2(to, &dst, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(src, 5000);
        sqlite3_backup *b = sqlite3_backup_init(dst, "main", src, "main");
        if (b == NULL) {
            rc = sqlite3_errcode(dst);
        } else {
            do
                rc = sqlite3_backup_step(b, -1);
            while (rc == SQLITE_BUSY || rc == SQLITE_LOCKED);
            sqlite3_backup_finish(b);
            rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
        }
    }
    if (rc != SQLITE_OK)
        snprintf(err, errlen, "cannot copy the live database: %s", sqlite3_errstr(rc));
    sqlite3_close(src);
    sqlite3_close(dst);
    return rc == SQLITE_OK ? 0 : -1;
}

int xp_live_snapshot(const char *db, const char *journal, char *out, size_t outlen, char *err,
                     size_t errlen)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if ((size_t)snprintf(out, outlen, "%s/xferprof-live-XXXXXX", tmp) >= outlen) {
        snprintf(err, errlen, "TMPDIR is too long");
        return -1;
    }
    int fd = mkostemp(out, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot make a snapshot in %s: %s", tmp, strerror(errno));
        return -1;
    }
    close(fd);
    if (xp_remember(out) != 0) {
        unlink(out);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (xp_copy_db(db, out, err, errlen) != 0)
        return -1;
    xp_journal_reader *r = NULL;
    xp_ingest *ig = NULL;
    char why[512] = "";
    int rc = -1;
    if (xp_journal_open(journal, &r, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s: %s", journal, why);
        goto out;
    }
    /* Not final: the writer is still at work, so a record it has not
     * committed yet is not cut off, just not there yet. */
    if (xp_ingest_open(out, &ig, err, errlen) != 0 ||
        xp_ingest_pass(ig, r, false, err, errlen) != 0)
        goto out;
    rc = 0;
out:
    xp_ingest_close(ig);
    xp_journal_reader_close(r);
    return rc;
}
