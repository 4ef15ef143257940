/* xp_frames.c: the report's frames of every stack, named and stored in the database (stack_frames).
 *
 * SQL users join copies to their code through the stack_frames view
 * (docs/schema.md).  Its names cannot be computed in SQL (libdw, CPython's
 * line tables, the splicing of Python frames into the interpreter's native
 * ones), so the frames the report builds are stored as rows: one per frame,
 * each inline function and each Python frame its own level, exactly as the
 * report lists them, each distinct frame stored once (stack_frame_names)
 * and each stack a list of them (stack_frame_rows).  The rows are replaced
 * as a whole, and only when they would change: a hash of what they hold is
 * kept in meta, so a second report of the same run writes nothing. */
#include "xp_frames.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The state on the stack (its layout is public only to static linking). */
#define XXH_STATIC_LINKING_ONLY
#include <xxhash.h>

#include "xp_load.h"
#include "xp_pyframes.h"
#include "xp_schema.h"
#include "xp_symbols.h"

/* stack_frame_rows.kind, named by the view. */
enum { XP_FRAME_NATIVE = 1, XP_FRAME_INLINED = 2, XP_FRAME_PYTHON = 3 };

int xp_frames_resolve(sqlite3 *db, bool writable, struct xp_process *p, char *err,
                      size_t errlen)
{
    return xp_symbols_resolve(db, writable, p, err, errlen) != 0 ||
                   xp_pyframes_merge(db, p, err, errlen) != 0
               ? -1
               : 0;
}

/* One frame as the view says it; id: its stack_frame_names row. */
struct xp_frame_row {
    int64_t offset;
    int kind, line;
    const char *module, *function, *file;
    uint32_t id;
};

static struct xp_frame_row xp_frame_row_of(const struct xp_frame *f)
{
    struct xp_frame_row r = {.function = xp_frame_name(f), .file = f->file, .line = f->line};
    if (f->python) {
        /* The .py file, or "python" when its code object's record was lost;
         * the offset is the instruction's, signed (-1: not started yet). */
        r.kind = XP_FRAME_PYTHON;
        r.module = f->module_path ? f->module_path : f->module;
        r.offset = (int32_t)(uint32_t)f->offset;
    } else {
        r.kind = f->inlined ? XP_FRAME_INLINED : XP_FRAME_NATIVE;
        r.module = f->module ? f->module_path : NULL;
        /* Outside every recorded module the address is all there is. */
        r.offset = (int64_t)(f->module ? f->offset : f->addr);
    }
    return r;
}

static int xp_str0cmp(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

static int xp_frame_row_cmp(const void *x, const void *y)
{
    const struct xp_frame_row *a = *(const struct xp_frame_row *const *)x;
    const struct xp_frame_row *b = *(const struct xp_frame_row *const *)y;
    int c;
    if (a->kind != b->kind)
        return a->kind < b->kind ? -1 : 1;
    if (a->offset != b->offset)
        return a->offset < b->offset ? -1 : 1;
    if (a->line != b->line)
        return a->line < b->line ? -1 : 1;
    if ((c = xp_str0cmp(a->module, b->module)) != 0 ||
        (c = xp_str0cmp(a->function, b->function)) != 0)
        return c;
    return xp_str0cmp(a->file, b->file);
}

/* Every frame of p in stack and level order, each with the id of the first
 * equal one (1, 2, ...), so that each distinct frame is stored once. */
struct xp_frame_table {
    struct xp_frame_row *rows;
    size_t n;
    int64_t upto;           /* the last stack id */
    uint32_t deepest;       /* the most frames of a stack */
};

static int xp_frame_table_make(const struct xp_process *p, struct xp_frame_table *t)
{
    *t = (struct xp_frame_table){0};
    for (size_t i = 0; i < p->n_stacks; i++) {
        t->n += p->stacks[i].nframes;
        if (p->stacks[i].nframes > t->deepest)
            t->deepest = p->stacks[i].nframes;
        if (p->stacks[i].id > t->upto)
            t->upto = p->stacks[i].id;
    }
    struct xp_frame_row **by = t->n ? malloc(t->n * sizeof *by) : NULL;
    t->rows = t->n ? malloc(t->n * sizeof *t->rows) : NULL;
    if (t->n && (!by || !t->rows)) {
        free(by);
        free(t->rows);
        return -1;
    }
    size_t k = 0;
    for (size_t i = 0; i < p->n_stacks; i++)
        for (uint32_t l = 0; l < p->stacks[i].nframes; l++, k++) {
            t->rows[k] = xp_frame_row_of(&p->stacks[i].frames[l]);
            by[k] = &t->rows[k];
        }
    xp_sort(by, t->n, sizeof *by, xp_frame_row_cmp);
    uint32_t id = 0;
    for (size_t i = 0; i < t->n; i++)
        by[i]->id = i > 0 && xp_frame_row_cmp(&by[i - 1], &by[i]) == 0 ? by[i - 1]->id : ++id;
    free(by);
    return 0;
}

static void xp_hash_int(XXH3_state_t *h, int64_t v)
{
    XXH3_64bits_update(h, &v, sizeof v);
}

/* A string and where it ends; NULL differs from "". */
static void xp_hash_str(XXH3_state_t *h, const char *s)
{
    xp_hash_int(h, s ? (int64_t)strlen(s) : -1);
    if (s)
        XXH3_64bits_update(h, s, strlen(s));
}

/* What the rows of p would hold, in meta's text. */
static void xp_frames_hash(const struct xp_process *p, const struct xp_frame_table *t,
                           char *out, size_t n)
{
    XXH3_state_t h;
    XXH3_64bits_reset(&h);
    const struct xp_frame_row *r = t->rows;
    for (size_t i = 0; i < p->n_stacks; i++) {
        const struct xp_stack *s = &p->stacks[i];
        for (uint32_t k = 0; k < s->nframes; k++, r++) {
            xp_hash_int(&h, s->id);
            xp_hash_int(&h, k);
            xp_hash_int(&h, k == s->top);
            xp_hash_int(&h, r->kind);
            xp_hash_int(&h, r->offset);
            xp_hash_int(&h, r->line);
            xp_hash_str(&h, r->module);
            xp_hash_str(&h, r->function);
            xp_hash_str(&h, r->file);
        }
    }
    xp_hash_int(&h, t->upto);
    snprintf(out, n, "%016llx", (unsigned long long)XXH3_64bits_digest(&h));
}

/* Whether db holds rows with this hash already (and the view they are in). */
static bool xp_frames_current(sqlite3 *db, const char *hash)
{
    sqlite3_stmt *st = NULL;
    bool same = sqlite3_prepare_v2(db,
                                   "SELECT value FROM meta WHERE key = 'stack_frames_hash' AND "
                                   "value = ?1 AND EXISTS (SELECT 1 FROM sqlite_schema WHERE "
                                   "type = 'view' AND name = 'stack_frames')",
                                   -1, &st, NULL) == SQLITE_OK &&
                sqlite3_bind_text(st, 1, hash, -1, SQLITE_STATIC) == SQLITE_OK &&
                sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return same;
}

static int xp_frames_insert(sqlite3 *db, const struct xp_process *p,
                            const struct xp_frame_table *t, const char *hash)
{
    sqlite3_stmt *name = NULL, *row = NULL, *meta = NULL;
    /* Replaced as a whole, view included: rows of another analyzer's shape
     * (an older or newer build) go with the view that read them. */
    int rc = sqlite3_exec(db, "DROP VIEW IF EXISTS stack_frames; "
                              "DROP TABLE IF EXISTS stack_frame_rows; "
                              "DROP TABLE IF EXISTS stack_frame_names",
                          NULL, NULL, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, xp_schema_frames_sql, NULL, NULL, NULL);
    /* The view numbers a stack's frames with stack_levels: it holds the
     * levels of the deepest raw stack, and now of the deepest named one
     * (inline functions and Python frames make it deeper). */
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO stack_levels(level) "
                                    "WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 "
                                    "FROM n WHERE x + 1 < ?1) SELECT x FROM n",
                                -1, &name, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(name, 1, t->deepest);
        rc = sqlite3_step(name) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
        sqlite3_finalize(name);
        name = NULL;
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO stack_frame_names(id, kind, module, "
                                    "offset, function, file, line) "
                                    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                -1, &name, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO stack_frame_rows(stack_id, level, frame, "
                                    "top_frame) VALUES (?1, ?2, ?3, ?4)",
                                -1, &row, NULL);
    const struct xp_frame_row *r = t->rows;
    for (size_t i = 0; rc == SQLITE_OK && i < p->n_stacks; i++) {
        const struct xp_stack *s = &p->stacks[i];
        for (uint32_t k = 0; rc == SQLITE_OK && k < s->nframes; k++, r++) {
            /* Each distinct frame's row comes with its first use (OR IGNORE
             * skips the others). */
            sqlite3_bind_int64(name, 1, r->id);
            sqlite3_bind_int(name, 2, r->kind);
            sqlite3_bind_text(name, 3, r->module, -1, SQLITE_STATIC);
            sqlite3_bind_int64(name, 4, r->offset);
            sqlite3_bind_text(name, 5, r->function, -1, SQLITE_STATIC);
            sqlite3_bind_text(name, 6, r->file, -1, SQLITE_STATIC);
            if (r->line > 0)
                sqlite3_bind_int(name, 7, r->line);
            else
                sqlite3_bind_null(name, 7);
            sqlite3_bind_int64(row, 1, s->id);
            sqlite3_bind_int64(row, 2, k);
            sqlite3_bind_int64(row, 3, r->id);
            sqlite3_bind_int(row, 4, k == s->top);
            rc = sqlite3_step(name);
            if (rc == SQLITE_DONE)
                rc = sqlite3_step(row);
            rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
            sqlite3_reset(name);
            sqlite3_reset(row);
        }
    }
    sqlite3_finalize(name);
    sqlite3_finalize(row);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO meta(key, value) VALUES "
                                    "('stack_frames_upto', ?1), ('stack_frames_hash', ?2)",
                                -1, &meta, NULL);
    if (rc == SQLITE_OK) {
        char text[32];
        snprintf(text, sizeof text, "%lld", (long long)t->upto);
        sqlite3_bind_text(meta, 1, text, -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(meta, 2, hash, -1, SQLITE_STATIC);
        rc = sqlite3_step(meta) == SQLITE_DONE ? SQLITE_OK : sqlite3_errcode(db);
    }
    sqlite3_finalize(meta);
    return rc;
}

int xp_frames_store(sqlite3 *db, const struct xp_process *p, size_t *rows, char *err,
                    size_t errlen)
{
    struct xp_frame_table t;
    if (xp_frame_table_make(p, &t) != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (rows)
        *rows = t.n;
    char hash[32];
    xp_frames_hash(p, &t, hash, sizeof hash);
    int rc = SQLITE_OK;
    if (!xp_frames_current(db, hash)) {
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
        if (rc == SQLITE_OK)
            rc = xp_frames_insert(db, p, &t, hash);
        if (rc == SQLITE_OK)
            rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
        if (rc != SQLITE_OK) {
            snprintf(err, errlen, "cannot store the frames (%s)", sqlite3_errmsg(db));
            sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        }
    }
    free(t.rows);
    return rc == SQLITE_OK ? 0 : -1;
}
