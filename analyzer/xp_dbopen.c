/* xp_dbopen.c: opening a run database for reading: refusing what is not
 * one (a FIFO, a file cut short), storing a pending journal first, or
 * reading a snapshot of a run still going. */
#include "xp_load.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xp_format.h"
#include "xp_ingest.h"
#include "xp_journal.h"
#include "xp_live.h"
#include "xp_progress.h"
#include "xp_schema.h"

/* If DB.xpj exists, stores what it holds in db (xp_recover) and sets *did
 * (OUT); when the process writing it still runs, *live (OUT) gets the path
 * of a snapshot to read instead, and db and its journal are left alone
 * (xp_live.h).  Returns 0, or -1 with the reason in err (OUT). */
static int xp_pending_ingest(const char *db, bool *did, char *live, size_t livelen, char *err,
                             size_t errlen)
{
    char journal[4096];
    *did = false;
    live[0] = '\0';
    if ((size_t)snprintf(journal, sizeof journal, "%s%s", db, XP_JOURNAL_SUFFIX) >= sizeof journal)
        return 0;
    /* xp_recover would create a missing database; only a journal that is
     * there makes it worth calling. */
    if (access(journal, F_OK) != 0)
        return 0;
    bool running;
    if (xp_journal_writer(journal, &running) != getpid() && running) {
        char why[512] = "";
        if (xp_live_snapshot(db, journal, live, livelen, why, sizeof why) != 0) {
            snprintf(err, errlen, "cannot read the live run (%s)", why);
            return -1;
        }
        return 0;
    }
    char why[512] = "";
    struct stat js;
    uint64_t size = stat(journal, &js) == 0 ? (uint64_t)js.st_size : 0;
    if (xp_recover_progress(db, did, xp_progress_recover, &size, NULL, why, sizeof why) != 0) {
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

/* A path that names something other than a regular file (a FIFO, a
 * device) is refused before anything opens it: opening would wait. */
static int xp_check_regular(const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "not a regular file");
        return -1;
    }
    return 0;
}

/* Whether path has a -wal beside it holding more than the WAL's header. */
static bool xp_has_wal(const char *path)
{
    char wal[PATH_MAX + 8];
    struct stat st;
    return (size_t)snprintf(wal, sizeof wal, "%s-wal", path) < sizeof wal && stat(wal, &st) == 0 &&
           S_ISREG(st.st_mode) && st.st_size > 32;
}

/* A file shorter than the page count its header claims lost its end: said
 * before SQLite reads a page, which may well be the one that is missing.
 * Returns 0 (not detectably truncated), -1 with err set. */
static int xp_check_header(const char *path, char *err, size_t errlen)
{
    unsigned char h[100];
    struct stat sb;
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "%s", errno == ENOENT ? "no such database" : strerror(errno));
        return -1;
    }
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        snprintf(err, errlen, "not a regular file");
        close(fd);
        return -1;
    }
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        snprintf(err, errlen, "%s", strerror(errno));
        close(fd);
        return -1;
    }
    size_t n = fread(h, 1, sizeof h, f);
    int fstat_rc = fstat(fileno(f), &sb);
    fclose(f);
    if (n == 0) {
        snprintf(err, errlen, "not an xferprof database (empty file)");
        return -1;
    }
    if (n < 16 || memcmp(h, "SQLite format 3", 16) != 0) {
        snprintf(err, errlen, "not an xferprof database");
        return -1;
    }
    if (n < sizeof h || fstat_rc != 0) {
        snprintf(err, errlen, "database is truncated or corrupt (header cut short)");
        return -1;
    }
    uint32_t page = (uint32_t)h[16] << 8 | h[17];
    if (page == 1)
        page = 65536;
    uint32_t counter = (uint32_t)h[24] << 24 | (uint32_t)h[25] << 16 | (uint32_t)h[26] << 8 | h[27];
    uint32_t pages = (uint32_t)h[28] << 24 | (uint32_t)h[29] << 16 | (uint32_t)h[30] << 8 | h[31];
    uint32_t valid_for = (uint32_t)h[92] << 24 | (uint32_t)h[93] << 16 | (uint32_t)h[94] << 8 | h[95];
    /* The page count is only kept by SQLite >= 3.7.0, which says so by
     * setting "version-valid-for" to the change counter.  Beside a -wal it
     * proves nothing: a checkpoint a full disk stopped half-way has written
     * page 1 but not yet the pages after the file's end, which SQLite still
     * reads from the WAL. */
    if (valid_for == counter && pages > 0 && (uint64_t)sb.st_size < (uint64_t)page * pages &&
        !xp_has_wal(path)) {
        snprintf(err, errlen,
                 "database is truncated or corrupt (file has %lld bytes, its header says %llu)",
                 (long long)sb.st_size, (unsigned long long)page * pages);
        return -1;
    }
    return 0;
}

static int xp_open(const char *path, sqlite3 **out, bool *writable, char *err, size_t errlen)
{
    *out = NULL;
    /* Not writable (a shared results folder, a read-only mount): still
     * reportable, the symbol cache then stays in memory. */
    *writable = access(path, W_OK) == 0;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, *writable ? SQLITE_OPEN_READWRITE : SQLITE_OPEN_READONLY,
                             NULL);
    if (rc != SQLITE_OK) {
        xp_load_db_error(db, rc, err, errlen);
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db, 5000);
    char why[256] = "";
    rc = xp_schema_check(db, NULL, why, sizeof why);
    if (rc != 0) {
        int code = sqlite3_errcode(db) & 0xff;
        if (rc == 1)
            snprintf(err, errlen, "not an xferprof database (no tables)");
        else if (code == SQLITE_CORRUPT || code == SQLITE_NOTADB || code == SQLITE_IOERR)
            snprintf(err, errlen, "database is truncated or corrupt (%s)", why);
        else
            snprintf(err, errlen, "%s", why);
        sqlite3_close(db);
        return -1;
    }
    *out = db;
    return 0;
}

int xp_load_open(const char *path, sqlite3 **db, bool *writable, bool *did, char *err,
                 size_t errlen)
{
    *db = NULL;
    *did = *writable = false;
    char live[4096];
    if (xp_check_regular(path, err, errlen) != 0 ||
        xp_pending_ingest(path, did, live, sizeof live, err, errlen) != 0)
        return -1;
    if (live[0]) {
        /* A snapshot of a run still going: read, never written (the symbol
         * cache stays in memory). */
        if (xp_open(live, db, writable, err, errlen) != 0)
            return -1;
        *writable = false;
        return 0;
    }
    if (xp_check_header(path, err, errlen) != 0)
        return -1;
    return xp_open(path, db, writable, err, errlen);
}

