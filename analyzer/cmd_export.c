/* cmd_export.c: `xferprof export DB [--format perfetto|perfetto-proto|csv] [-o FILE]`: options, opening
 * the database (recovering a pending journal first) and the output file. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xp_cli.h"
#include "xp_commands.h"
#include "xp_export.h"
#include "xp_gzout.h"
#include "xp_load.h"
#include "xp_output.h"
#include "xp_progress.h"
#include "xp_format.h"
#include "xp_ingest.h"
#include "xp_schema.h"

#define XP_EXPORT_SYNOPSIS "xferprof export DB [--format perfetto|perfetto-proto|csv] [-o FILE]"

static void xp_export_usage(FILE *f)
{
    fprintf(f, "Usage: " XP_EXPORT_SYNOPSIS "\n"
               "\n"
               "Writes a run database in another format:\n"
               "  perfetto  Chrome trace-event JSON (the default): open it in\n"
               "            https://ui.perfetto.dev or chrome://tracing. Copies, memsets and\n"
               "            syncs on their threads, async operations also on a track per\n"
               "            stream, failed calls, device and pinned memory in use, NVTX ranges.\n"
               "  perfetto-proto (or proto)  the same trace in Perfetto's protobuf format:\n"
               "            smaller and faster to write and to load for millions of copies.\n"
               "  csv       the copies view, one row per copy, with a header row.\n"
               "\n"
               "Options:\n"
               "  -f, --format FMT   perfetto, perfetto-proto (proto) or csv\n"
               "  -o, --output FILE  write to FILE (replaced only once complete); '-' or\n"
               "                     none: standard output; a FILE ending in .gz is gzipped\n"
               "\n"
               "A journal left by a process that died (DB" XP_JOURNAL_SUFFIX ") is recovered\n"
               "into DB first. docs/export.md describes the output.\n"
               "\n"
               "Exit status: 0, or 2 for bad usage or a database that cannot be read.\n");
}

static void xp_export_error(const char *msg)
{
    xp_cli_error_line("export", msg);
}

/* The database, opened as the report opens it (a pending journal holds the
 * end of the run: it is ingested first, so the export shows what the run
 * did, not what the background ingest had stored when the process died).
 * Returns the connection, or NULL after printing the one-line reason. */
static sqlite3 *xp_export_open(const char *path)
{
    char err[1024], line[1200];
    sqlite3 *db = NULL;
    bool writable, did;
    if (xp_load_open(path, &db, &writable, &did, err, sizeof err) != 0) {
        snprintf(line, sizeof line, "%s: %s", path, err);
        xp_export_error(line);
        return NULL;
    }
    return db;
}

int xp_command_export(int argc, char **argv)
{
    const char *db_path = NULL, *format = "perfetto", *output = NULL;
    static const struct option longopts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct xp_cli_options opts = {"export", "f:o:h", longopts, false};
    int c, state = 0;
    const char *operand;
    while ((c = xp_cli_next(&opts, argc, argv, &state, &operand)) != -1) {
        switch (c) {
        case 1:
            if (db_path != NULL)
                return xp_cli_usage_error("export", "more than one database given: '%s'", operand);
            db_path = operand;
            break;
        case 'f':
            format = optarg;
            break;
        case 'o':
            output = optarg;
            break;
        case 'h':
            xp_export_usage(stdout);
            return 0;
        default:
            return 2;
        }
    }
    for (; optind < argc; optind++) {   /* after "--" */
        if (db_path != NULL)
            return xp_cli_usage_error("export", "more than one database given: '%s'", argv[optind]);
        db_path = argv[optind];
    }
    bool proto = strcmp(format, "perfetto-proto") == 0 || strcmp(format, "proto") == 0;
    bool perfetto = proto || strcmp(format, "perfetto") == 0, csv = strcmp(format, "csv") == 0;
    if (!perfetto && !csv)
        return xp_cli_usage_error("export", "--format: '%s' is not perfetto, perfetto-proto or csv",
                                  format);
    if (db_path == NULL)
        return xp_cli_usage_error("export", "no database given (usage: " XP_EXPORT_SYNOPSIS ")");
    if (output != NULL && strcmp(output, "-") == 0)
        output = NULL;
    if (output != NULL && output[0] == '\0') {
        fprintf(stderr, "xferprof export: empty output path\n");
        return 2;
    }

    /* "export run.db -o run.db" would rename the trace over the run. */
    struct stat sd, so;
    if (output != NULL && stat(db_path, &sd) == 0 && stat(output, &so) == 0 &&
        sd.st_dev == so.st_dev && sd.st_ino == so.st_ino) {
        fprintf(stderr, "xferprof export: %s: is the database itself; choose another -o\n", output);
        return 2;
    }

    /* A trace streamed to the terminal the line would be written over
     * gets none. */
    if (output != NULL || !isatty(STDOUT_FILENO))
        xp_progress_start("export");
    xp_progress_stage("reading %s", db_path);
    sqlite3 *db = xp_export_open(db_path);
    if (db == NULL)
        return 2;

    /* A failed export leaves nothing half-written, and the old file (if any)
     * as it was (xp_output.h). */
    struct xp_output o;
    if (xp_output_open(&o, output) != 0) {
        fprintf(stderr, "xferprof export: %s: %s\n", output, strerror(errno));
        sqlite3_close(db);
        return 2;
    }
    FILE *out = o.f, *gz = NULL;
    if (xp_gz_wanted(output)) {
        if (!(out = gz = xp_gz_open(o.f))) {
            fprintf(stderr, "xferprof export: %s: %s\n", output, strerror(errno));
            xp_output_close(&o, false);
            sqlite3_close(db);
            return 2;
        }
    }
    static char buf[1 << 16];
    setvbuf(out, buf, _IOFBF, sizeof buf);

    char err[1024] = "", note[512] = "", sites_note[600] = "";
    /* The trace names each call's site as the report does.  Read-only:
     * an export leaves the database as it found it (no symbols cache). */
    struct xp_sites sites = {0};
    xp_progress_stage("symbolizing %s", db_path);
    int rc = perfetto ? xp_export_sites(db, db_path, false, &sites, sites_note, sizeof sites_note,
                                       err, sizeof err) : 0;
    xp_progress_stage("exporting %s", db_path);
    if (rc == 0)
        rc = perfetto ? xp_export_perfetto(db, &sites, proto, out, note, sizeof note, err, sizeof err)
                      : xp_export_csv(db, out, err, sizeof err);
    xp_export_sites_free(&sites);
    /* Closing the gzip stream writes its end (and what it still buffers). */
    if (gz && fclose(gz) != 0 && rc == 0) {
        snprintf(err, sizeof err, "%s: %s", output, strerror(errno ? errno : EIO));
        rc = -1;
    } else if (rc == 0 && !gz && (fflush(out) != 0 || ferror(out))) {
        snprintf(err, sizeof err, "%s: %s", output ? output : "standard output",
                 strerror(errno ? errno : EIO));
        rc = -1;
    } else if (rc != 0) {
        /* Reading failed part-way: the database is at fault. */
        char why[1024];
        snprintf(why, sizeof why, "%s: %s", db_path, err);
        snprintf(err, sizeof err, "%s", why);
    }
    if (note[0] || sites_note[0]) {
        char line[1400];
        snprintf(line, sizeof line, "%s: %s%s%s", db_path, note, note[0] && sites_note[0] ? "; " : "",
                 sites_note);
        xp_export_error(line);
    }
    sqlite3_close(db);

    if (xp_output_close(&o, rc == 0) != 0 && rc == 0) {
        snprintf(err, sizeof err, "%s: %s", output ? output : "standard output", strerror(errno));
        rc = -1;
    }
    xp_progress_clear();
    if (rc != 0) {
        xp_export_error(err);
        return 2;
    }
    return 0;
}
