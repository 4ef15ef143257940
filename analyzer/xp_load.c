/* xp_load.c: reading one run database into the report's model (struct xp_process).
 *
 * One scan per table.  Copies and syncs are read from their storage tables
 * (copy_rows, sync_rows) with call_sites joined in memory: measured on a
 * 1M-copy run that is several times faster than scanning the copies view,
 * which joins call_sites and apis in SQL for every row (docs/report.md has
 * the numbers).  The small tables (allocations, errors, unknown frees) are
 * read through their views, which keep their text codes (allocation kinds)
 * stable across branches that add new ones. */
#include "xp_load.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_format.h"
#include "xp_frames.h"
#include "xp_progress.h"
#include "xp_pyframes.h"
#include "xp_symbols.h"

void xp_load_db_error(sqlite3 *db, int rc, char *err, size_t errlen)
{
    int base = rc & 0xff;
    const char *msg = db ? sqlite3_errmsg(db) : "out of memory";
    if (base == SQLITE_CORRUPT || base == SQLITE_NOTADB || base == SQLITE_IOERR)
        snprintf(err, errlen, "database is truncated or corrupt (%s)", msg);
    else if (base == SQLITE_NOMEM)
        snprintf(err, errlen, "out of memory");
    else
        snprintf(err, errlen, "cannot read the database (%s)", msg);
}

void xp_process_note(struct xp_process *p, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    char **grown = realloc(p->notes, (p->n_notes + 1) * sizeof *grown);
    if (!grown)
        return;
    p->notes = grown;
    if ((p->notes[p->n_notes] = strdup(buf)) != NULL)
        p->n_notes++;
}

/* What a load pass shares: the connection, the process being filled, and
 * where the first error goes. */
struct xp_ld {
    sqlite3 *db;
    struct xp_process *p;
    char *err;
    size_t errlen;
    size_t cap_api;
    uint64_t rows;           /* rows read, for the progress line */
};

static int xp_ld_fail(struct xp_ld *L, int rc)
{
    xp_load_db_error(L->db, rc, L->err, L->errlen);
    return -1;
}

static int xp_ld_oom(struct xp_ld *L)
{
    snprintf(L->err, L->errlen, "out of memory");
    return -1;
}

static sqlite3_stmt *xp_ld_prepare(struct xp_ld *L, const char *sql)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(L->db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK) {
        xp_ld_fail(L, rc);
        sqlite3_finalize(st);
        return NULL;
    }
    return st;
}

/* Ends a row loop: SQLITE_DONE is success, anything else the error. */
static int xp_ld_done(struct xp_ld *L, sqlite3_stmt *st, int rc)
{
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : xp_ld_fail(L, rc);
}

/* Every row loop calls this once per row (t: when the row's call ended):
 * the process's end time, and the rows read so far for the progress line. */
static void xp_ld_seen(struct xp_ld *L, int64_t t)
{
    if (t > L->p->end_mono_ns)
        L->p->end_mono_ns = t;
    xp_progress_tick(&L->rows, "rows");
}

static char *xp_col_strdup(sqlite3_stmt *st, int i)
{
    const unsigned char *s = sqlite3_column_text(st, i);
    return s ? strdup((const char *)s) : NULL;
}

/* Makes api id a valid index of p->api_names, naming an id the apis table
 * lacks "api#N" as the views do.  Returns the index, or -1 (out of memory). */
static int64_t xp_ld_api(struct xp_ld *L, int64_t id, const char *name, bool driver)
{
    struct xp_process *p = L->p;
    if (id < 0 || id > 65535)
        id = 0; /* not a journal api id: the unknown entry point */
    size_t i = (size_t)id;
    if (i >= p->n_api) {
        size_t cap = L->cap_api;
        char **names = p->api_names;
        if (xp_grow(&names, &cap, i + 1, sizeof *names) != 0)
            return -1;
        p->api_names = names;
        bool *drv = realloc(p->api_driver, cap * sizeof *drv);
        if (!drv)
            return -1;
        p->api_driver = drv;
        L->cap_api = cap;
        for (size_t k = p->n_api; k <= i; k++)
            p->api_names[k] = NULL, p->api_driver[k] = false;
        p->n_api = i + 1;
    }
    if (!p->api_names[i]) {
        char buf[32];
        snprintf(buf, sizeof buf, "api#%zu", i);
        if (!(p->api_names[i] = strdup(name ? name : buf)))
            return -1;
        p->api_driver[i] = driver;
    }
    return (int64_t)i;
}

static int xp_ld_apis(struct xp_ld *L)
{
    sqlite3_stmt *st = xp_ld_prepare(L, "SELECT id, name, layer FROM apis");
    if (!st)
        return -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *layer = (const char *)sqlite3_column_text(st, 2);
        if (xp_ld_api(L, sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
                      layer && strcmp(layer, "driver") == 0) < 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
    }
    return xp_ld_done(L, st, rc);
}

/* An api column of a view row: its id (joined from apis), or the N of
 * "api#N" for an id the apis table lacks. */
static int64_t xp_ld_view_api(struct xp_ld *L, sqlite3_stmt *st, int id_col, int name_col)
{
    int64_t id = 0;
    if (sqlite3_column_type(st, id_col) != SQLITE_NULL) {
        id = sqlite3_column_int64(st, id_col);
    } else {
        const char *name = (const char *)sqlite3_column_text(st, name_col);
        if (name && strncmp(name, "api#", 4) == 0)
            id = strtoll(name + 4, NULL, 10);
    }
    return xp_ld_api(L, id, NULL, false);
}

static uint32_t xp_col_u32(sqlite3_stmt *st, int i)
{
    int64_t v = sqlite3_column_int64(st, i);
    return v > 0 && v <= UINT32_MAX ? (uint32_t)v : XP_NONE_ID;
}

/* call_sites into p->call_sites, by id, and one more entry after the largest id
 * for a row that names no site: a site id the table lacks reads as all
 * zeros, as an outer join would leave it. */
static int xp_ld_sites(struct xp_ld *L)
{
    struct xp_process *p = L->p;
    sqlite3_stmt *st = xp_ld_prepare(
        L, "SELECT id, api, status, device, tid, stream, stack, direction, host_mem, blocking "
           "FROM call_sites");
    if (!st)
        return -1;
    int rc;
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        if (id < 0 || id >= (int64_t)UINT32_MAX)
            continue; /* not one the ingest made; no row can name it */
        size_t i = (size_t)id;
        if (i + 1 >= p->n_call_sites) {
            if (xp_grow(&p->call_sites, &cap, i + 2, sizeof *p->call_sites) != 0) {
                sqlite3_finalize(st);
                return xp_ld_oom(L);
            }
            p->n_call_sites = i + 2;
        }
        int64_t api = xp_ld_api(L, sqlite3_column_int64(st, 1), NULL, false);
        if (api < 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
        int64_t dir = sqlite3_column_int64(st, 7), hm = sqlite3_column_int64(st, 8),
                bl = sqlite3_column_int64(st, 9);
        p->call_sites[i] = (struct xp_call_site){
            .api = (uint32_t)api,
            .status = sqlite3_column_int(st, 2),
            .device = sqlite3_column_int(st, 3),
            .tid = sqlite3_column_int(st, 4),
            .stream = (uint64_t)sqlite3_column_int64(st, 5),
            .stack_id = xp_col_u32(st, 6),
            .direction = dir > 0 && dir < XP_DIR_COUNT ? (uint8_t)dir : XP_DIR_UNKNOWN,
            .host_mem = hm > 0 && hm < XP_HM_COUNT ? (uint8_t)hm : XP_HM_NONE,
            .blocking = bl > 0 && bl < XP_BL_COUNT ? (uint8_t)bl : XP_BL_UNKNOWN,
        };
    }
    if (xp_ld_done(L, st, rc) != 0)
        return -1;
    if (!p->n_call_sites) {
        if (!(p->call_sites = calloc(1, sizeof *p->call_sites)))
            return xp_ld_oom(L);
        p->n_call_sites = 1;
    }
    for (size_t i = 0; i < p->n_call_sites; i++) {
        struct xp_call_site *cs = &p->call_sites[i];
        cs->driver = cs->api < p->n_api && p->api_driver[cs->api];
    }
    return 0;
}

static const struct xp_call_site *xp_ld_site(const struct xp_ld *L, int64_t id)
{
    const struct xp_process *p = L->p;
    size_t last = p->n_call_sites - 1;
    return &p->call_sites[id >= 0 && (size_t)id < last ? (size_t)id : last];
}

/* A capacity hint: the largest rowid of table (one step down its tree). */
static size_t xp_ld_rows_hint(struct xp_ld *L, const char *table)
{
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT max(rowid) FROM %s", table);
    sqlite3_stmt *st = NULL;
    size_t n = 0;
    if (sqlite3_prepare_v2(L->db, sql, -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        int64_t v = sqlite3_column_int64(st, 0);
        n = v > 0 && v < (int64_t)1 << 32 ? (size_t)v : 0;
    }
    sqlite3_finalize(st);
    return n;
}

static int xp_ld_copies(struct xp_ld *L)
{
    struct xp_process *p = L->p;
    sqlite3_stmt *st = xp_ld_prepare(
        L, "SELECT site, bytes, src, dst, start_ns, dur_ns, kernel_seq, fingerprint, "
           "fp_kind, nvtx_range, full_fp FROM copy_rows ORDER BY id");
    if (!st)
        return -1;
    size_t cap = xp_ld_rows_hint(L, "copy_rows");
    if (cap && !(p->copies = malloc(cap * sizeof *p->copies)))
        cap = 0;
    int rc;
    size_t cap_fp = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (xp_grow(&p->copies, &cap, p->n_copies + 1, sizeof *p->copies) != 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
        uint64_t full_fp = (uint64_t)sqlite3_column_int64(st, 10);
        if (full_fp != 0) {
            if (xp_grow(&p->copy_full_fps, &cap_fp, p->n_copy_full_fps + 1,
                        sizeof *p->copy_full_fps) != 0) {
                sqlite3_finalize(st);
                return xp_ld_oom(L);
            }
            p->copy_full_fps[p->n_copy_full_fps++] =
                (struct xp_copy_fact){.copy = p->n_copies, .value = full_fp};
        }
        int64_t fk = sqlite3_column_int64(st, 8);
        struct xp_copy *c = &p->copies[p->n_copies++];
        *c = (struct xp_copy){
            .bytes = (uint64_t)sqlite3_column_int64(st, 1),
            .src = (uint64_t)sqlite3_column_int64(st, 2),
            .dst = (uint64_t)sqlite3_column_int64(st, 3),
            .start_ns = sqlite3_column_int64(st, 4),
            .dur_ns = sqlite3_column_int64(st, 5),
            .kernel_seq = (uint32_t)sqlite3_column_int64(st, 6) & ((1u << XP_COPY_KSEQ_BITS) - 1),
            .fingerprint = (uint64_t)sqlite3_column_int64(st, 7),
            .fp_kind = fk == 1 || fk == 2 ? (unsigned)fk : 0,
            .nvtx_range = xp_col_u32(st, 9), /* NULL reads 0: XP_NONE_ID */
            .cs = xp_ld_site(L, sqlite3_column_int64(st, 0)),
        };
        xp_ld_seen(L, c->start_ns + c->dur_ns);
    }
    return xp_ld_done(L, st, rc);
}

/* Orders copy indexes by (tid, start_ns): a paired sync names its copy so. */
static const struct xp_copy *xp_ld_sort_copies;
static int xp_ld_cmp_copy_key(const void *a, const void *b)
{
    const struct xp_copy *x = &xp_ld_sort_copies[*(const uint32_t *)a];
    const struct xp_copy *y = &xp_ld_sort_copies[*(const uint32_t *)b];
    if (x->cs->tid != y->cs->tid)
        return x->cs->tid < y->cs->tid ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

/* The copy of thread tid that started at start_ns, or NULL. */
static struct xp_copy *xp_ld_find_copy(struct xp_process *p, const uint32_t *by_key, int32_t tid,
                                       int64_t start_ns)
{
    size_t lo = 0, hi = p->n_copies;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct xp_copy *c = &p->copies[by_key[mid]];
        if (c->cs->tid < tid || (c->cs->tid == tid && c->start_ns < start_ns))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == p->n_copies)
        return NULL;
    struct xp_copy *c = &p->copies[by_key[lo]];
    return c->cs->tid == tid && c->start_ns == start_ns ? c : NULL;
}

/* A paired sync's wait as read: which copy, in which order. */
struct xp_ld_wait {
    size_t copy, pos;
    int64_t wait_ns;
};

static int xp_ld_cmp_wait(const void *a, const void *b)
{
    const struct xp_ld_wait *x = a, *y = b;
    if (x->copy != y->copy)
        return x->copy < y->copy ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

/* The waits as read into p->copy_waits, by copy; of two syncs naming one
 * copy the later read counts (as when each overwrote the one before). */
static int xp_ld_keep_waits(struct xp_ld *L, struct xp_ld_wait *w, size_t n)
{
    struct xp_process *p = L->p;
    xp_sort(w, n, sizeof *w, xp_ld_cmp_wait);
    if (n && !(p->copy_waits = malloc(n * sizeof *p->copy_waits)))
        return xp_ld_oom(L);
    for (size_t i = 0; i < n; i++) {
        if (i + 1 < n && w[i + 1].copy == w[i].copy)
            continue;
        p->copy_waits[p->n_copy_waits++] =
            (struct xp_copy_fact){.copy = w[i].copy, .value = (uint64_t)w[i].wait_ns};
    }
    return 0;
}

/* The syncs that completed a copy (syncs.copy_start_ns): the copy is
 * blocking in effect, its wait is the sync's, and a D2H copy takes the
 * fingerprint its destination had once complete. */
static int xp_ld_pair_syncs(struct xp_ld *L)
{
    struct xp_process *p = L->p;
    sqlite3_stmt *st = xp_ld_prepare(
        L, "SELECT y.copy_start_ns, y.dur_ns, y.fingerprint, y.fp_kind, s.tid FROM sync_rows y "
           "JOIN call_sites s ON s.id = y.site WHERE y.copy_start_ns IS NOT NULL");
    if (!st)
        return -1;
    uint32_t *by_key = p->n_copies && p->n_copies <= UINT32_MAX
                           ? malloc(p->n_copies * sizeof *by_key) : NULL;
    if (p->n_copies && !by_key) {
        sqlite3_finalize(st);
        return xp_ld_oom(L);
    }
    for (size_t i = 0; i < p->n_copies; i++)
        by_key[i] = (uint32_t)i;
    xp_ld_sort_copies = p->copies;
    if (p->n_copies)
        qsort(by_key, p->n_copies, sizeof *by_key, xp_ld_cmp_copy_key);
    struct xp_ld_wait *waits = NULL;
    size_t n_waits = 0, cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        struct xp_copy *c = xp_ld_find_copy(p, by_key, (int32_t)sqlite3_column_int64(st, 4),
                                            sqlite3_column_int64(st, 0));
        if (!c || c->cs->status != 0)
            continue;
        if (xp_grow(&waits, &cap, n_waits + 1, sizeof *waits) != 0) {
            rc = SQLITE_NOMEM;
            break;
        }
        c->paired = true;
        waits[n_waits] = (struct xp_ld_wait){.copy = (size_t)(c - p->copies), .pos = n_waits,
                                             .wait_ns = sqlite3_column_int64(st, 1)};
        n_waits++;
        int64_t fk = sqlite3_column_int64(st, 3);
        if (c->fp_kind == 0 && (fk == 1 || fk == 2)) {
            c->fingerprint = (uint64_t)sqlite3_column_int64(st, 2);
            c->fp_kind = (uint8_t)fk;
        }
    }
    free(by_key);
    int ret = xp_ld_done(L, st, rc);
    if (ret == 0)
        ret = xp_ld_keep_waits(L, waits, n_waits);
    free(waits);
    return ret;
}

static int xp_ld_syncs(struct xp_ld *L)
{
    struct xp_process *p = L->p;
    sqlite3_stmt *st = xp_ld_prepare(L, "SELECT site, start_ns, dur_ns FROM sync_rows ORDER BY id");
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (xp_grow(&p->syncs, &cap, p->n_syncs + 1, sizeof *p->syncs) != 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
        const struct xp_call_site *s = xp_ld_site(L, sqlite3_column_int64(st, 0));
        struct xp_sync *y = &p->syncs[p->n_syncs++];
        *y = (struct xp_sync){
            .start_ns = sqlite3_column_int64(st, 1), .dur_ns = sqlite3_column_int64(st, 2),
            .stream = s->stream, .stack_id = s->stack_id, .api = s->api,
            .status = s->status, .device = s->device, .tid = s->tid,
        };
        xp_ld_seen(L, y->start_ns + y->dur_ns);
    }
    return xp_ld_done(L, st, rc);
}

static uint8_t xp_alloc_kind_code(const char *name)
{
    for (int k = 1; name && k < XP_AK_COUNT; k++)
        if (strcmp(name, xp_alloc_kind_name((enum xp_mem_kind)k)) == 0)
            return (uint8_t)k;
    return XP_AK_OTHER;
}

static int xp_ld_allocs(struct xp_ld *L)
{
    struct xp_process *p = L->p;
    sqlite3_stmt *st = xp_ld_prepare(
        L, "SELECT a.id, v.api, v.kind, v.device, v.ptr, v.bytes, v.alloc_ns, v.alloc_end_ns, "
           "v.free_ns, v.alloc_stack_id, v.free_stack_id, v.free_end_ns "
           "FROM allocations v LEFT JOIN apis a ON a.name = v.api ORDER BY v.id");
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t api = xp_ld_view_api(L, st, 0, 1);
        if (api < 0 || xp_grow(&p->allocs, &cap, p->n_allocs + 1, sizeof *p->allocs) != 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
        bool freed = sqlite3_column_type(st, 8) != SQLITE_NULL;
        struct xp_alloc *a = &p->allocs[p->n_allocs++];
        *a = (struct xp_alloc){
            .api = (uint32_t)api,
            .kind = xp_alloc_kind_code((const char *)sqlite3_column_text(st, 2)),
            .device = sqlite3_column_int(st, 3),
            .ptr = (uint64_t)sqlite3_column_int64(st, 4),
            .bytes = (uint64_t)sqlite3_column_int64(st, 5),
            .alloc_ns = sqlite3_column_int64(st, 6),
            .alloc_end_ns = sqlite3_column_int64(st, 7),
            .free_ns = freed ? sqlite3_column_int64(st, 8) : -1,
            .alloc_stack = xp_col_u32(st, 9),
            .free_stack = xp_col_u32(st, 10),
        };
        xp_ld_seen(L, a->alloc_end_ns);
        if (freed)
            xp_ld_seen(L, sqlite3_column_int64(st, 11));
    }
    return xp_ld_done(L, st, rc);
}

/* "requested N bytes; device free F of T" (free/total only when measured). */
static void xp_parse_alloc_detail(struct xp_error *e)
{
    unsigned long long req = 0, fr = 0, tot = 0;
    e->dev_free = e->dev_total = -1;
    if (!e->detail)
        return;
    int n = sscanf(e->detail, "requested %llu bytes; device free %llu of %llu", &req, &fr, &tot);
    if (n >= 1)
        e->requested = req;
    if (n == 3 && fr <= INT64_MAX && tot <= INT64_MAX) {
        e->dev_free = (int64_t)fr;
        e->dev_total = (int64_t)tot;
    }
}

static int xp_ld_errors(struct xp_ld *L)
{
    struct xp_process *p = L->p;
    sqlite3_stmt *st = xp_ld_prepare(
        L, "SELECT a.id, v.api, v.status, v.tid, v.start_ns, v.end_ns, v.stack_id, v.detail, "
           "v.device, v.record FROM errors v LEFT JOIN apis a ON a.name = v.api ORDER BY v.id");
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t api = xp_ld_view_api(L, st, 0, 1);
        if (api < 0 || xp_grow(&p->errors, &cap, p->n_errors + 1, sizeof *p->errors) != 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
        struct xp_error *e = &p->errors[p->n_errors++];
        *e = (struct xp_error){
            .api = (uint32_t)api,
            .status = sqlite3_column_int(st, 2),
            .tid = sqlite3_column_int(st, 3),
            .start_ns = sqlite3_column_int64(st, 4),
            .stack_id = xp_col_u32(st, 6),
            .detail = xp_col_strdup(st, 7),
            .device = sqlite3_column_int(st, 8),
            .dev_free = -1, .dev_total = -1,
        };
        const char *record = (const char *)sqlite3_column_text(st, 9);
        snprintf(e->record, sizeof e->record, "%s", record ? record : "call");
        if (strcmp(e->record, "alloc") == 0)
            xp_parse_alloc_detail(e);
        xp_ld_seen(L, sqlite3_column_int64(st, 5));
    }
    return xp_ld_done(L, st, rc);
}

static int xp_ld_unknown_frees(struct xp_ld *L)
{
    struct xp_process *p = L->p;
    sqlite3_stmt *st = xp_ld_prepare(
        L, "SELECT a.id, v.api, v.start_ns, v.ptr, v.stack_id, v.kind, v.end_ns "
           "FROM unknown_frees v LEFT JOIN apis a ON a.name = v.api ORDER BY v.id");
    if (!st)
        return -1;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t api = xp_ld_view_api(L, st, 0, 1);
        if (api < 0 ||
            xp_grow(&p->unknown_frees, &cap, p->n_unknown_frees + 1, sizeof *p->unknown_frees) != 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
        p->unknown_frees[p->n_unknown_frees++] = (struct xp_unknown_free){
            .api = (uint32_t)api,
            .start_ns = sqlite3_column_int64(st, 2),
            .ptr = (uint64_t)sqlite3_column_int64(st, 3),
            .stack_id = xp_col_u32(st, 4),
            .kind = xp_alloc_kind_code((const char *)sqlite3_column_text(st, 5)),
        };
        xp_ld_seen(L, sqlite3_column_int64(st, 6));
    }
    return xp_ld_done(L, st, rc);
}

/* The copies graph launches ran: each row of one launch has the launch's
 * start and thread, and names its node (schema 2; none before). */
static int xp_ld_graphs(struct xp_ld *L)
{
    sqlite3_stmt *st = xp_ld_prepare(L, "SELECT count(*) FROM pragma_table_info('copy_rows') "
                                        "WHERE name = 'graph_node'");
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    bool has = rc == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0;
    if (rc == SQLITE_ROW)
        rc = SQLITE_DONE;
    if (xp_ld_done(L, st, rc) != 0)
        return -1;
    if (!has)
        return 0;
    st = xp_ld_prepare(L, "SELECT count(*), count(DISTINCT c.start_ns || ' ' || s.tid) "
                          "FROM copy_rows c JOIN call_sites s ON s.id = c.site "
                          "WHERE c.graph_node IS NOT NULL");
    if (!st)
        return -1;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        L->p->graph_copies = (uint64_t)sqlite3_column_int64(st, 0);
        L->p->graph_launches = (uint64_t)sqlite3_column_int64(st, 1);
        rc = SQLITE_DONE;
    }
    return xp_ld_done(L, st, rc);
}

static int xp_ld_memsets(struct xp_ld *L)
{
    sqlite3_stmt *st = xp_ld_prepare(L, "SELECT count(*), coalesce(sum(bytes), 0), "
                                        "max(start_ns + dur_ns) FROM memset_rows");
    if (!st)
        return -1;
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) {
        L->p->memsets = (uint64_t)sqlite3_column_int64(st, 0);
        L->p->memset_bytes = (uint64_t)sqlite3_column_int64(st, 1);
        xp_ld_seen(L, sqlite3_column_int64(st, 2));
        rc = SQLITE_DONE;
    }
    if (xp_ld_done(L, st, rc) != 0)
        return -1;
    /* Each successful memset's target, for when device content was overwritten. */
    st = xp_ld_prepare(L, "SELECT m.dst, m.bytes, m.start_ns FROM memset_rows m JOIN call_sites s "
                          "ON s.id = m.site WHERE s.status = 0 ORDER BY m.start_ns");
    if (!st)
        return -1;
    size_t cap = 0;
    struct xp_process *p = L->p;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (xp_grow(&p->memset_spans, &cap, p->n_memset_spans + 1, sizeof *p->memset_spans) != 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
        p->memset_spans[p->n_memset_spans++] = (struct xp_memset_span){
            .dst = (uint64_t)sqlite3_column_int64(st, 0),
            .bytes = (uint64_t)sqlite3_column_int64(st, 1),
            .start_ns = sqlite3_column_int64(st, 2)};
    }
    return xp_ld_done(L, st, rc);
}

/* NVTX ranges (docs/schema.md, nvtx_ranges). */
static int xp_ld_ranges(struct xp_ld *L)
{
    const char *sql = "SELECT id, parent_id, start_ns, end_ns, name, domain, tid, depth, "
                      "kind = 'push' FROM nvtx_ranges ORDER BY id";
    sqlite3_stmt *st = xp_ld_prepare(L, sql);
    if (!st)
        return -1;
    struct xp_process *p = L->p;
    size_t cap = 0;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (xp_grow(&p->ranges, &cap, p->n_ranges + 1, sizeof *p->ranges) != 0) {
            sqlite3_finalize(st);
            return xp_ld_oom(L);
        }
        bool open = sqlite3_column_type(st, 3) == SQLITE_NULL;
        p->ranges[p->n_ranges++] = (struct xp_nvtx_range){
            .id = sqlite3_column_int64(st, 0),
            .parent_id = sqlite3_column_int64(st, 1),
            .start_ns = sqlite3_column_int64(st, 2),
            .end_ns = open ? -1 : sqlite3_column_int64(st, 3),
            .name = xp_col_strdup(st, 4),
            .domain = xp_col_strdup(st, 5),
            .tid = sqlite3_column_int(st, 6),
            .depth = sqlite3_column_int(st, 7),
            .push = sqlite3_column_int(st, 8) != 0,
        };
    }
    return xp_ld_done(L, st, rc);
}

static int64_t xp_meta_int(const char *v, int64_t dflt)
{
    if (!v || !*v)
        return dflt;
    char *end = NULL;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    return errno == 0 && *end == '\0' ? (int64_t)n : dflt;
}

/* meta device_uuid.N: the UUID of ordinal N.  Returns -1 when out of memory;
 * an ordinal that is not one is left out. */
static int xp_ld_device_uuid(struct xp_process *p, int64_t ordinal, const char *uuid)
{
    if (ordinal < 0 || ordinal >= 1024)
        return 0;
    size_t need = (size_t)ordinal + 1, cap = p->n_device_uuids;
    if (need > cap && xp_grow(&p->device_uuids, &cap, need, sizeof *p->device_uuids) != 0)
        return -1;
    if (need > p->n_device_uuids)
        p->n_device_uuids = need;
    free(p->device_uuids[ordinal]);
    p->device_uuids[ordinal] = strdup(uuid);
    return p->device_uuids[ordinal] ? 0 : -1;
}

static int xp_ld_meta(struct xp_ld *L)
{
    struct xp_process *p = L->p;
    sqlite3_stmt *st = xp_ld_prepare(L, "SELECT key, value FROM meta");
    if (!st)
        return -1;
    int64_t stack_depth = -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *k = (const char *)sqlite3_column_text(st, 0);
        const char *v = (const char *)sqlite3_column_text(st, 1);
        if (!k)
            continue;
        if (strcmp(k, "pid") == 0)
            p->pid = xp_meta_int(v, -1);
        else if (strcmp(k, "ppid") == 0)
            p->ppid = xp_meta_int(v, -1);
        else if (strcmp(k, "rank") == 0)
            p->rank = xp_meta_int(v, -1);
        else if (strcmp(k, "start_mono_ns") == 0)
            p->start_mono_ns = xp_meta_int(v, 0);
        else if (strcmp(k, "exit_status") == 0)
            p->exit_status = xp_meta_int(v, -1);
        else if (strcmp(k, "records_lost") == 0)
            p->records_lost = xp_meta_int(v, 0);
        else if (strcmp(k, "recovered") == 0)
            p->recovered = xp_meta_int(v, 0) != 0;
        else if (strcmp(k, "stack_depth") == 0)
            stack_depth = xp_meta_int(v, -1);
        else if (strcmp(k, "hostname") == 0 && !p->hostname)
            p->hostname = v ? strdup(v) : NULL;
        else if (strcmp(k, "cmdline") == 0 && !p->cmdline)
            p->cmdline = v ? strdup(v) : NULL;
        else if (strcmp(k, "records_lost_reason") == 0 && !p->records_lost_reason)
            p->records_lost_reason = v ? strdup(v) : NULL;
        else if (strcmp(k, "local_rank") == 0)
            p->local_rank = xp_meta_int(v, -1);
        else if (strcmp(k, "cuda_visible_devices") == 0 && !p->cuda_visible_devices)
            p->cuda_visible_devices = strdup(v ? v : "");
        else if ((rc = xp_capture_meta(p, k, v)) != 0) {
            if (rc < 0) {
                sqlite3_finalize(st);
                return xp_ld_oom(L);
            }
        } else if (strncmp(k, "device_uuid.", 12) == 0 && v) {
            if (xp_ld_device_uuid(p, xp_meta_int(k + 12, -1), v) != 0) {
                sqlite3_finalize(st);
                return xp_ld_oom(L);
            }
        } else if (strcmp(k, "times_fixed") == 0 && xp_meta_int(v, 0) > 0)
            xp_process_note(p, "%lld call(s) ended before they started (a clock stepped, or a "
                               "damaged record): stored as taking no time",
                            (long long)xp_meta_int(v, 0));
    }
    p->stacks_off = stack_depth == 0;
    if (xp_ld_done(L, st, rc) != 0)
        return -1;
    char label[96];
    if (p->rank >= 0)
        snprintf(label, sizeof label, "rank %lld (pid %lld)", (long long)p->rank,
                 (long long)p->pid);
    else
        snprintf(label, sizeof label, "pid %lld", (long long)p->pid);
    p->label = strdup(label);
    return p->label ? 0 : xp_ld_oom(L);
}

int xp_load_db(sqlite3 *db, const char *path, bool writable, bool did, struct xp_process *p,
               char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->pid = p->ppid = p->rank = p->exit_status = p->local_rank = -1;
    struct xp_ld L = {.db = db, .p = p, .err = err, .errlen = errlen};
    int rc = -1;
    if (!(p->db_path = strdup(path))) {
        xp_ld_oom(&L);
        goto out;
    }
    if (xp_ld_meta(&L) || xp_ld_apis(&L) || xp_ld_sites(&L) || xp_ld_copies(&L) ||
        xp_ld_syncs(&L) || xp_ld_pair_syncs(&L) || xp_ld_allocs(&L) || xp_ld_errors(&L) || xp_ld_unknown_frees(&L) ||
        xp_ld_memsets(&L) || xp_ld_graphs(&L) || xp_ld_ranges(&L))
        goto out;
    int brc = xp_load_blocks(db, p);
    if (brc != SQLITE_OK) {
        xp_ld_fail(&L, brc);
        goto out;
    }
    if (p->end_mono_ns < p->start_mono_ns)
        p->end_mono_ns = p->start_mono_ns;
    xp_capture_done(p);
    if (did && !p->recovered)
        p->recovered = true;
    xp_progress_stage("symbolizing %s", path);
    if (xp_frames_resolve(db, writable, p, err, errlen) != 0)
        goto out;
    /* For SQL users (the stack_frames view); the report does not need it. */
    char why[512];
    if (writable && xp_frames_store(L.db, p, NULL, why, sizeof why) != 0)
        xp_process_note(p, "stack_frames not updated: %s", why);
    rc = 0;
out:
    if (rc != 0)
        xp_process_free(p);
    return rc;
}

int xp_load(const char *path, struct xp_process *p, char *err, size_t errlen)
{
    sqlite3 *db;
    bool did = false, writable = false;
    memset(p, 0, sizeof *p);
    if (xp_load_open(path, &db, &writable, &did, err, errlen) != 0)
        return -1;
    int rc = xp_load_db(db, path, writable, did, p, err, errlen);
    sqlite3_close(db);
    return rc;
}

void xp_process_free(struct xp_process *p)
{
    for (size_t i = 0; i < p->n_api; i++)
        free(p->api_names[i]);
    for (size_t i = 0; i < p->n_errors; i++)
        free(p->errors[i].detail);
    for (size_t i = 0; i < p->n_ranges; i++) {
        free(p->ranges[i].name);
        free(p->ranges[i].domain);
    }
    for (size_t i = 0; i < p->n_notes; i++)
        free(p->notes[i]);
    for (size_t i = 0; i < p->n_stacks; i++)
        free(p->stacks[i].frames);
    xp_symbols_free(p);
    xp_pyframes_free(p);
    free(p->api_names);
    free(p->api_driver);
    free(p->copies);
    free(p->call_sites);
    free(p->copy_waits);
    free(p->copy_full_fps);
    free(p->allocs);
    free(p->blocks);
    free(p->syncs);
    free(p->memset_spans);
    free(p->errors);
    free(p->unknown_frees);
    free(p->ranges);
    free(p->stacks);
    free(p->notes);
    free(p->db_path);
    free(p->label);
    free(p->hostname);
    free(p->cmdline);
    free(p->capture_range);
    free(p->records_lost_reason);
    free(p->cuda_visible_devices);
    for (size_t i = 0; i < p->n_device_uuids; i++)
        free(p->device_uuids[i]);
    free(p->device_uuids);
    memset(p, 0, sizeof *p);
}
