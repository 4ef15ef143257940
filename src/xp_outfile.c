/* xp_outfile.c: the preload's output files: which name a process's database
 * gets, and creating it without ever replacing what is not ours. */
#include "xp_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "xp_config.h"
#include "xp_format.h"
#include "xp_journal.h"
#include "xp_mkdirs.h"
#include "xp_schema.h"

/* 0 when path is absent or a regular file; -1 with a reason otherwise.
 * lstat: a symbolic link is refused, not followed (someone else's link in
 * a shared folder must not make us write through it). */
static int check_replaceable(const char *path, bool link_ok, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT)
            return 0;
        snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    if (S_ISREG(st.st_mode) || (link_ok && S_ISLNK(st.st_mode)))
        return 0;
    snprintf(err, errlen, "cannot write %s: it is %s, not a regular file, and is never replaced",
             path, xp_file_kind(st.st_mode));
    return -1;
}

static const char *const companions[] = {"-wal", "-shm", XP_JOURNAL_SUFFIX, XP_RESERVE_SUFFIX};
#define N_COMPANIONS (sizeof companions / sizeof companions[0])

/* The database and its companions can all be replaced.  A companion may be
 * a symbolic link: it is removed (unlink does not follow), not written. */
static int check_all(const char *path, char *err, size_t errlen)
{
    if (check_replaceable(path, false, err, errlen) != 0)
        return -1;
    char buf[PATH_MAX + 16];
    for (size_t i = 0; i < N_COMPANIONS; i++) {
        snprintf(buf, sizeof buf, "%s%s", path, companions[i]);
        if (check_replaceable(buf, true, err, errlen) != 0)
            return -1;
    }
    return 0;
}

/* Opens a file we only read, never blocking on a FIFO and never following a
 * link; -1 unless it is a regular file. */
static int open_regular_ro(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* True if the manifest of this `xferprof run` already names path: another
 * process of the run owns that database. */
static bool manifest_has(const char *manifest, const char *path)
{
    if (manifest[0] == '\0')
        return false;
    int fd = open_regular_ro(manifest);
    FILE *f = fd < 0 ? NULL : fdopen(fd, "r");
    if (f == NULL) {
        if (fd >= 0)
            close(fd);
        return false;
    }
    char line[PATH_MAX + 64];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        char *p = strchr(line, ' ');
        p = p ? strchr(p + 1, ' ') : NULL;
        if (p) {
            p++;
            p[strcspn(p, "\n")] = '\0';
            found = strcmp(p, path) == 0;
        }
    }
    fclose(f);
    return found;
}

/* path as an SQLite URI ("file:" + percent-encoded path). */
static int file_uri(const char *path, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t n = 0;
    if (outlen < 6)
        return -1;
    memcpy(out, "file:", 5);
    n = 5;
    for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
        bool plain = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                     (*p >= '0' && *p <= '9') || strchr("/._-~", *p);
        if (n + (plain ? 1 : 3) >= outlen)
            return -1;
        if (plain) {
            out[n++] = (char)*p;
        } else {
            out[n++] = '%';
            out[n++] = hex[*p >> 4];
            out[n++] = hex[*p & 15];
        }
    }
    out[n] = '\0';
    return 0;
}

/* The pid that wrote the database at path (0 if unknown), and whether that
 * process is recording into it now.  A live writer has its journal beside
 * the database, whose header names its pid; a finished one left the pid in
 * meta.  The database is read as immutable: no lock taken, no -wal or -shm
 * created beside someone else's file. */
static pid_t db_owner(const char *path, bool *recording)
{
    char jpath[PATH_MAX + 16];
    snprintf(jpath, sizeof jpath, "%s%s", path, XP_JOURNAL_SUFFIX);
    pid_t writer = xp_journal_writer(jpath, recording);
    if (writer > 0)
        return writer;
    int fd = open_regular_ro(path);
    if (fd < 0)
        return 0;
    close(fd);
    static char uri[3 * PATH_MAX + 32];   /* serialized like scratch, below */
    if (file_uri(path, uri, sizeof uri - 16) != 0)
        return 0;
    strcat(uri, "?immutable=1");
    sqlite3 *db = NULL;
    pid_t pid = 0;
    if (sqlite3_open_v2(uri, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOFOLLOW,
                        NULL) == SQLITE_OK) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'pid'", -1, &st, NULL) ==
                SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            pid = (pid_t)sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return pid;
}

/* Why path is not this process's to take, in why (false when it is). */
static bool taken(const xp_outfile_req *q, const char *path, char *why, size_t whylen)
{
    if (manifest_has(q->manifest, path)) {
        snprintf(why, whylen, "another process of this run records into %s", path);
        return true;
    }
    bool recording;
    pid_t owner = db_owner(path, &recording);
    if (owner > 0 && owner != q->pid && recording)
        snprintf(why, whylen, "process %d is recording into %s", (int)owner, path);
    else if (owner > 0 && owner == getppid())
        snprintf(why, whylen, "%s holds the run of the parent process (%d)", path, (int)owner);
    else if (owner > 0 && owner == q->pid)
        snprintf(why, whylen, "%s holds an earlier program of this process", path);
    else
        return false;
    return true;
}

/* path with "-PID" (and "-N" when n > 1) before its extension. */
static int alternative(const char *path, pid_t pid, int n, char *out, size_t outlen)
{
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (dot == NULL || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
        dot = path + strlen(path);
    char suffix[48];
    if (n > 1)
        snprintf(suffix, sizeof suffix, "-%d-%d", (int)pid, n);
    else
        snprintf(suffix, sizeof suffix, "-%d", (int)pid);
    int len = snprintf(out, outlen, "%.*s%s%s", (int)(dot - path), path, suffix, dot);
    return len < 0 || (size_t)len >= outlen ? -1 : 0;
}

/* The paths xp_outfile_choose works with: 24 KiB that must not come from
 * the stack of the thread whose first CUDA call starts the session (it may
 * be a 16 KiB thread stack).  Sessions start one at a time (the engine's
 * ST_STARTING state), so one set serves. */
static struct {
    char expanded[PATH_MAX], path[PATH_MAX], cwd[PATH_MAX], as_parent[PATH_MAX];
    char alt[PATH_MAX], why[PATH_MAX + 128], why_alt[PATH_MAX + 128];
} scratch;

int xp_outfile_choose(const xp_outfile_req *q, char *out, size_t outlen, char *note,
                      size_t notelen, char *err, size_t errlen)
{
    note[0] = '\0';
    char *expanded = scratch.expanded, *path = scratch.path, *why = scratch.why;
    int64_t start_s = (int64_t)(q->start_wall_ns / 1000000000u);
    if (xp_expand_output(q->pattern, q->pid, q->host, q->rank, start_s, expanded,
                         PATH_MAX) != 0) {
        snprintf(err, errlen, "bad output pattern '%s'", q->pattern);
        return -1;
    }
    if (expanded[0] != '/') {
        if (getcwd(scratch.cwd, PATH_MAX) == NULL ||
            (size_t)snprintf(path, PATH_MAX, "%s/%s", scratch.cwd, expanded) >= PATH_MAX) {
            snprintf(err, errlen, "cannot make '%s' absolute", expanded);
            return -1;
        }
    } else {
        snprintf(path, PATH_MAX, "%s", expanded);
    }
    /* A folder the user named that is not there yet is made (mkdir -p);
     * the names with a pid, below, are in the same folder. */
    if (xp_make_parent_dirs(path, scratch.why_alt, sizeof scratch.why_alt) != 0) {
        snprintf(err, errlen, "cannot write %s: %s", path, scratch.why_alt);
        return -1;
    }
    /* The folder by its real name: SQLite, opened with SQLITE_OPEN_NOFOLLOW
     * (xp_db_open_write), refuses a path with a symbolic link anywhere in
     * it, and a user's output folder often is one (~/scratch to a big disk).
     * The links on the way were checked just above. */
    char *slash = strrchr(path, '/');
    *slash = '\0';
    bool resolved = realpath(path[0] ? path : "/", scratch.cwd) != NULL;
    *slash = '/';
    if (resolved && strcmp(scratch.cwd, "/") != 0 &&
        (size_t)snprintf(scratch.alt, PATH_MAX, "%s%s", scratch.cwd, slash) < PATH_MAX)
        memcpy(path, scratch.alt, strlen(scratch.alt) + 1);

    /* A forked child shares the parent's settings: without %p in the
     * pattern it would get the parent's name, whether or not the parent has
     * started recording yet. */
    why[0] = '\0';
    if (q->forked && xp_expand_output(q->pattern, getppid(), q->host, q->rank, start_s,
                                      scratch.as_parent, PATH_MAX) == 0 &&
        strcmp(scratch.as_parent, expanded) == 0)
        snprintf(why, sizeof scratch.why,
                 "%s is the name of the process this one was forked from (%d)", path,
                 (int)getppid());
    if (why[0] == '\0' && check_all(path, err, errlen) != 0)
        return -1;
    if (why[0] == '\0' && !taken(q, path, why, sizeof scratch.why)) {
        snprintf(out, outlen, "%s", path);
        return 0;
    }
    for (int n = 1; n < 100; n++) {
        if (alternative(path, q->pid, n, scratch.alt, PATH_MAX) != 0) {
            snprintf(err, errlen, "%s; and a name of its own would be too long", why);
            return -1;
        }
        if (check_all(scratch.alt, err, errlen) != 0)
            return -1;
        if (taken(q, scratch.alt, scratch.why_alt, sizeof scratch.why_alt))
            continue;
        snprintf(out, outlen, "%s", scratch.alt);
        snprintf(note, notelen, "%s: this process (%d) records into %s", why, (int)q->pid,
                 scratch.alt);
        return 0;
    }
    snprintf(err, errlen, "%s, and so are the names with its pid", why);
    return -1;
}

int xp_outfile_clear_companions(const char *path, char *err, size_t errlen)
{
    char buf[PATH_MAX + 16];
    for (size_t i = 0; i < N_COMPANIONS; i++) {
        snprintf(buf, sizeof buf, "%s%s", path, companions[i]);
        if (check_replaceable(buf, true, err, errlen) != 0)
            return -1;
        if (unlink(buf) != 0 && errno != ENOENT) {
            snprintf(err, errlen, "cannot remove %s: %s", buf, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* The folder path is in must be one: a file where a folder should be gives
 * ENOTDIR at open time anyway, but a clear reason is better. */
static int check_folder(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == NULL)
        return 0;
    if (slash == dir)
        slash[1] = '\0';
    else
        *slash = '\0';
    struct stat st;
    if (stat(dir, &st) != 0) {
        snprintf(err, errlen, "cannot write %s: %s: %s", path, dir, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "cannot write %s: %s: %s", path, dir, strerror(ENOTDIR));
        return -1;
    }
    return 0;
}

int xp_outfile_create_db(const char *path, char *err, size_t errlen)
{
    if (check_folder(path, err, errlen) != 0 || check_replaceable(path, false, err, errlen) != 0)
        return -1;
    char tmp[PATH_MAX + 48];
    int fd = -1;
    for (int n = 0; fd < 0 && n < 100; n++) {
        snprintf(tmp, sizeof tmp, "%s.new-%d-%d", path, (int)getpid(), n);
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
            return -1;
        }
    }
    if (fd < 0) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(EEXIST));
        return -1;
    }
    close(fd);
    /* Made in SQLite's default rollback mode: complete on disk once the
     * connection is closed, with no companion to carry over the rename
     * (xp_ingest_open turns WAL on at the final name). */
    sqlite3 *db = NULL;
    char why[512];
    if (xp_db_open_write(tmp, &db, why, sizeof why) != 0) {
        snprintf(err, errlen, "cannot write %s", why);
        goto fail;
    }
    if (sqlite3_close(db) != SQLITE_OK) {
        snprintf(err, errlen, "cannot write %s: %s", tmp, sqlite3_errmsg(db));
        goto fail;
    }
    if (check_replaceable(path, false, err, errlen) != 0)
        goto fail;
    if (rename(tmp, path) != 0) {
        snprintf(err, errlen, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        goto fail;
    }
    return 0;
fail:
    unlink(tmp);
    return -1;
}

int xp_outfile_make_reserve(const char *path)
{
    char buf[PATH_MAX + 16];
    snprintf(buf, sizeof buf, "%s%s", path, XP_RESERVE_SUFFIX);
    int fd = open(buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
    if (fd < 0)
        return -1;
    int rc;
    do
        rc = posix_fallocate(fd, 0, XP_RESERVE_BYTES);
    while (rc == EINTR);
    close(fd);
    if (rc != 0) {
        unlink(buf);
        return -1;
    }
    return 0;
}

void xp_outfile_drop_reserve(const char *path)
{
    char buf[PATH_MAX + 16];
    snprintf(buf, sizeof buf, "%s%s", path, XP_RESERVE_SUFFIX);
    unlink(buf);
}

void xp_outfile_remove(const char *path)
{
    char buf[PATH_MAX + 16];
    unlink(path);
    for (size_t i = 0; i < N_COMPANIONS; i++) {
        snprintf(buf, sizeof buf, "%s%s", path, companions[i]);
        unlink(buf);
    }
}

/* Appends one line to the manifest.  Returns 0, or -1 with err set. */
static int manifest_append(const char *manifest, const char *line, int n, char *err,
                           size_t errlen)
{
    /* O_NONBLOCK: a FIFO given as the manifest must not hang the program;
     * O_NOFOLLOW and the type check: we append to a regular file only. */
    int fd = open(manifest, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0) {
        snprintf(err, errlen, "manifest %s: %s", manifest, strerror(errno));
        return -1;
    }
    struct stat st = {0};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "manifest %s is %s: nothing written", manifest,
                 xp_file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    int rc = 0;
    if (n <= 0) {
        snprintf(err, errlen, "manifest line too long");
        rc = -1;
    } else {
        ssize_t w;
        do
            w = write(fd, line, (size_t)n);
        while (w < 0 && errno == EINTR);
        if (w != n) {
            snprintf(err, errlen, "manifest %s: %s", manifest,
                     w < 0 ? strerror(errno) : "short write");
            rc = -1;
        }
    }
    close(fd);
    return rc;
}

int xp_outfile_manifest_add(const char *manifest, pid_t pid, const char *path, char *err,
                            size_t errlen)
{
    char line[PATH_MAX + 64];
    int n = snprintf(line, sizeof line, "%d %d %s\n", (int)pid, (int)getppid(), path);
    return manifest_append(manifest, line, n > 0 && (size_t)n < sizeof line ? n : -1, err,
                           errlen);
}

void xp_outfile_manifest_silent(const char *manifest, pid_t pid, const char *rank)
{
    char line[160], err[PATH_MAX + 64];
    int n = snprintf(line, sizeof line, "%d %d - %.64s\n", (int)pid, (int)getppid(), rank);
    (void)manifest_append(manifest, line, n > 0 && (size_t)n < sizeof line ? n : -1, err,
                          sizeof err);
}
