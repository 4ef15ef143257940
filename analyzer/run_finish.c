/* run_finish.c: what `xferprof run` does around and after CMD: the manifest
 * the profiled processes name their databases in, and at the end recovery of
 * what died, CMD's exit status and one summary line per database. */
#include "run_finish.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "xp_format.h"
#include "xp_ingest.h"
#include "xp_render.h"

/* Whether pid is a process that has not exited (a zombie has). */
static bool xp_process_running(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return false;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    /* "pid (comm) S ...": comm may hold spaces and parentheses, so the
     * state follows the last ')'. */
    char *p = strrchr(buf, ')');
    return !(p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X'));
}

/* ---- the manifest ------------------------------------------------------- */

typedef struct xp_proc {
    long pid, ppid;
    char *db;      /* for a process that recorded nothing: "- RANK" */
    char *rank;    /* a database's meta rank once read, or NULL */
} xp_proc;

/* A line of a process that recorded nothing (xp_outfile_manifest_silent):
 * "- RANK" where a database path would be (those are absolute). */
static const char *xp_silent_rank(const xp_proc *p)
{
    return p->db[0] == '-' && p->db[1] == ' ' ? p->db + 2 : NULL;
}

/* Names each rank of the job none of whose processes recorded anything
 * (its helper processes, a shell or git started by a rank that did record,
 * say nothing). */
static void xp_report_silent_ranks(const xp_proc *procs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *rank = xp_silent_rank(&procs[i]);
        if (!rank)
            continue;
        bool recorded = false;
        for (size_t j = 0; j < n && !recorded; j++)
            recorded = procs[j].rank && strcmp(procs[j].rank, rank) == 0;
        if (!recorded)
            fprintf(stderr, "xferprof: rank %s (pid %ld): no CUDA activity recorded\n", rank,
                    procs[i].pid);
    }
}

/* Reads "PID PPID DBPATH\n" lines; a line without its newline (a process
 * killed in its write) or otherwise malformed is skipped.  The same database
 * named twice (exec keeps the pid) is one entry, with the last pid. */
static int xp_read_manifest(int fd, xp_proc **out, size_t *count)
{
    char *text = NULL;
    size_t len = 0, cap = 0;
    xp_proc *procs = NULL;
    size_t n = 0;

    if (lseek(fd, 0, SEEK_SET) < 0)
        return -1;
    for (;;) {
        if (cap - len < 4096) {
            char *t = realloc(text, cap + 65536);
            if (!t)
                goto fail;
            text = t;
            cap += 65536;
        }
        ssize_t r = read(fd, text + len, cap - len - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            goto fail;
        if (r == 0)
            break;
        len += (size_t)r;
    }
    if (!text)
        goto done;
    text[len] = '\0';
    for (char *line = text, *nl; (nl = strchr(line, '\n')); line = nl + 1) {
        *nl = '\0';
        char *end;
        long pid = strtol(line, &end, 10);
        if (end == line || *end != ' ' || pid <= 0)
            continue;
        char *p2 = end + 1;
        long ppid = strtol(p2, &end, 10);
        if (end == p2 || *end != ' ' || !end[1])
            continue;
        const char *db = end + 1;
        size_t i;
        for (i = 0; i < n && strcmp(procs[i].db, db) != 0; i++)
            ;
        if (i == n) {
            xp_proc *t = realloc(procs, (n + 1) * sizeof *procs);
            if (t)
                t[n].rank = NULL;
            if (!t || !(t[n].db = strdup(db))) {
                procs = t ? t : procs;
                goto fail;
            }
            procs = t;
            n++;
        }
        procs[i].pid = pid;
        procs[i].ppid = ppid;
    }
done:
    free(text);
    *out = procs;
    *count = n;
    return 0;
fail:
    free(text);
    for (size_t i = 0; i < n; i++)
        free(procs[i].db);
    free(procs);
    return -1;
}

/* ---- after CMD: recover, mark, summarize -------------------------------- */

/* Prints "xferprof: pid P: DB: N copies, ..." from read-only queries.
 * Returns 0, or -1 after printing why it could not. */
static int xp_summarize(xp_proc *p, const char *shown, bool recovered)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    long long copies = 0, h2d = 0, d2h = 0, live = 0, live_bytes = 0;
    int rc = sqlite3_open_v2(p->db, &db, SQLITE_OPEN_READONLY, NULL);

    if (rc == SQLITE_OK)
        sqlite3_busy_timeout(db, 5000); /* a descendant may still be ingesting */
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT count(*), sum(CASE WHEN direction='H2D' THEN bytes END), "
                                "sum(CASE WHEN direction='D2H' THEN bytes END) "
                                "FROM copies WHERE status=0",
                                -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        copies = sqlite3_column_int64(st, 0);
        h2d = sqlite3_column_int64(st, 1); /* NULL (no such copies) reads as 0 */
        d2h = sqlite3_column_int64(st, 2);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT count(*), sum(bytes) FROM allocations "
                                "WHERE free_ns IS NULL",
                                -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        live = sqlite3_column_int64(st, 0);
        live_bytes = sqlite3_column_int64(st, 1);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    st = NULL;
    /* Calls that are not in the database: said here, once, with why; and
     * the process's rank, for xp_report_silent_ranks. */
    long long lost = 0;
    char reason[512] = "";
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db,
                                "SELECT (SELECT value FROM meta WHERE key = 'records_lost'), "
                                "(SELECT value FROM meta WHERE key = 'records_lost_reason'), "
                                "(SELECT value FROM meta WHERE key = 'rank')",
                                -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        lost = sqlite3_column_int64(st, 0);
        const unsigned char *why = sqlite3_column_text(st, 1);
        snprintf(reason, sizeof reason, "%s", why ? (const char *)why : "no reason recorded");
        const unsigned char *rank = sqlite3_column_text(st, 2);
        p->rank = rank ? strdup((const char *)rank) : NULL;
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK) {
        fprintf(stderr, "xferprof: pid %ld: %s: cannot read the database: %s\n", p->pid, shown,
                db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        sqlite3_close(db);
        return -1;
    }
    sqlite3_close(db);

    char b1[32], b2[32], b3[48] = "";
    /* Sums of sizes the ingest checked: never below 0. */
    xp_fmt_bytes((uint64_t)h2d, b1, sizeof b1);
    xp_fmt_bytes((uint64_t)d2h, b2, sizeof b2);
    if (live > 0) {
        char b[32];
        xp_fmt_bytes((uint64_t)live_bytes, b, sizeof b);
        snprintf(b3, sizeof b3, " (%s)", b);
    }
    fprintf(stderr,
            "xferprof: pid %ld: %s: %lld cop%s, %s H2D, %s D2H, %lld allocation%s live at exit%s%s\n",
            p->pid, shown, copies, copies == 1 ? "y" : "ies", b1, b2, live, live == 1 ? "" : "s", b3,
            recovered ? ", recovered" : "");
    if (lost > 0)
        fprintf(stderr, "xferprof: pid %ld: %s: %lld call(s) NOT recorded: %s\n", p->pid, shown,
                lost, reason);
    return 0;
}

/* Records the launcher's view of how CMD ended in its database. */
static int xp_mark_exit(const char *path, int status, char *err, size_t errlen)
{
    xp_ingest *ig;
    char value[16];
    if (xp_ingest_open(path, &ig, err, errlen) != 0)
        return -1;
    snprintf(value, sizeof value, "%d", status);
    int rc = xp_ingest_set_meta(ig, "exit_status", value);
    if (rc != 0)
        snprintf(err, errlen, "cannot store exit_status");
    xp_ingest_close(ig);
    return rc;
}

void xp_run_finish(int manifest_fd, pid_t child, int status, bool quiet)
{
    xp_proc *procs = NULL;
    size_t n = 0;
    char cwd[PATH_MAX], err[512];
    size_t cwdlen = 0;

    if (xp_read_manifest(manifest_fd, &procs, &n) != 0) {
        fprintf(stderr, "xferprof: cannot read the list of databases: %s\n", strerror(errno));
        return;
    }
    size_t recorded = 0;
    for (size_t i = 0; i < n; i++)
        recorded += xp_silent_rank(&procs[i]) == NULL;
    if (recorded == 0) {
        if (!quiet) {
            fprintf(stderr, "xferprof: no CUDA activity recorded\n");
            xp_report_silent_ranks(procs, n);
        }
        goto out;
    }
    if (getcwd(cwd, sizeof cwd))
        cwdlen = strlen(cwd);

    /* The top process's database is the last one its pid created: after an
     * exec the final program is the one whose status CMD's is. */
    size_t top = n;
    for (size_t i = 0; i < n; i++)
        if (procs[i].pid == (long)child && !xp_silent_rank(&procs[i]))
            top = i;

    for (size_t i = 0; i < n; i++) {
        xp_proc *p = &procs[i];
        char journal[PATH_MAX + sizeof XP_JOURNAL_SUFFIX];
        const char *shown = p->db;
        bool recovered = false;
        if (xp_silent_rank(p))
            continue;

        /* Shown relative to where the user ran xferprof, when it is below it. */
        if (cwdlen > 1 && strncmp(p->db, cwd, cwdlen) == 0 && p->db[cwdlen] == '/')
            shown = p->db + cwdlen + 1;
        /* A descendant that outlived CMD is still writing: its journal is
         * live, and it will finish its own database when it exits. */
        if (i != top && p->pid != (long)child && xp_process_running((pid_t)p->pid)) {
            if (!quiet)
                fprintf(stderr, "xferprof: pid %ld: %s: still running\n", p->pid, shown);
            continue;
        }
        snprintf(journal, sizeof journal, "%s%s", p->db, XP_JOURNAL_SUFFIX);
        if (access(journal, F_OK) == 0) {
            bool did = false;
            if (xp_recover(p->db, &did, err, sizeof err) != 0) {
                fprintf(stderr, "xferprof: pid %ld: %s: recovery failed: %s\n", p->pid, shown,
                        err);
                continue;
            }
            recovered = did;
        }
        if (access(p->db, F_OK) != 0) {
            fprintf(stderr, "xferprof: pid %ld: %s: the database is missing\n", p->pid, shown);
            continue;
        }
        if (i == top && xp_mark_exit(p->db, status, err, sizeof err) != 0)
            fprintf(stderr, "xferprof: pid %ld: %s: cannot record the exit status: %s\n", p->pid,
                    shown, err);
        if (!quiet)
            xp_summarize(p, shown, recovered);
    }
    if (!quiet)
        xp_report_silent_ranks(procs, n);
out:
    for (size_t i = 0; i < n; i++) {
        free(procs[i].db);
        free(procs[i].rank);
    }
    free(procs);
}


/* The manifest: created empty, named to every process through
 * XFERPROF_MANIFEST.  Returns its fd, or -1 after printing why. */
int xp_run_make_manifest(char *path, size_t len)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if ((size_t)snprintf(path, len, "%s/xferprof-manifest-XXXXXX", tmp) >= len) {
        fprintf(stderr, "xferprof: TMPDIR is too long\n");
        return -1;
    }
    /* O_CLOEXEC: CMD appends through its own open (O_APPEND), and must not
     * inherit an fd it does not know about. */
    int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0)
        fprintf(stderr, "xferprof: cannot create a temporary file in %s: %s\n", tmp,
                strerror(errno));
    return fd;
}
