/* xp_schema.h: the run database's schema (one definition, documented in
 * docs/schema.md), shared by the writer (ingest) and the readers (analyzer). */
#ifndef XP_SCHEMA_H
#define XP_SCHEMA_H

#include <stddef.h>

#include <sqlite3.h>

/* meta.schema_version of the databases this build writes.  Tables only grow
 * within a version; renaming or removing anything takes a bump and a
 * migration in the analyzer. */
#define XP_SCHEMA_VERSION 3   /* 2: graph_nodes; copies and memsets grew graph_node, launch_stack_id
                                 3: block_events and blocks (PyTorch's caching allocator) */

/* meta.xferprof_version written at creation. */
#define XP_VERSION_STRING "0.1.0"

/* PRAGMA application_id of every xferprof database ("XPRF"): what tells one
 * of ours from any other SQLite file before a table is read. */
#define XP_APPLICATION_ID 0x58505246

/* The schema as SQL: tables, indexes and views, without the rows that
 * xp_schema_create adds (meta defaults, api names). */
extern const char xp_schema_sql[];

/* The stack_frame_rows table, the stack_frames view and the index they use,
 * each "IF NOT EXISTS": part of xp_schema_sql, and what the analyzer adds to a
 * database made before them when it stores frames. */
extern const char xp_schema_frames_sql[];

/* Creates the schema in an empty database and fills meta (schema_version,
 * xferprof_version, records_lost = '0') and the api names, in one
 * transaction.  Returns 0, or -1 with sqlite's message in err (OUT). */
int xp_schema_create(sqlite3 *db, char *err, size_t errlen);

/* Checks that db is an xferprof database this build can read.  Returns 0
 * (and the version in *version (OUT), if not NULL), 1 if the database is
 * empty (no schema objects at all: a new file), or -1 with a one-line reason
 * in err (OUT): "not an xferprof database", "database schema N is newer than
 * this xferprof (1)", or sqlite's own message for a corrupt file ("file is
 * not a database", "database disk image is malformed"). */
int xp_schema_check(sqlite3 *db, int *version, char *err, size_t errlen);

/* Whether db has a table or view named `name` (an older schema lacks some).
 * Returns SQLITE_OK with the answer in *has (OUT), or SQLite's error code
 * (a reader that cannot tell should say why, not guess). */
int xp_schema_has(sqlite3 *db, const char *name, int *has);

/* Adds the names of api ids this build knows that db lacks (a database made
 * by an older build, recovered by a newer one).  Returns 0 or -1 with err
 * (OUT) set. */
int xp_schema_add_apis(sqlite3 *db, char *err, size_t errlen);

/* How a writer opens the database: without SQLite's per-connection mutex
 * (a connection is used by one thread at a time; with it every bind and
 * step takes a lock), and never through a symbolic link planted where the
 * database goes (SQLite opens its -wal and -shm that way too).  Shared with
 * bench/bench_sqlite_floor.c, whose floor is only fair with the same flags. */
#define XP_DB_WRITE_FLAGS                                                                       \
    (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW)

/* Opens or creates a database for writing (ingest): creates the file and
 * the schema if missing or empty, refuses anything xp_schema_check refuses.
 * Returns 0 with the connection in *out (OUT), or -1 with "PATH: reason" in
 * err (OUT) and *out NULL. */
int xp_db_open_write(const char *path, sqlite3 **out, char *err, size_t errlen);

#endif
