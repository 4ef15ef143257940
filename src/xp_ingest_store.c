/* xp_ingest_store.c: journal records into rows: one function per record type, the
 * buffered multi-row inserts, and the interned stacks (call sites: xp_ingest_sites.c). */
#include "xp_ingest_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_api.h"
#include "xp_ingest_py.h"
#include "xp_validate.h"

/* ---- rows inserted many at a time ---------------------------------------- */

/* Inserts the rows waiting in b.  Returns 0 or -1. */
int xp_ig_flush(xp_ingest *ig, row_buf *b)
{
    if (b->n == 0)
        return 0;
    int rc = xp_ig_run(ig, b->insert);
    b->n = 0;
    return rc;
}

/* Where the next row of b goes (flushing a full buffer first), or NULL.
 * Its columns are not NULL unless *nulls (OUT, may be NULL) gets bits set. */
static sqlite3_int64 *xp_row(xp_ingest *ig, row_buf *b, uint16_t **nulls)
{
    if (b->n == XP_ROW_BATCH && xp_ig_flush(ig, b) != 0)
        return NULL;
    b->null[b->n] = 0;
    if (nulls != NULL)
        *nulls = &b->null[b->n];
    return &b->v[b->n++ * b->cols];
}

/* Runs a statement whose row is keyed by a record id (INSERT OR IGNORE): a
 * row already there means the journal held the record twice. */
static int xp_run_keyed(xp_ingest *ig, int which)
{
    if (xp_ig_run(ig, which) != 0)
        return -1;
    if (sqlite3_changes(ig->db) == 0)
        ig->lost_duplicate++;
    return 0;
}

/* ---- interning ------------------------------------------------------------ */

/* One step of the stacks cache's hash. */
static inline uint64_t xp_mix(uint64_t h, uint64_t v)
{
    h = (h ^ v) * 0x9e3779b97f4a7c15ull;
    return h ^ (h >> 31);
}

/* stacks.id for a journal stack hash, adding a placeholder row (depth and
 * frames NULL) when its STACK record has not been stored yet: another
 * thread's chunk may hold it further on.  Returns the id (0 for hash 0), or
 * -1 with ig->err set. */
static sqlite3_int64 xp_stack_ref(xp_ingest *ig, uint64_t hash)
{
    if (hash == 0)
        return 0;
    stack_slot *slot = &ig->stacks[xp_mix(0, hash) & (STACK_CACHE - 1)];
    if (slot->hash == hash)
        return slot->id;
    sqlite3_stmt *f = ig->st[S_STACK_FIND];
    sqlite3_bind_int64(f, 1, xp_i64(hash));
    int rc = sqlite3_step(f);
    sqlite3_int64 id = rc == SQLITE_ROW ? sqlite3_column_int64(f, 0) : 0;
    sqlite3_reset(f);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
        return xp_ig_db_fail(ig);
    if (rc == SQLITE_DONE) {
        sqlite3_bind_int64(ig->st[S_STACK_ADD], 1, xp_i64(hash));
        if (xp_ig_run(ig, S_STACK_ADD) != 0)
            return -1;
        id = sqlite3_last_insert_rowid(ig->db);
    }
    slot->hash = hash;
    slot->id = id;
    return id;
}

/* ---- NVTX (issue 4) ------------------------------------------------------- */

/* Binds a journal id or hash, 0 meaning none (NULL). */
static void xp_bind_nonzero(sqlite3_stmt *s, int i, uint64_t v)
{
    if (v != 0)
        sqlite3_bind_int64(s, i, xp_i64(v));
    else
        sqlite3_bind_null(s, i);
}

/* Column c of a buffered row: an nvtx_range id, NULL for 0 (no range open,
 * or a record from before journal version 3). */
static void xp_nvtx_cell(sqlite3_int64 *v, uint16_t *nulls, unsigned c, uint64_t range)
{
    v[c] = xp_i64(range);
    if (range == 0)
        *nulls |= (uint16_t)(1u << c);
}

/* A push or start opens a range row; a pop or end stores the range's end,
 * keyed by the range's id (whichever is stored first, they meet in the
 * view).  A range or end stored twice is refused (a damaged journal). */
static int xp_store_nvtx(xp_ingest *ig, const xp_rec_nvtx *r)
{
    if (r->range_id == 0 || r->range_id > INT64_MAX || r->op < XP_NVTX_PUSH ||
        r->op > XP_NVTX_END) {
        ig->lost_malformed++;
        return 0;
    }
    if (r->op == XP_NVTX_POP || r->op == XP_NVTX_END) {
        sqlite3_stmt *s = ig->st[S_NVTX_END];
        sqlite3_bind_int64(s, 1, (sqlite3_int64)r->range_id);
        sqlite3_bind_int64(s, 2, r->h.tid);
        sqlite3_bind_int64(s, 3, xp_i64(r->time_ns));
        /* Not counted as a duplicate: a program may end a range twice. */
        return xp_ig_run(ig, S_NVTX_END);
    }
    bool push = r->op == XP_NVTX_PUSH;
    sqlite3_stmt *s = ig->st[S_NVTX_RANGE];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->range_id);
    sqlite3_bind_int(s, 2, r->op);
    xp_bind_nonzero(s, 3, r->name);
    xp_bind_nonzero(s, 4, r->domain);
    sqlite3_bind_int64(s, 5, r->h.tid);
    sqlite3_bind_int64(s, 6, xp_i64(r->time_ns));
    if (push)
        sqlite3_bind_int(s, 7, r->depth);
    else
        sqlite3_bind_null(s, 7);
    xp_bind_nonzero(s, 8, push ? r->parent_id : 0);
    return xp_run_keyed(ig, S_NVTX_RANGE);
}

static int xp_store_name(xp_ingest *ig, const xp_rec_name *r)
{
    if (r->hash == 0 || r->len > XP_NVTX_NAME_MAX || sizeof *r + (size_t)r->len + 1 > r->h.size) {
        ig->lost_malformed++;
        return 0;
    }
    sqlite3_stmt *s = ig->st[S_NVTX_NAME];
    sqlite3_bind_int64(s, 1, xp_i64(r->hash));
    sqlite3_bind_text(s, 2, (const char *)(r + 1), (int)r->len, SQLITE_TRANSIENT);
    return xp_ig_run(ig, S_NVTX_NAME);   /* a name written again (a full seen-set) is no loss */
}

/* ---- records -------------------------------------------------------------- */

static const char *xp_dir_name(unsigned d)
{
    static const char *const names[] = {"copy", "H2D", "D2H", "D2D", "H2H"};
    return d < sizeof names / sizeof names[0] ? names[d] : "copy";
}

static int xp_error_row(xp_ingest *ig, const xp_call *c, sqlite3_int64 stack,
                        sqlite3_int64 copy_id, const char *detail)
{
    sqlite3_stmt *s = ig->st[S_ERROR];
    sqlite3_bind_int(s, 1, c->h.type);
    sqlite3_bind_int(s, 2, c->h.api);
    sqlite3_bind_int(s, 3, c->status);
    sqlite3_bind_int(s, 4, c->device);
    sqlite3_bind_int64(s, 5, c->h.tid);
    sqlite3_bind_int64(s, 6, xp_i64(c->start_ns));
    sqlite3_bind_int64(s, 7, xp_i64(c->end_ns));
    xp_ig_bind_stack(s, 8, stack);
    if (copy_id > 0)
        sqlite3_bind_int64(s, 9, copy_id);
    else
        sqlite3_bind_null(s, 9);
    sqlite3_bind_text(s, 10, detail, -1, SQLITE_TRANSIENT);
    return xp_ig_run(ig, S_ERROR);
}

/* Columns c and c + 1 of a copy or memset row: the graph node it ran (NULL
 * for an ordinary call) and the stacks.id of the graph launch that ran it.
 * Returns 0 or -1. */
static int xp_graph_cells(xp_ingest *ig, sqlite3_int64 *v, uint16_t *nulls, unsigned c,
                          uint64_t node, uint64_t launch_stack)
{
    sqlite3_int64 stack = xp_stack_ref(ig, launch_stack);
    if (stack < 0)
        return -1;
    v[c] = xp_i64(node);
    v[c + 1] = stack;
    if (node == 0)
        *nulls |= (uint16_t)(1u << c);
    if (stack == 0)
        *nulls |= (uint16_t)(1u << (c + 1));
    return 0;
}

/* A graph node (journal version 7), keyed by its node_id: copies and memsets
 * a launch ran name it.  Only successful calls make nodes. */
static int xp_store_graph_node(xp_ingest *ig, const xp_rec_graph_node *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    sqlite3_stmt *s = ig->st[S_GRAPH_NODE];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->node_id);
    sqlite3_bind_int(s, 2, r->c.h.api);
    sqlite3_bind_int(s, 3, r->op);
    sqlite3_bind_int(s, 4, r->via);
    sqlite3_bind_int64(s, 5, xp_i64(r->graph));
    xp_bind_nonzero(s, 6, r->handle);
    xp_bind_nonzero(s, 7, r->via == XP_GNODE_CAPTURE ? r->stream : 0);
    sqlite3_bind_int(s, 8, r->direction);
    sqlite3_bind_int(s, 9, r->host_mem);
    sqlite3_bind_int(s, 10, r->kind);
    sqlite3_bind_int64(s, 11, xp_i64(r->src));
    sqlite3_bind_int64(s, 12, xp_i64(r->dst));
    sqlite3_bind_int64(s, 13, xp_i64(r->bytes));
    if (r->op == XP_GNODE_MEMSET)
        sqlite3_bind_int(s, 14, r->value);
    else
        sqlite3_bind_null(s, 14);
    sqlite3_bind_int(s, 15, r->c.device);
    sqlite3_bind_int64(s, 16, r->c.h.tid);
    sqlite3_bind_int64(s, 17, xp_i64(r->c.start_ns));
    sqlite3_bind_int64(s, 18, xp_i64(r->c.end_ns));
    xp_ig_bind_stack(s, 19, stack);
    return xp_ig_run(ig, S_GRAPH_NODE);
}

/* A block event: keyed by its number, so one stored again (a journal
 * recovered twice) is counted, never doubled. */
static int xp_store_block(xp_ingest *ig, const xp_rec_block *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    sqlite3_stmt *s = ig->st[S_BLOCK];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->seq);
    sqlite3_bind_int(s, 2, r->op);
    sqlite3_bind_int(s, 3, r->allocator);
    sqlite3_bind_int(s, 4, r->c.device);
    sqlite3_bind_int64(s, 5, xp_i64(r->ptr));
    sqlite3_bind_int64(s, 6, xp_i64(r->bytes));
    sqlite3_bind_int64(s, 7, xp_i64(r->c.start_ns));
    sqlite3_bind_int64(s, 8, r->c.h.tid);
    xp_ig_bind_stack(s, 9, stack);
    sqlite3_bind_int64(s, 10, xp_i64(r->allocated));
    sqlite3_bind_int64(s, 11, xp_i64(r->reserved_bytes));
    return xp_run_keyed(ig, S_BLOCK);
}

/* call_sites.id of call c: its api, status, device, thread, stream and stack,
 * with the parts only some records have (syncs and memsets pass 0 for what
 * they lack, and kind 255: none).  Returns the id or -1. */
static sqlite3_int64 xp_call_site(xp_ingest *ig, const xp_call *c, uint64_t stream,
                                  sqlite3_int64 stack, uint8_t direction, uint8_t host_mem,
                                  uint8_t blocking, uint8_t kind)
{
    site_key k;
    memset(&k, 0, sizeof k); /* padding too: keys are compared with memcmp */
    k.api = c->h.api;
    k.status = c->status;
    k.device = c->device;
    k.tid = c->h.tid;
    k.stream = xp_i64(stream);
    k.stack = stack;
    k.direction = direction;
    k.host_mem = host_mem;
    k.blocking = blocking;
    k.kind = kind;
    return xp_ig_site_ref(ig, &k);
}

static int xp_store_copy(xp_ingest *ig, const xp_rec_copy *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    sqlite3_int64 site =
        xp_call_site(ig, &r->c, r->stream, stack, r->direction, r->host_mem, r->blocking, r->kind);
    if (site < 0)
        return -1;
    /* A failed copy's error row names it: its id is needed now. */
    if (r->c.status != 0 && xp_ig_flush(ig, &ig->copies) != 0)
        return -1;
    uint16_t *nulls;
    sqlite3_int64 *v = xp_row(ig, &ig->copies, &nulls);
    if (v == NULL)
        return -1;
    v[0] = site;
    v[1] = xp_i64(r->bytes);
    v[2] = xp_i64(r->src);
    v[3] = xp_i64(r->dst);
    v[4] = xp_i64(r->c.start_ns);
    v[5] = xp_i64(r->c.end_ns - r->c.start_ns);
    /* A version 1 record (88 bytes) ends before kernel_seq and fingerprint;
     * its fingerprint_kind byte was reserved, zero.  A version 2 one (104)
     * before nvtx_range. */
    bool v2 = r->c.h.size >= XP_REC_COPY_V2_SIZE;
    unsigned fp_kind = r->fingerprint_kind;
    v[6] = v2 ? xp_i64(r->kernel_seq) : 0;
    v[7] = v2 ? xp_i64(r->fingerprint) : 0;
    v[8] = fp_kind;
    if (!v2)
        *nulls |= 1u << 6;
    if (!v2 || (fp_kind != XP_FP_FULL && fp_kind != XP_FP_SAMPLED))
        *nulls |= 1u << 7 | 1u << 8;
    xp_nvtx_cell(v, nulls, 9, r->c.h.size >= XP_REC_COPY_V3_SIZE ? r->nvtx_range : 0);
    /* Version 4: the full hash confirming a sampled upload, NULL when not taken. */
    v[10] = r->c.h.size >= XP_REC_COPY_V4_SIZE ? xp_i64(r->full_fingerprint) : 0;
    if (v[10] == 0)
        *nulls |= 1u << 10;
    /* Version 7: the graph node a launch ran, and the launch's stack. */
    bool v7 = r->c.h.size >= sizeof *r;
    if (xp_graph_cells(ig, v, nulls, 11, v7 ? r->graph_node : 0, v7 ? r->launch_stack_id : 0) != 0)
        return -1;
    if (r->c.status == 0)
        return 0;
    if (xp_ig_flush(ig, &ig->copies) != 0)
        return -1;
    char detail[160];
    snprintf(detail, sizeof detail, "%s %" PRIu64 " bytes src 0x%" PRIx64 " dst 0x%" PRIx64,
             xp_dir_name(r->direction), r->bytes, r->src, r->dst);
    return xp_error_row(ig, &r->c, stack, sqlite3_last_insert_rowid(ig->db), detail);
}

static int xp_store_alloc(xp_ingest *ig, const xp_rec_alloc *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    if (r->c.status != 0) {
        char detail[160];
        if (r->mem_total != 0)
            snprintf(detail, sizeof detail,
                     "requested %" PRIu64 " bytes; device free %" PRIu64 " of %" PRIu64,
                     r->bytes, r->mem_free, r->mem_total);
        else
            snprintf(detail, sizeof detail, "requested %" PRIu64 " bytes", r->bytes);
        return xp_error_row(ig, &r->c, stack, 0, detail);
    }
    /* A successful allocation without an id cannot be paired with its
     * free; one whose id is taken was stored already (or the journal is
     * damaged).  Either is counted, never stored twice. */
    if (r->alloc_id == 0 || r->alloc_id > INT64_MAX) {
        ig->lost_malformed++;
        return 0;
    }
    sqlite3_stmt *s = ig->st[S_ALLOC];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->alloc_id);
    sqlite3_bind_int(s, 2, r->c.h.api);
    sqlite3_bind_int(s, 3, r->kind);
    sqlite3_bind_int(s, 4, r->c.device);
    sqlite3_bind_int64(s, 5, xp_i64(r->ptr));
    sqlite3_bind_int64(s, 6, xp_i64(r->bytes));
    sqlite3_bind_int64(s, 7, xp_i64(r->c.start_ns));
    sqlite3_bind_int64(s, 8, xp_i64(r->c.end_ns));
    sqlite3_bind_int64(s, 9, r->c.h.tid);
    xp_ig_bind_stack(s, 10, stack);
    return xp_run_keyed(ig, S_ALLOC);
}

static int xp_store_free(xp_ingest *ig, const xp_rec_free *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    if (r->c.status != 0) {
        /* A failed free frees nothing, whatever it names. */
        char detail[64];
        snprintf(detail, sizeof detail, "ptr 0x%" PRIx64, r->ptr);
        return xp_error_row(ig, &r->c, stack, 0, detail);
    }
    if (r->alloc_id == 0) {
        if (r->ptr == 0)
            return 0;   /* freeing NULL: nothing happened */
        sqlite3_stmt *s = ig->st[S_UNKNOWN_FREE];
        sqlite3_bind_int(s, 1, r->c.h.api);
        sqlite3_bind_int64(s, 2, xp_i64(r->ptr));
        sqlite3_bind_int(s, 3, r->kind);
        sqlite3_bind_int(s, 4, r->c.device);
        sqlite3_bind_int64(s, 5, r->c.h.tid);
        sqlite3_bind_int64(s, 6, xp_i64(r->c.start_ns));
        sqlite3_bind_int64(s, 7, xp_i64(r->c.end_ns));
        xp_ig_bind_stack(s, 8, stack);
        return xp_ig_run(ig, S_UNKNOWN_FREE);
    }
    if (r->alloc_id > INT64_MAX) {
        ig->lost_malformed++;
        return 0;
    }
    sqlite3_stmt *s = ig->st[S_FREE];
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->alloc_id);
    sqlite3_bind_int(s, 2, r->c.h.api);
    sqlite3_bind_int64(s, 3, xp_i64(r->c.start_ns));
    sqlite3_bind_int64(s, 4, xp_i64(r->c.end_ns));
    sqlite3_bind_int64(s, 5, r->c.h.tid);
    xp_ig_bind_stack(s, 6, stack);
    return xp_run_keyed(ig, S_FREE);
}

static int xp_store_sync(xp_ingest *ig, const xp_rec_sync *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    sqlite3_int64 site = xp_call_site(ig, &r->c, r->stream, stack, 0, 0, 0, 255);
    if (site < 0)
        return -1;
    uint16_t *nulls;
    sqlite3_int64 *v = xp_row(ig, &ig->syncs, &nulls);
    if (v == NULL)
        return -1;
    v[0] = site;
    v[1] = xp_i64(r->c.start_ns);
    v[2] = xp_i64(r->c.end_ns - r->c.start_ns);
    xp_nvtx_cell(v, nulls, 3, r->c.h.size >= XP_REC_SYNC_V3_SIZE ? r->nvtx_range : 0);
    /* Version 4: the copy this sync completed (NULLs when none, or an older record). */
    bool v4 = r->c.h.size >= sizeof *r && r->copy_start_ns != 0;
    unsigned fp_kind = v4 ? r->fingerprint_kind : 0;
    v[4] = v4 ? xp_i64(r->copy_start_ns) : 0;
    v[5] = xp_i64(r->fingerprint);
    v[6] = fp_kind;
    if (!v4)
        *nulls |= 1u << 4;
    if (fp_kind != XP_FP_FULL && fp_kind != XP_FP_SAMPLED)
        *nulls |= 1u << 5 | 1u << 6;
    if (r->c.status == 0)
        return 0;
    char detail[64];
    if (r->c.h.api == XP_API_cudaEventSynchronize)
        snprintf(detail, sizeof detail, "event 0x%" PRIx64, r->stream);
    else if (r->c.h.api == XP_API_cudaDeviceSynchronize)
        snprintf(detail, sizeof detail, "device %d", (int)r->c.device);
    else
        snprintf(detail, sizeof detail, "stream 0x%" PRIx64, r->stream);
    return xp_error_row(ig, &r->c, stack, 0, detail);
}

static int xp_store_memset(xp_ingest *ig, const xp_rec_memset *r)
{
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    sqlite3_int64 site = xp_call_site(ig, &r->c, r->stream, stack, 0, r->host_mem, r->blocking, 255);
    if (site < 0)
        return -1;
    sqlite3_stmt *s = ig->st[S_MEMSET];
    sqlite3_bind_int64(s, 1, site);
    sqlite3_bind_int64(s, 2, xp_i64(r->bytes));
    sqlite3_bind_int64(s, 3, xp_i64(r->dst));
    sqlite3_bind_int(s, 4, r->value);
    sqlite3_bind_int64(s, 5, xp_i64(r->kernel_seq));
    sqlite3_bind_int64(s, 6, xp_i64(r->c.start_ns));
    sqlite3_bind_int64(s, 7, xp_i64(r->c.end_ns - r->c.start_ns));
    xp_bind_nonzero(s, 8, r->c.h.size >= XP_REC_MEMSET_V3_SIZE ? r->nvtx_range : 0);
    bool v7 = r->c.h.size >= sizeof *r;
    sqlite3_int64 cells[2];
    uint16_t nulls = 0;
    if (xp_graph_cells(ig, cells, &nulls, 0, v7 ? r->graph_node : 0,
                       v7 ? r->launch_stack_id : 0) != 0)
        return -1;
    for (unsigned i = 0; i < 2; i++)
        if (nulls & (1u << i))
            sqlite3_bind_null(s, 9 + (int)i);
        else
            sqlite3_bind_int64(s, 9 + (int)i, cells[i]);
    if (xp_ig_run(ig, S_MEMSET) != 0)
        return -1;
    if (r->c.status == 0)
        return 0;
    char detail[160];
    snprintf(detail, sizeof detail, "memset %" PRIu64 " bytes dst 0x%" PRIx64 " value %d",
             r->bytes, r->dst, (int)r->value);
    return xp_error_row(ig, &r->c, stack, 0, detail);
}

static int xp_store_call(xp_ingest *ig, const xp_rec_call *r)
{
    if (r->c.status == 0)
        return 0;   /* only failures are recorded; a success says nothing */
    sqlite3_int64 stack = xp_stack_ref(ig, r->c.stack_id);
    if (stack < 0)
        return -1;
    char detail[64];
    snprintf(detail, sizeof detail, "arg 0x%" PRIx64, r->arg0);
    return xp_error_row(ig, &r->c, stack, 0, detail);
}

static int xp_store_stack(xp_ingest *ig, const xp_rec_stack *r)
{
    if (r->stack_id == 0 || r->depth > XP_MAX_FRAMES ||
        sizeof *r + (size_t)r->depth * 8u > r->h.size || !xp_ingest_py_stack_ok(r)) {
        ig->lost_malformed++;
        return 0;
    }
    /* frames: little-endian uint64 whatever the host, so a database reads
     * the same on any machine. */
    uint8_t buf[XP_MAX_FRAMES * 8];
    const uint8_t *src = (const uint8_t *)(r + 1);
    for (uint32_t i = 0; i < r->depth; i++) {
        uint64_t v;
        memcpy(&v, src + 8u * i, 8);
        for (int b = 0; b < 8; b++)
            buf[8u * i + (unsigned)b] = (uint8_t)(v >> (8 * b));
    }
    sqlite3_stmt *s = ig->st[S_STACK_SET];
    sqlite3_bind_int64(s, 1, xp_i64(r->stack_id));
    sqlite3_bind_int(s, 2, (int)r->depth);
    sqlite3_bind_blob(s, 3, buf, (int)(r->depth * 8u), SQLITE_TRANSIENT);
    uint8_t py[XP_PY_MAX_FRAMES * XP_PYFRAME_BLOB];
    if (r->py_depth)
        sqlite3_bind_blob(s, 4, py, (int)xp_ingest_py_frames(r, py), SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 4);
    return xp_ig_run(ig, S_STACK_SET);
}

static int xp_store_pycode(xp_ingest *ig, const xp_rec_pycode *r)
{
    if (!xp_ingest_py_bind_code(ig->st[S_PYCODE], r)) {
        ig->lost_malformed++;
        return 0;
    }
    return xp_ig_run(ig, S_PYCODE);   /* written again (a full seen-set): no loss */
}

static int xp_store_module(xp_ingest *ig, const xp_rec_module *r)
{
    if (r->build_id_len > sizeof r->build_id || sizeof *r + r->path_len + 1u > r->h.size) {
        ig->lost_malformed++;
        return 0;
    }
    char hex[2 * sizeof r->build_id + 1];
    for (unsigned i = 0; i < r->build_id_len; i++)
        snprintf(hex + 2 * i, 3, "%02x", r->build_id[i]);
    hex[2 * r->build_id_len] = '\0';
    sqlite3_stmt *s = ig->st[S_MODULE];
    sqlite3_bind_text(s, 1, (const char *)(r + 1), r->path_len, SQLITE_TRANSIENT);
    sqlite3_bind_int64(s, 2, xp_i64(r->base));
    sqlite3_bind_int64(s, 3, xp_i64(r->size));
    sqlite3_bind_int64(s, 4, xp_i64(r->low));
    if (r->build_id_len)
        sqlite3_bind_text(s, 5, hex, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, 5);
    return xp_ig_run(ig, S_MODULE);
}

static int xp_store_meta(xp_ingest *ig, const xp_rec_meta *r)
{
    size_t need = sizeof *r + (size_t)r->key_len + 1 + (size_t)r->value_len + 1;
    if (r->key_len == 0 || need > r->h.size) {
        ig->lost_malformed++;
        return 0;
    }
    const char *key = (const char *)(r + 1);
    const char *value = key + r->key_len + 1;
    /* Keys the database keeps itself: the schema's version is not the
     * profiled process's to set, and loss counts add up rather than
     * replace one another. */
    if (r->key_len == 14 && memcmp(key, "schema_version", 14) == 0)
        return 0;
    if (r->key_len == 12 && memcmp(key, "records_lost", 12) == 0) {
        char num[32];
        size_t n = r->value_len < sizeof num - 1 ? r->value_len : sizeof num - 1;
        memcpy(num, value, n);
        num[n] = '\0';
        char *end = NULL;
        errno = 0;
        unsigned long long v = strtoull(num, &end, 10);
        if (end == num || *end != '\0' || errno != 0) {
            ig->lost_malformed++;
            return 0;
        }
        char reason[96];
        snprintf(reason, sizeof reason, "%llu record(s) reported lost by the profiled process", v);
        return xp_ig_lost_in_txn(ig, v, reason);
    }
    if (r->key_len == 19 && memcmp(key, "records_lost_reason", 19) == 0) {
        char reason[XP_MAX_REASON / 4];
        size_t n = r->value_len < sizeof reason - 1 ? r->value_len : sizeof reason - 1;
        memcpy(reason, value, n);
        reason[n] = '\0';
        if (reason[0] == '\0')
            return 0;
        sqlite3_bind_text(ig->st[S_LOST_REASON], 1, reason, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int(ig->st[S_LOST_REASON], 2, XP_MAX_REASON);
        return xp_ig_run(ig, S_LOST_REASON);
    }
    sqlite3_stmt *s = ig->st[S_META];
    sqlite3_bind_text(s, 1, key, r->key_len, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, value, (int)r->value_len, SQLITE_TRANSIENT);
    return xp_ig_run(ig, S_META);
}

/* Stores one record.  Returns 0 (stored, or counted as lost when it cannot
 * be: the journal is the profiled process's and may be damaged) or -1 when
 * the database failed. */
int xp_ig_store(xp_ingest *ig, const xp_rec_header *h)
{
    /* Damaged bytes the reader skipped (XP_REC_DAMAGED is no type the
     * validator knows), or values no writer produces: never stored. */
    if (xp_validate_record(h) != NULL) {
        ig->lost_corrupt++;
        return 0;
    }
    /* A call that ends before it starts by no more than clock noise (the
     * validator refuses more) is stored as taking no time and counted in meta
     * times_fixed: a negative duration would be nonsense in every sum and
     * report. */
    _Alignas(8) unsigned char fixed[256];
    switch ((xp_rec_type)h->type) {
    case XP_REC_COPY: case XP_REC_ALLOC: case XP_REC_FREE: case XP_REC_SYNC:
    case XP_REC_CALL: case XP_REC_MEMSET: case XP_REC_GRAPH_NODE: case XP_REC_BLOCK: {
        const xp_call *c = (const xp_call *)h;
        if (c->end_ns >= c->start_ns && c->start_ns <= INT64_MAX && c->end_ns <= INT64_MAX)
            break;
        if (h->size > sizeof fixed || c->start_ns > INT64_MAX) {
            ig->lost_malformed++;
            return 0;
        }
        memcpy(fixed, h, h->size);
        ((xp_call *)fixed)->end_ns = c->start_ns;
        h = (const xp_rec_header *)fixed;
        ig->times_fixed++;
        break;
    }
    default:
        break;
    }
    switch ((xp_rec_type)h->type) {
    case XP_REC_COPY: return xp_store_copy(ig, (const xp_rec_copy *)h);
    case XP_REC_ALLOC: return xp_store_alloc(ig, (const xp_rec_alloc *)h);
    case XP_REC_FREE: return xp_store_free(ig, (const xp_rec_free *)h);
    case XP_REC_SYNC: return xp_store_sync(ig, (const xp_rec_sync *)h);
    case XP_REC_CALL: return xp_store_call(ig, (const xp_rec_call *)h);
    case XP_REC_MEMSET: return xp_store_memset(ig, (const xp_rec_memset *)h);
    case XP_REC_STACK: return xp_store_stack(ig, (const xp_rec_stack *)h);
    case XP_REC_MODULE: return xp_store_module(ig, (const xp_rec_module *)h);
    case XP_REC_META: return xp_store_meta(ig, (const xp_rec_meta *)h);
    case XP_REC_NVTX: return xp_store_nvtx(ig, (const xp_rec_nvtx *)h);
    case XP_REC_NAME: return xp_store_name(ig, (const xp_rec_name *)h);
    case XP_REC_PYCODE: return xp_store_pycode(ig, (const xp_rec_pycode *)h);
    case XP_REC_GRAPH_NODE: return xp_store_graph_node(ig, (const xp_rec_graph_node *)h);
    case XP_REC_BLOCK: return xp_store_block(ig, (const xp_rec_block *)h);
    case XP_REC_PAD:       /* the reader never delivers it */
    case XP_REC_DAMAGED: break;
    }
    ig->lost_corrupt++;
    return 0;
}
