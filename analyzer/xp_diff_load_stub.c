/* xp_diff_load_stub.c: a minimal database reader for `xferprof diff`.
 *
 * MERGE: STAND-IN, TO BE REPLACED by the report's loader (xp_load.c), its
 * symbolizer (xp_symbols.c) and rules (analyzer/rules/).  What it does not
 * do: no symbols (every frame is module + offset, function/file/line
 * unknown), no findings (no rules run), no nvtx ranges, no syncs, memsets or
 * unknown frees.  Enough for diff's scenario tests, which mark what needs
 * symbols or rules (tests/diff/diff_common.py, NEEDS_SYMBOLS/NEEDS_RULES). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "xp_diff_load.h"
#include "xp_schema.h"

/* From src/xp_ingest.h and src/xp_format.h, which cannot be included next to
 * xp_report.h (both define enum xp_blocking and the XP_DIR_ codes). */
int xp_recover(const char *db_path, bool *did, char *err, size_t errlen);
#define XP_DIFF_JOURNAL_SUFFIX ".xpj"

struct xp_module_row {
    char *path;
    const char *base_name;
    uint64_t base, low, size;
};

static char *xp_strdup0(const char *s)
{
    return s ? strdup(s) : NULL;
}

static const char *xp_col_text(sqlite3_stmt *st, int i)
{
    return (const char *)sqlite3_column_text(st, i);
}

static bool xp_internal_module(const char *base)
{
    /* The runtime, the driver and the profiler itself: frames a user cannot
     * change, left out of call sites (report contract). */
    return base && (strncmp(base, "libcudart", 9) == 0 || strncmp(base, "libcuda", 7) == 0 ||
                    strncmp(base, "libxferprof", 11) == 0);
}

/* The index of the api name in p, added when new; -1 out of memory. */
static int64_t xp_api_index(struct xp_process *p, const char *name)
{
    if (!name)
        name = "unknown";
    for (size_t i = 0; i < p->n_api; i++)
        if (strcmp(p->api_names[i], name) == 0)
            return (int64_t)i;
    char **grown = realloc(p->api_names, (p->n_api + 1) * sizeof *grown);
    if (!grown)
        return -1;
    p->api_names = grown;
    if (!(p->api_names[p->n_api] = strdup(name)))
        return -1;
    return (int64_t)p->n_api++;
}

static uint8_t xp_code(const char *s, const char *const *names, uint8_t n)
{
    for (uint8_t i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return 0;
}

static uint8_t xp_dir_code(const char *s)
{
    static const char *const n[] = {"unknown", "H2D", "D2H", "D2D", "H2H"};
    return xp_code(s, n, 5);
}

static uint8_t xp_hm_code(const char *s)
{
    static const char *const n[] = {"none", "pageable", "pinned", "managed"};
    return xp_code(s, n, 4);
}

static uint8_t xp_bl_code(const char *s)
{
    static const char *const n[] = {"unknown", "sync", "async", "async_pageable"};
    return xp_code(s, n, 4);
}

static uint8_t xp_ak_code(const char *s)
{
    static const char *const n[] = {"other", "device", "pinned", "registered",
                                    "managed", "reserved", "physical", "mapped"};
    return xp_code(s, n, 8);
}

/* Grows *arr (of element size sz) to hold one more than *n; NULL on OOM. */
static void *xp_grow(void *arr_ptr, size_t *cap, size_t n, size_t sz)
{
    void **arr = arr_ptr;
    if (n < *cap)
        return *arr;
    size_t c = *cap ? *cap * 2 : 64;
    void *g = realloc(*arr, c * sz);
    if (!g)
        return NULL;
    *arr = g;
    *cap = c;
    return g;
}

static int xp_load_meta(sqlite3 *db, struct xp_process *p)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT key, value FROM meta", -1, &st, NULL) != SQLITE_OK)
        return -1;
    p->rank = -1;
    p->exit_status = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *k = xp_col_text(st, 0), *v = xp_col_text(st, 1);
        if (!k || !v)
            continue;
        if (strcmp(k, "pid") == 0)
            p->pid = strtoll(v, NULL, 10);
        else if (strcmp(k, "ppid") == 0)
            p->ppid = strtoll(v, NULL, 10);
        else if (strcmp(k, "rank") == 0)
            p->rank = strtoll(v, NULL, 10);
        else if (strcmp(k, "exit_status") == 0)
            p->exit_status = strtoll(v, NULL, 10);
        else if (strcmp(k, "records_lost") == 0)
            p->records_lost = strtoll(v, NULL, 10);
        else if (strcmp(k, "start_mono_ns") == 0)
            p->start_mono_ns = strtoll(v, NULL, 10);
        else if (strcmp(k, "recovered") == 0)
            p->recovered = strcmp(v, "1") == 0;
        else if (strcmp(k, "stack_depth") == 0)
            p->stacks_off = strcmp(v, "0") == 0;
        else if (strcmp(k, "hostname") == 0 && !p->hostname)
            p->hostname = strdup(v);
        else if (strcmp(k, "cmdline") == 0 && !p->cmdline)
            p->cmdline = strdup(v);
    }
    if (sqlite3_finalize(st) != SQLITE_OK)
        return -1;
    char label[96];
    if (p->rank >= 0)
        snprintf(label, sizeof label, "rank %" PRId64 " (pid %" PRId64 ")", p->rank, p->pid);
    else
        snprintf(label, sizeof label, "pid %" PRId64, p->pid);
    p->label = strdup(label);
    return p->label ? 0 : -1;
}

static int xp_load_copies(sqlite3 *db, struct xp_process *p)
{
    static const char sql[] =
        "SELECT api, direction, host_mem, blocking, bytes, src, dst, start_ns, dur_ns, status,"
        " stack_id, stream, device, tid, fingerprint, fingerprint_kind, kernel_seq, layer"
        " FROM copies ORDER BY id";
    sqlite3_stmt *st;
    size_t cap = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!xp_grow(&p->copies, &cap, p->n_copies, sizeof *p->copies))
            break;
        int64_t api = xp_api_index(p, xp_col_text(st, 0));
        if (api < 0)
            break;
        const char *fpk = xp_col_text(st, 15), *layer = xp_col_text(st, 17);
        p->copies[p->n_copies++] = (struct xp_copy){
            .api = (uint32_t)api, .direction = xp_dir_code(xp_col_text(st, 1)),
            .host_mem = xp_hm_code(xp_col_text(st, 2)), .blocking = xp_bl_code(xp_col_text(st, 3)),
            .bytes = (uint64_t)sqlite3_column_int64(st, 4), .src = (uint64_t)sqlite3_column_int64(st, 5),
            .dst = (uint64_t)sqlite3_column_int64(st, 6), .start_ns = sqlite3_column_int64(st, 7),
            .dur_ns = sqlite3_column_int64(st, 8), .status = sqlite3_column_int(st, 9),
            .stack_id = (uint32_t)sqlite3_column_int64(st, 10),
            .stream = (uint64_t)sqlite3_column_int64(st, 11), .device = sqlite3_column_int(st, 12),
            .tid = sqlite3_column_int(st, 13), .fingerprint = (uint64_t)sqlite3_column_int64(st, 14),
            .fp_kind = !fpk ? 0 : strcmp(fpk, "full") == 0 ? 1 : 2,
            .kernel_seq = (uint64_t)sqlite3_column_int64(st, 16),
            .nvtx_range = XP_NONE_ID, .driver = layer && strcmp(layer, "driver") == 0};
    }
    return sqlite3_finalize(st) == SQLITE_OK && rc == SQLITE_DONE ? 0 : -1;
}

static int xp_load_allocs(sqlite3 *db, struct xp_process *p)
{
    static const char sql[] =
        "SELECT api, kind, device, ptr, bytes, alloc_ns, alloc_end_ns, free_ns, alloc_stack_id,"
        " free_stack_id FROM allocations ORDER BY id";
    sqlite3_stmt *st;
    size_t cap = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!xp_grow(&p->allocs, &cap, p->n_allocs, sizeof *p->allocs))
            break;
        int64_t api = xp_api_index(p, xp_col_text(st, 0));
        if (api < 0)
            break;
        p->allocs[p->n_allocs++] = (struct xp_alloc){
            .api = (uint32_t)api, .kind = xp_ak_code(xp_col_text(st, 1)),
            .device = sqlite3_column_int(st, 2), .ptr = (uint64_t)sqlite3_column_int64(st, 3),
            .bytes = (uint64_t)sqlite3_column_int64(st, 4), .alloc_ns = sqlite3_column_int64(st, 5),
            .alloc_end_ns = sqlite3_column_int64(st, 6),
            .free_ns = sqlite3_column_type(st, 7) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, 7),
            .alloc_stack = (uint32_t)sqlite3_column_int64(st, 8),
            .free_stack = (uint32_t)sqlite3_column_int64(st, 9)};
    }
    return sqlite3_finalize(st) == SQLITE_OK && rc == SQLITE_DONE ? 0 : -1;
}

static int xp_load_errors(sqlite3 *db, struct xp_process *p)
{
    static const char sql[] =
        "SELECT api, status, tid, start_ns, stack_id, detail, device, record FROM errors ORDER BY id";
    sqlite3_stmt *st;
    size_t cap = 0;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!xp_grow(&p->errors, &cap, p->n_errors, sizeof *p->errors))
            break;
        int64_t api = xp_api_index(p, xp_col_text(st, 0));
        if (api < 0)
            break;
        struct xp_error *e = &p->errors[p->n_errors++];
        *e = (struct xp_error){
            .api = (uint32_t)api, .status = sqlite3_column_int(st, 1), .tid = sqlite3_column_int(st, 2),
            .start_ns = sqlite3_column_int64(st, 3), .stack_id = (uint32_t)sqlite3_column_int64(st, 4),
            .detail = xp_strdup0(xp_col_text(st, 5)), .device = sqlite3_column_int(st, 6),
            .dev_free = -1, .dev_total = -1};
        snprintf(e->record, sizeof e->record, "%s", xp_col_text(st, 7) ? xp_col_text(st, 7) : "call");
    }
    return sqlite3_finalize(st) == SQLITE_OK && rc == SQLITE_DONE ? 0 : -1;
}

static void xp_free_modules(struct xp_module_row *m, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(m[i].path);
    free(m);
}

static int xp_load_modules(sqlite3 *db, struct xp_module_row **out, size_t *n)
{
    sqlite3_stmt *st;
    size_t cap = 0;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(db, "SELECT path, base, low, size FROM modules", -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!xp_grow(out, &cap, *n, sizeof **out))
            break;
        const char *path = xp_col_text(st, 0);
        struct xp_module_row *m = &(*out)[*n];
        if (!(m->path = strdup(path ? path : "?")))
            break;
        const char *slash = strrchr(m->path, '/');
        m->base_name = slash ? slash + 1 : m->path;
        m->base = (uint64_t)sqlite3_column_int64(st, 1);
        m->low = sqlite3_column_type(st, 2) == SQLITE_NULL ? m->base
                                                           : (uint64_t)sqlite3_column_int64(st, 2);
        m->size = (uint64_t)sqlite3_column_int64(st, 3);
        (*n)++;
    }
    return sqlite3_finalize(st) == SQLITE_OK && rc == SQLITE_DONE ? 0 : -1;
}

static const struct xp_module_row *xp_module_of(const struct xp_module_row *m, size_t n, uint64_t a)
{
    for (size_t i = 0; i < n; i++)
        if (a >= m[i].low && a - m[i].low < m[i].size)
            return &m[i];
    return NULL;
}

/* One stack's frames and their module names in one block, so that freeing
 * stack->frames frees everything (the stub has no symbol cache to own them). */
static struct xp_frame *xp_build_frames(const unsigned char *blob, size_t depth,
                                        const struct xp_module_row *mods, size_t nmods,
                                        uint32_t *nframes)
{
    size_t strbytes = 0;
    for (size_t i = 0; i < depth; i++) {
        uint64_t a = 0;
        for (int b = 7; b >= 0; b--)
            a = a << 8 | blob[i * 8 + (size_t)b];
        const struct xp_module_row *m = xp_module_of(mods, nmods, a);
        if (m)
            strbytes += strlen(m->base_name) + strlen(m->path) + 2;
    }
    struct xp_frame *f = malloc(depth * sizeof *f + strbytes + 1);
    if (!f)
        return NULL;
    char *pool = (char *)(f + depth);
    size_t n = 0;
    for (size_t i = 0; i < depth; i++) {
        uint64_t a = 0;
        for (int b = 7; b >= 0; b--)
            a = a << 8 | blob[i * 8 + (size_t)b];
        const struct xp_module_row *m = xp_module_of(mods, nmods, a);
        struct xp_frame fr = {.addr = a, .offset = a};
        if (m) {
            size_t lb = strlen(m->base_name) + 1, lp = strlen(m->path) + 1;
            memcpy(pool, m->base_name, lb);
            fr.module = pool;
            memcpy(pool + lb, m->path, lp);
            fr.module_path = pool + lb;
            pool += lb + lp;
            fr.offset = a - m->base;
            fr.internal = xp_internal_module(m->base_name);
        }
        /* The model's stacks leave internal frames out. */
        if (!fr.internal)
            f[n++] = fr;
    }
    *nframes = (uint32_t)n;
    return f;
}

static int xp_load_stacks(sqlite3 *db, struct xp_process *p)
{
    struct xp_module_row *mods;
    size_t nmods, cap = 0;
    if (xp_load_modules(db, &mods, &nmods) != 0) {
        xp_free_modules(mods, nmods);
        return -1;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT id, depth, frames FROM stacks ORDER BY id", -1, &st, NULL) !=
        SQLITE_OK) {
        xp_free_modules(mods, nmods);
        return -1;
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (!xp_grow(&p->stacks, &cap, p->n_stacks, sizeof *p->stacks))
            break;
        struct xp_stack *s = &p->stacks[p->n_stacks];
        const unsigned char *blob = sqlite3_column_blob(st, 2);
        size_t depth = (size_t)sqlite3_column_bytes(st, 2) / 8;
        *s = (struct xp_stack){.id = (uint32_t)sqlite3_column_int64(st, 0)};
        /* A stack whose frames never arrived (lost record) stays empty. */
        if (blob && depth && !(s->frames = xp_build_frames(blob, depth, mods, nmods, &s->nframes)))
            break;
        p->n_stacks++;
    }
    xp_free_modules(mods, nmods);
    return sqlite3_finalize(st) == SQLITE_OK && rc == SQLITE_DONE ? 0 : -1;
}

static void xp_free_process(struct xp_process *p)
{
    free(p->db_path);
    free(p->label);
    free(p->hostname);
    free(p->cmdline);
    free(p->records_lost_reason);
    for (size_t i = 0; i < p->n_api; i++)
        free(p->api_names[i]);
    free(p->api_names);
    free(p->copies);
    free(p->allocs);
    free(p->syncs);
    for (size_t i = 0; i < p->n_errors; i++)
        free(p->errors[i].detail);
    free(p->errors);
    free(p->unknown_frees);
    for (size_t i = 0; i < p->n_ranges; i++) {
        free(p->ranges[i].name);
        free(p->ranges[i].domain);
    }
    free(p->ranges);
    for (size_t i = 0; i < p->n_stacks; i++)
        free(p->stacks[i].frames);
    free(p->stacks);
    for (size_t i = 0; i < p->n_notes; i++)
        free(p->notes[i]);
    free(p->notes);
    *p = (struct xp_process){0};
}

void xp_diff_free_side(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        xp_free_process(&r->procs[i]);
    free(r->procs);
    for (size_t i = 0; i < r->n_findings; i++) {
        free(r->findings[i].message);
        for (size_t k = 0; k < r->findings[i].n_facts; k++)
            if (r->findings[i].facts[k].is_text)
                free(r->findings[i].facts[k].text);
        free(r->findings[i].facts);
    }
    free(r->findings);
    *r = (struct xp_report){0};
}

static int xp_load_one(const char *path, struct xp_process *p, char *err, size_t errlen)
{
    char journal[4096];
    snprintf(journal, sizeof journal, "%s%s", path, XP_DIFF_JOURNAL_SUFFIX);
    /* A process that died leaves its last records in the journal: take them
     * in first, as `xferprof report` does. */
    if (access(journal, F_OK) == 0 && access(path, F_OK) == 0) {
        bool did = false;
        char why[512];
        if (xp_recover(path, &did, why, sizeof why) != 0) {
            snprintf(err, errlen, "%s", why);
            return -1;
        }
    }
    sqlite3 *db;
    if (xp_db_open_readonly(path, &db, err, errlen) != 0) {
        /* The report's wording for sqlite's own complaints about a file. */
        size_t pl = strlen(path);
        const char *why = strncmp(err, path, pl) == 0 && strncmp(err + pl, ": ", 2) == 0
                              ? err + pl + 2 : NULL;
        if (why && strncmp(why, "no such database", 16) != 0 &&
            strncmp(why, "not an xferprof database", 24) != 0 &&
            strncmp(why, "database schema", 15) != 0) {
            char sq[512];
            snprintf(sq, sizeof sq, "%s", why);
            snprintf(err, errlen, "%s: database is truncated or corrupt (%s)", path, sq);
        }
        return -1;
    }
    int rc = -1;
    if (!(p->db_path = strdup(path)))
        goto out;
    if (xp_load_meta(db, p) != 0 || xp_load_copies(db, p) != 0 || xp_load_allocs(db, p) != 0 ||
        xp_load_errors(db, p) != 0 || xp_load_stacks(db, p) != 0) {
        if (sqlite3_errcode(db) == SQLITE_NOMEM || sqlite3_errcode(db) == SQLITE_OK)
            snprintf(err, errlen, "%s: out of memory", path);
        else
            snprintf(err, errlen, "%s: database is truncated or corrupt (%s)", path,
                     sqlite3_errmsg(db));
        goto out;
    }
    rc = 0;
out:
    sqlite3_close(db);
    return rc;
}

int xp_diff_load_side(char **paths, size_t n, struct xp_report *out, char *err, size_t errlen)
{
    /* Thresholds stay zero: the stub runs no rules. */
    *out = (struct xp_report){0};
    out->procs = calloc(n ? n : 1, sizeof *out->procs);
    if (!out->procs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        int rc = xp_load_one(paths[i], &out->procs[i], err, errlen);
        out->n_procs = i + 1; /* freed below on failure, the partial one included */
        if (rc != 0) {
            xp_diff_free_side(out);
            return -1;
        }
    }
    return 0;
}
