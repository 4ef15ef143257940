/* xp_load.h: reading one run database into the report's model (struct xp_process). */
#ifndef XP_LOAD_H
#define XP_LOAD_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

#include "xp_report.h"

/* Reads the database at path into p (zeroed first): ingests a pending
 * journal (path.xpj) first, checks that the file is an xferprof database this
 * build reads, loads meta and every table, and symbolizes the stacks
 * (xp_symbols.c).  Returns 0, or -1 with a one-line reason in err (OUT):
 * "not an xferprof database", "database schema N is newer than this xferprof
 * (M)", "database is truncated or corrupt (...)", ...; p is then freed. */
int xp_load(const char *path, struct xp_process *p, char *err, size_t errlen);

/* Opens the database at path for reading, as every analyzer command does:
 * ingests a pending journal (path.xpj) first (*did (OUT) says whether there
 * was one), refuses a file that is not an xferprof database this build
 * reads, one whose header says it lost its end, or a corrupt schema, each
 * with a one-line reason in err (OUT).  Opened read-write when the file is
 * writable (*writable, OUT), else read-only.  Returns 0 with *db, or -1. */
int xp_load_open(const char *path, sqlite3 **db, bool *writable, bool *did, char *err,
                 size_t errlen);

/* xp_load on a database xp_load_open opened (writable and did as it said):
 * for a command that reads the database itself too (export).  With
 * writable false nothing is written into db (no symbols cache).  db stays
 * open. */
int xp_load_db(sqlite3 *db, const char *path, bool writable, bool did, struct xp_process *p,
               char *err, size_t errlen);

/* xp_load_blocks.c: block_rows (a database from before schema 3 has none)
 * into p->blocks, each block taken paired with its return, by time taken.
 * Returns SQLITE_OK, or SQLite's error (SQLITE_NOMEM out of memory). */
int xp_load_blocks(sqlite3 *db, struct xp_process *p);

/* Frees what xp_load put in p. */
void xp_process_free(struct xp_process *p);

/* Adds a note to p (printf-like).  Out of memory drops the note. */
void xp_process_note(struct xp_process *p, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The reason for a failed read (rc from sqlite3_step/prepare): damage to the
 * file (SQLITE_CORRUPT, SQLITE_NOTADB, SQLITE_IOERR) reads "database is
 * truncated or corrupt (<sqlite's message>)". */
void xp_load_db_error(sqlite3 *db, int rc, char *err, size_t errlen);

#endif
