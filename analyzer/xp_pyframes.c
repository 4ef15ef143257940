/* xp_pyframes.c: recorded Python frames named and spliced into the symbolized native stacks.
 *
 * A stack row holds the native return addresses and, for a thread running
 * CPython, its Python frames innermost first: (code key, instruction
 * offset, entry flag).  A frame with the entry flag is the first one a C call
 * of the eval loop ran, so the Python frames from just after one entry frame
 * up to and including the next make up the work of one native
 * _PyEval_EvalFrameDefault frame: walking the native frames innermost first,
 * each eval-loop frame is replaced by the next such group.  Groups left over
 * (the native stack was cut at its depth) go after the last native frame,
 * still in order. */
#include "xp_pyframes.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_ingest_py.h"
#include "xp_load.h"
#include "xp_pylines.h"

struct xp_pycode {
    int64_t key;
    char *file, *name;
    const char *base;          /* basename of file */
    int first_line, format;    /* format -1: no line table */
    uint8_t *table;
    size_t len;
};

/* What p->pyframes owns. */
struct xp_pyowned {
    struct xp_pycode *codes;
    size_t n_codes;
    char **interp;             /* module paths the eval loop was seen in */
    size_t n_interp;
};

static int xp_pycode_cmp(const void *a, const void *b)
{
    const struct xp_pycode *x = a, *y = b;
    return x->key < y->key ? -1 : x->key > y->key;
}

static const struct xp_pycode *xp_pycode_find(const struct xp_pyowned *o, int64_t key)
{
    struct xp_pycode probe = {.key = key};
    return o->n_codes ? bsearch(&probe, o->codes, o->n_codes, sizeof probe, xp_pycode_cmp) : NULL;
}

static int xp_py_fail(sqlite3 *db, int rc, char *err, size_t errlen)
{
    xp_load_db_error(db, rc, err, errlen);
    return -1;
}

static int xp_py_codes(sqlite3 *db, struct xp_pyowned *o, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT key, file, name, first_line, line_table, line_format "
                                    "FROM py_code ORDER BY key", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return (sqlite3_errcode(db) & 0xff) == SQLITE_ERROR ? 0 : xp_py_fail(db, rc, err, errlen);
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *file = (const char *)sqlite3_column_text(st, 1);
        const char *name = (const char *)sqlite3_column_text(st, 2);
        if (!file || !name)
            continue;
        if (xp_grow(&o->codes, &cap, o->n_codes + 1, sizeof *o->codes) != 0)
            goto oom;
        struct xp_pycode *c = &o->codes[o->n_codes];
        size_t len = (size_t)sqlite3_column_bytes(st, 4);
        const void *blob = sqlite3_column_blob(st, 4);
        *c = (struct xp_pycode){.key = sqlite3_column_int64(st, 0), .file = strdup(file),
                                .name = strdup(name), .first_line = sqlite3_column_int(st, 3),
                                .format = sqlite3_column_type(st, 5) == SQLITE_NULL
                                              ? -1 : sqlite3_column_int(st, 5),
                                .len = len};
        if (blob && len && (c->table = malloc(len)) != NULL)
            memcpy(c->table, blob, len);
        if (!c->file || !c->name || (blob && len && !c->table)) {
            free(c->file), free(c->name), free(c->table);
            goto oom;
        }
        const char *slash = strrchr(c->file, '/');
        c->base = slash ? slash + 1 : c->file;
        o->n_codes++;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : xp_py_fail(db, rc, err, errlen);
oom:
    sqlite3_finalize(st);
    snprintf(err, errlen, "out of memory");
    return -1;
}

static bool xp_is_eval(const struct xp_frame *f)
{
    return f->function && strcmp(f->function, "_PyEval_EvalFrameDefault") == 0;
}

static bool xp_prefix(const char *s, const char *prefix)
{
    return s && strncmp(s, prefix, strlen(prefix)) == 0;
}

/* The interpreter's own native frames: its module (where the eval loop ran),
 * and the foreign-call glue between a Python call and C (ctypes, libffi). */
static bool xp_is_interp(const struct xp_pyowned *o, const struct xp_frame *f)
{
    if (xp_prefix(f->module, "_ctypes") || xp_prefix(f->module, "libffi") ||
        xp_prefix(f->module, "libpython3"))
        return true;
    for (size_t i = 0; f->module_path && i < o->n_interp; i++)
        if (strcmp(o->interp[i], f->module_path) == 0)
            return true;
    return false;
}

/* Frames of the frameworks between Python and CUDA: not where the user's
 * code is, so not a site's top frame. */
static bool xp_is_library(const struct xp_frame *f)
{
    return xp_prefix(f->module, "libtorch") || xp_prefix(f->module, "libc10") ||
           (f->module_path && (strstr(f->module_path, "/torch/") != NULL ||
                               strstr(f->module_path, "/site-packages/nvidia/") != NULL));
}

static int xp_note_interp(struct xp_pyowned *o, const char *path)
{
    for (size_t i = 0; i < o->n_interp; i++)
        if (strcmp(o->interp[i], path) == 0)
            return 0;
    char **grown = realloc(o->interp, (o->n_interp + 1) * sizeof *grown);
    if (!grown)
        return -1;
    o->interp = grown;
    if (!(o->interp[o->n_interp] = strdup(path)))
        return -1;
    o->n_interp++;
    return 0;
}

/* A Python frame of the blob at i as the model's frame. */
static struct xp_frame xp_py_frame(const struct xp_pyowned *o, const uint8_t *b)
{
    uint64_t key = 0;
    uint32_t off = 0;
    for (int k = 7; k >= 0; k--)
        key = key << 8 | b[k];
    for (int k = 3; k >= 0; k--)
        off = off << 8 | b[8 + k];
    const struct xp_pycode *c = xp_pycode_find(o, (int64_t)key);
    struct xp_frame f = {.python = true, .offset = off};
    if (!c) {
        f.module = "python";  /* its code object's record was lost */
        return f;
    }
    f.module = c->base;
    f.module_path = c->file;
    f.function = c->name;
    f.file = c->file;
    f.line = c->format < 0 ? 0 : xp_py_line(c->format, c->table, c->len, c->first_line,
                                            (int32_t)off);
    return f;
}

/* Splices n Python frames (blob) into s. */
static int xp_py_splice(const struct xp_pyowned *o, struct xp_stack *s, const uint8_t *blob,
                        size_t n)
{
    struct xp_frame *out = calloc(s->nframes + n, sizeof *out);
    if (!out)
        return -1;
    size_t k = 0, next = 0;   /* next: the first Python frame not placed yet */
    for (uint32_t i = 0; i < s->nframes; i++) {
        const struct xp_frame *f = &s->frames[i];
        if (xp_is_eval(f)) {
            /* This C call's frames: up to and including the next entry frame. */
            while (next < n) {
                const uint8_t *b = blob + next * XP_PYFRAME_BLOB;
                out[k++] = xp_py_frame(o, b);
                next++;
                if (b[12] & XP_PYFRAME_ENTRY)
                    break;
            }
        } else if (!xp_is_interp(o, f)) {
            out[k] = *f;
            out[k++].library = xp_is_library(f);
        }
    }
    for (; next < n; next++)
        out[k++] = xp_py_frame(o, blob + next * XP_PYFRAME_BLOB);
    /* Outside the outermost Python frame: how the process or thread started
     * (libc, the python executable's _start), which says nothing. */
    size_t last = k;
    while (last > 0 && !out[last - 1].python)
        last--;
    if (last > 0) {
        size_t kept = last;
        for (size_t i = last; i < k; i++)
            if (!xp_prefix(out[i].module, "libc.so") && !xp_prefix(out[i].module, "python"))
                out[kept++] = out[i];
        k = kept;
    }
    free(s->frames);
    s->frames = out;
    s->nframes = (uint32_t)k;
    s->top = 0;
    while (s->top < s->nframes && s->frames[s->top].library)
        s->top++;
    if (s->top == s->nframes)
        s->top = 0;           /* nothing but libraries: the innermost names it */
    return 0;
}

static int xp_str0cmp(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) : (a != NULL) - (b != NULL);
}

/* Frames as the report shows them: Python frames by name and line (two
 * instructions of one line are one place), native ones by address. */
static int xp_shown_cmp(const struct xp_frame *a, const struct xp_frame *b)
{
    int c;
    if (a->python != b->python)
        return a->python ? 1 : -1;
    if (!a->python)
        return (a->addr > b->addr) - (a->addr < b->addr);
    if ((c = xp_str0cmp(a->file, b->file)) != 0 || (c = xp_str0cmp(a->function, b->function)) != 0)
        return c;
    return (a->line > b->line) - (a->line < b->line);
}

static int xp_stack_shown_cmp(const void *x, const void *y)
{
    const struct xp_stack *a = *(const struct xp_stack *const *)x;
    const struct xp_stack *b = *(const struct xp_stack *const *)y;
    for (uint32_t i = 0; i < a->nframes && i < b->nframes; i++) {
        int c = xp_shown_cmp(&a->frames[i], &b->frames[i]);
        if (c)
            return c;
    }
    if (a->nframes != b->nframes)
        return a->nframes < b->nframes ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static uint32_t xp_remap(const uint32_t *to, uint32_t max, uint32_t id)
{
    return id <= max && to[id] ? to[id] : id;
}

/* Stacks that differ only in the interpreter's frames (a call specialized
 * after its first run takes another C path) show the same frames once
 * merged: every row of p is pointed at the first of them, so the report has
 * one call site where the user sees one place.  merged: the stacks spliced. */
static int xp_py_unify(struct xp_process *p, struct xp_stack **merged, size_t n)
{
    if (n < 2)
        return 0;
    xp_sort(merged, n, sizeof *merged, xp_stack_shown_cmp);
    uint32_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (merged[i]->id > max)
            max = merged[i]->id;
    uint32_t *to = calloc((size_t)max + 1, sizeof *to);
    if (!to)
        return -1;
    size_t same = 0;
    bool any = false;
    for (size_t i = 1; i < n; i++) {
        struct xp_stack *a = merged[same], *b = merged[i];
        bool eq = a->nframes == b->nframes;
        for (uint32_t k = 0; eq && k < a->nframes; k++)
            eq = xp_shown_cmp(&a->frames[k], &b->frames[k]) == 0;
        if (eq) {
            to[b->id] = a->id;   /* sorted by id within equals: a is the first */
            any = true;
        } else {
            same = i;
        }
    }
    /* The copies' stacks are their call sites'. */
    for (size_t i = 0; any && i < p->n_call_sites; i++)
        p->call_sites[i].stack_id = xp_remap(to, max, p->call_sites[i].stack_id);
    for (size_t i = 0; any && i < p->n_allocs; i++) {
        p->allocs[i].alloc_stack = xp_remap(to, max, p->allocs[i].alloc_stack);
        p->allocs[i].free_stack = xp_remap(to, max, p->allocs[i].free_stack);
    }
    for (size_t i = 0; any && i < p->n_syncs; i++)
        p->syncs[i].stack_id = xp_remap(to, max, p->syncs[i].stack_id);
    for (size_t i = 0; any && i < p->n_errors; i++)
        p->errors[i].stack_id = xp_remap(to, max, p->errors[i].stack_id);
    for (size_t i = 0; any && i < p->n_unknown_frees; i++)
        p->unknown_frees[i].stack_id = xp_remap(to, max, p->unknown_frees[i].stack_id);
    free(to);
    return 0;
}

int xp_pyframes_merge(sqlite3 *db, struct xp_process *p, char *err, size_t errlen)
{
    struct xp_pyowned *o = calloc(1, sizeof *o);
    if (!o) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    p->pyframes = o;
    if (xp_py_codes(db, o, err, errlen) != 0)
        return -1;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT id, pyframes FROM stacks WHERE pyframes IS NOT NULL",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)   /* a database from before Python frames */
        return (sqlite3_errcode(db) & 0xff) == SQLITE_ERROR ? 0 : xp_py_fail(db, rc, err, errlen);
    /* The interpreter's modules first: every stack's eval-loop frames. */
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const struct xp_stack *s = xp_process_stack(p, (uint32_t)sqlite3_column_int64(st, 0));
        for (uint32_t i = 0; s && i < s->nframes; i++)
            if (xp_is_eval(&s->frames[i]) && s->frames[i].module_path &&
                xp_note_interp(o, s->frames[i].module_path) != 0)
                goto oom;
    }
    sqlite3_reset(st);
    struct xp_stack **merged = NULL;
    size_t n_merged = 0, cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const uint8_t *blob = sqlite3_column_blob(st, 1);
        size_t n = (size_t)sqlite3_column_bytes(st, 1) / XP_PYFRAME_BLOB;
        struct xp_stack *s = id > 0 && id <= UINT32_MAX
                                 ? (struct xp_stack *)xp_process_stack(p, (uint32_t)id) : NULL;
        if (!s || !n)
            continue;
        if (xp_grow(&merged, &cap, n_merged + 1, sizeof *merged) != 0 ||
            xp_py_splice(o, s, blob, n) != 0) {
            free(merged);
            goto oom;
        }
        merged[n_merged++] = s;
    }
    sqlite3_finalize(st);
    st = NULL;
    int unified = rc == SQLITE_DONE ? xp_py_unify(p, merged, n_merged) : 0;
    free(merged);
    if (unified != 0)
        goto oom;
    for (size_t i = 0; i < o->n_codes; i++) {
        free(o->codes[i].table);  /* lines are in the frames now */
        o->codes[i].table = NULL;
    }
    return rc == SQLITE_DONE ? 0 : xp_py_fail(db, rc, err, errlen);
oom:
    sqlite3_finalize(st);
    snprintf(err, errlen, "out of memory");
    return -1;
}

void xp_pyframes_free(struct xp_process *p)
{
    struct xp_pyowned *o = p->pyframes;
    if (!o)
        return;
    for (size_t i = 0; i < o->n_codes; i++) {
        free(o->codes[i].file);
        free(o->codes[i].name);
        free(o->codes[i].table);
    }
    for (size_t i = 0; i < o->n_interp; i++)
        free(o->interp[i]);
    free(o->codes);
    free(o->interp);
    free(o);
    p->pyframes = NULL;
}
