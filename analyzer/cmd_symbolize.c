/* cmd_symbolize.c: `xferprof symbolize DB...`, naming every stack's frames in the database for SQL users (stack_frames). */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_cli.h"
#include "xp_commands.h"
#include "xp_frames.h"
#include "xp_journal.h"
#include "xp_load.h"

static void xp_symbolize_usage(FILE *f)
{
    fprintf(f, "Usage: xferprof symbolize DB...\n"
               "\n"
               "Names the frames of every call stack in DB (functions, files and lines from\n"
               "the recorded modules' debug information; Python functions and lines) and\n"
               "stores them as the report shows them, so that the stack_frames view joins\n"
               "copies, allocations and syncs to the code (docs/schema.md). A journal left\n"
               "by a process that died (DB" XP_JOURNAL_SUFFIX ") is recovered into DB first.\n"
               "`xferprof report` does the same on a database it can write.\n"
               "\n"
               "Exit status: 0, or 2 if any DB could not be read or written.\n");
}

/* "xferprof symbolize: DB: MSG" on one line; returns 2. */
static int xp_symbolize_error(const char *db, const char *msg)
{
    char line[1200];
    snprintf(line, sizeof line, "%s: %s", db, msg);
    xp_cli_error_line("symbolize", line);
    return 2;
}

/* One database: prints its line; returns 0 or 2. */
static int xp_symbolize_one(const char *path)
{
    char err[1024];
    sqlite3 *db = NULL;
    bool writable = false, did = false;
    if (xp_load_open(path, &db, &writable, &did, err, sizeof err) != 0)
        return xp_symbolize_error(path, err);
    if (!writable) {
        sqlite3_close(db);
        /* A snapshot of a run still going is read-only too: its frames are
         * stored once it has ended. */
        return xp_symbolize_error(path, "cannot write the database (read-only, or its run is "
                                        "still going)");
    }
    struct xp_process p = {0};
    size_t rows = 0, named = 0;
    int rc = xp_frames_resolve(db, true, &p, err, sizeof err) != 0 ||
                     xp_frames_store(db, &p, &rows, err, sizeof err) != 0
                 ? xp_symbolize_error(path, err)
                 : 0;
    sqlite3_close(db);
    if (rc == 0) {
        for (size_t i = 0; i < p.n_stacks; i++)
            for (uint32_t k = 0; k < p.stacks[i].nframes; k++)
                named += xp_frame_name(&p.stacks[i].frames[k]) != NULL;
        printf("%s: %zu stack%s, %zu frame%s, %zu named\n", path, p.n_stacks,
               p.n_stacks == 1 ? "" : "s", rows, rows == 1 ? "" : "s", named);
        for (size_t i = 0; i < p.n_notes; i++)
            printf("  note: %s\n", p.notes[i]);
    }
    xp_process_free(&p);
    return rc;
}

int xp_command_symbolize(int argc, char **argv)
{
    return xp_cli_each_db("symbolize", argc, argv, xp_symbolize_usage, xp_symbolize_one);
}
