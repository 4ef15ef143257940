/* xp_validate.c: whether a journal record's values can be true, before the ingest stores them. */
#include "xp_validate.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Whether size is one a writer of some version produced for a fixed-size
 * type: sizes[0..n). */
static bool xp_size_in(uint32_t size, const uint32_t *sizes, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (size == sizes[i])
            return true;
    return false;
}

/* Whether [start, start + bytes) is an address range: no wrap past 2^64. */
static bool xp_range_ok(uint64_t start, uint64_t bytes)
{
    return bytes <= INT64_MAX && start <= UINT64_MAX - bytes;
}

/* A record of trailing strings: its size is what they need, rounded up to 8,
 * exactly as every writer makes it (xp_record_size). */
static bool xp_tail_size_ok(const xp_rec_header *h, size_t need)
{
    return need <= XP_MAX_RECORD && h->size == xp_record_size(need);
}

/* Whether the len bytes at p end with a NUL after them. */
static bool xp_terminated(const char *p, size_t len)
{
    return p[len] == '\0';
}

static const char *xp_check_call(const xp_call *c)
{
    /* An API id this build does not know is a newer build's: stored, and
     * named by number. */
    if (c->start_ns > INT64_MAX || c->end_ns > INT64_MAX)
        return "time past INT64_MAX";
    if (c->end_ns < c->start_ns && c->start_ns - c->end_ns > XP_CLOCK_NOISE_NS)
        return "ends before it starts";
    return NULL;
}

static const char *xp_check_copy(const xp_rec_copy *r)
{
    static const uint32_t sizes[] = {XP_REC_COPY_V1_SIZE, XP_REC_COPY_V2_SIZE,
                                     XP_REC_COPY_V3_SIZE, XP_REC_COPY_V4_SIZE,
                                     sizeof(xp_rec_copy)};
    if (!xp_size_in(r->c.h.size, sizes, sizeof sizes / sizeof sizes[0]))
        return "size";
    if (r->direction > XP_DIR_H2H || r->host_mem > XP_HOST_MANAGED ||
        r->blocking > XP_BLOCK_ASYNC_PAGEABLE)
        return "enum out of range";
    /* A fingerprint kind this build does not know is stored as no
     * fingerprint (a newer build's kind), not refused. */
    /* A failed copy records what the program passed, sense or not. */
    if (r->c.status == 0 && (!xp_range_ok(r->src, r->bytes) || !xp_range_ok(r->dst, r->bytes)))
        return "byte count";
    return NULL;
}

static const char *xp_check_memset(const xp_rec_memset *r)
{
    static const uint32_t sizes[] = {XP_REC_MEMSET_V2_SIZE, XP_REC_MEMSET_V3_SIZE,
                                     sizeof(xp_rec_memset)};
    if (!xp_size_in(r->c.h.size, sizes, sizeof sizes / sizeof sizes[0]))
        return "size";
    if (r->host_mem > XP_HOST_MANAGED || r->blocking > XP_BLOCK_ASYNC_PAGEABLE)
        return "enum out of range";
    if (r->c.status == 0 && !xp_range_ok(r->dst, r->bytes))
        return "byte count";
    return NULL;
}

static const char *xp_check_graph_node(const xp_rec_graph_node *r)
{
    if (r->c.h.size != sizeof *r)
        return "size";
    if (r->node_id == 0 || r->node_id > INT64_MAX)
        return "node id";
    if (r->op < XP_GNODE_COPY || r->op > XP_GNODE_MEMSET || r->via < XP_GNODE_CAPTURE ||
        r->via > XP_GNODE_SET || r->direction > XP_DIR_H2H || r->host_mem > XP_HOST_MANAGED)
        return "enum out of range";
    if (r->c.status == 0 && (!xp_range_ok(r->src, r->bytes) || !xp_range_ok(r->dst, r->bytes)))
        return "byte count";
    return NULL;
}

static const char *xp_check_block(const xp_rec_block *r)
{
    if (r->c.h.size != sizeof *r)
        return "size";
    if (r->seq == 0 || r->seq > INT64_MAX)
        return "block number";
    if (r->op < XP_BLOCK_TAKEN || r->op > XP_BLOCK_RETURNED || r->allocator != XP_BLOCKS_PYTORCH)
        return "enum out of range";
    if (r->ptr == 0 || !xp_range_ok(r->ptr, r->bytes))
        return "byte count";
    return NULL;
}

static const char *xp_check_alloc(const xp_rec_alloc *r)
{
    if (r->c.h.size != sizeof *r)
        return "size";
    if (r->kind > XP_ALLOC_KIND_MAX)
        return "enum out of range";
    if (r->c.status != 0)
        return NULL;
    /* A PHYSICAL or ARRAY allocation's ptr is a handle, not an address. */
    if (r->bytes > INT64_MAX || (r->kind != XP_ALLOC_PHYSICAL && r->kind != XP_ALLOC_ARRAY &&
                                 !xp_range_ok(r->ptr, r->bytes)))
        return "byte count";
    return NULL;
}

static const char *xp_check_sync(const xp_rec_sync *r)
{
    static const uint32_t sizes[] = {XP_REC_SYNC_V2_SIZE, XP_REC_SYNC_V3_SIZE,
                                     sizeof(xp_rec_sync)};
    if (!xp_size_in(r->c.h.size, sizes, sizeof sizes / sizeof sizes[0]))
        return "size";
    if (r->c.h.size == sizeof *r && r->copy_start_ns > INT64_MAX)
        return "time past INT64_MAX";
    return NULL;
}

static const char *xp_check_stack(const xp_rec_stack *r)
{
    if (r->stack_id == 0)
        return "stack id 0";
    if (r->depth > XP_MAX_FRAMES || r->py_depth > XP_PY_MAX_FRAMES)
        return "stack deeper than the maximum";
    if (!xp_tail_size_ok(&r->h, sizeof *r + (size_t)r->depth * 8u +
                                    (size_t)r->py_depth * sizeof(xp_pyframe)))
        return "size";
    const unsigned char *py = (const unsigned char *)(r + 1) + (size_t)r->depth * 8u;
    for (uint32_t i = 0; i < r->py_depth; i++) {
        xp_pyframe f;
        memcpy(&f, py + (size_t)i * sizeof f, sizeof f);
        if (f.offset < -1 || (f.flags & ~XP_PYFRAME_ENTRY) != 0)
            return "Python frame";
    }
    return NULL;
}

static const char *xp_check_module(const xp_rec_module *r)
{
    if (r->build_id_len > sizeof r->build_id)
        return "build id length";
    if (!xp_tail_size_ok(&r->h, sizeof *r + (size_t)r->path_len + 1))
        return "size";
    if (!xp_terminated((const char *)(r + 1), r->path_len))
        return "string without its terminator";
    return NULL;
}

static const char *xp_check_meta(const xp_rec_meta *r)
{
    if (r->key_len == 0)
        return "empty key";
    if (!xp_tail_size_ok(&r->h, sizeof *r + (size_t)r->key_len + 1 + (size_t)r->value_len + 1))
        return "size";
    const char *key = (const char *)(r + 1);
    if (!xp_terminated(key, r->key_len) || !xp_terminated(key + r->key_len + 1, r->value_len))
        return "string without its terminator";
    return NULL;
}

static const char *xp_check_nvtx(const xp_rec_nvtx *r)
{
    if (r->h.size != sizeof *r)
        return "size";
    if (r->op < XP_NVTX_PUSH || r->op > XP_NVTX_END)
        return "enum out of range";
    if (r->range_id == 0 || r->range_id > INT64_MAX || r->time_ns > INT64_MAX)
        return "range id or time";
    return NULL;
}

static const char *xp_check_name(const xp_rec_name *r)
{
    if (r->hash == 0 || r->len > XP_NVTX_NAME_MAX)
        return "hash or length";
    if (!xp_tail_size_ok(&r->h, sizeof *r + (size_t)r->len + 1))
        return "size";
    if (!xp_terminated((const char *)(r + 1), r->len))
        return "string without its terminator";
    return NULL;
}

static const char *xp_check_pycode(const xp_rec_pycode *r)
{
    if (r->key == 0 || r->file_len > XP_PY_STR_MAX || r->name_len > XP_PY_STR_MAX ||
        r->table_len > XP_PY_TABLE_MAX)
        return "key or length";
    if (!xp_tail_size_ok(&r->h, sizeof *r + (size_t)r->file_len + 1 + (size_t)r->name_len + 1 +
                                    r->table_len))
        return "size";
    const char *file = (const char *)(r + 1);
    if (!xp_terminated(file, r->file_len) || !xp_terminated(file + r->file_len + 1, r->name_len))
        return "string without its terminator";
    return NULL;
}

const char *xp_validate_record(const xp_rec_header *h)
{
    if (h->size < sizeof *h || (h->size & 7u) != 0 || h->size > XP_MAX_RECORD)
        return "size";
    /* Each check reads only what the size check before it allowed. */
    static const uint32_t min_size[] = {
        [XP_REC_META] = sizeof(xp_rec_meta),   [XP_REC_MODULE] = sizeof(xp_rec_module),
        [XP_REC_STACK] = sizeof(xp_rec_stack), [XP_REC_COPY] = XP_REC_COPY_V1_SIZE,
        [XP_REC_ALLOC] = sizeof(xp_rec_alloc), [XP_REC_FREE] = sizeof(xp_rec_free),
        [XP_REC_SYNC] = XP_REC_SYNC_V2_SIZE,   [XP_REC_CALL] = sizeof(xp_rec_call),
        [XP_REC_MEMSET] = XP_REC_MEMSET_V2_SIZE,
        [XP_REC_NVTX] = sizeof(xp_rec_nvtx),   [XP_REC_NAME] = sizeof(xp_rec_name),
        [XP_REC_PYCODE] = sizeof(xp_rec_pycode),
        [XP_REC_GRAPH_NODE] = sizeof(xp_rec_graph_node),
        [XP_REC_BLOCK] = sizeof(xp_rec_block),
    };
    if (h->type == 0 || h->type >= sizeof min_size / sizeof min_size[0])
        return "unknown type";
    if (h->size < min_size[h->type])
        return "size";
    const char *why = NULL;
    switch ((xp_rec_type)h->type) {
    case XP_REC_COPY: case XP_REC_ALLOC: case XP_REC_FREE: case XP_REC_SYNC:
    case XP_REC_CALL: case XP_REC_MEMSET: case XP_REC_GRAPH_NODE: case XP_REC_BLOCK:
        why = xp_check_call((const xp_call *)h);
        break;
    default:
        break;
    }
    if (why != NULL)
        return why;
    switch ((xp_rec_type)h->type) {
    case XP_REC_COPY: return xp_check_copy((const xp_rec_copy *)h);
    case XP_REC_MEMSET: return xp_check_memset((const xp_rec_memset *)h);
    case XP_REC_ALLOC: return xp_check_alloc((const xp_rec_alloc *)h);
    case XP_REC_FREE:
        if (h->size != sizeof(xp_rec_free))
            return "size";
        return ((const xp_rec_free *)h)->kind > XP_ALLOC_KIND_MAX ? "enum out of range" : NULL;
    case XP_REC_SYNC: return xp_check_sync((const xp_rec_sync *)h);
    case XP_REC_CALL: return h->size == sizeof(xp_rec_call) ? NULL : "size";
    case XP_REC_STACK: return xp_check_stack((const xp_rec_stack *)h);
    case XP_REC_MODULE: return xp_check_module((const xp_rec_module *)h);
    case XP_REC_META: return xp_check_meta((const xp_rec_meta *)h);
    case XP_REC_NVTX: return xp_check_nvtx((const xp_rec_nvtx *)h);
    case XP_REC_NAME: return xp_check_name((const xp_rec_name *)h);
    case XP_REC_PYCODE: return xp_check_pycode((const xp_rec_pycode *)h);
    case XP_REC_GRAPH_NODE: return xp_check_graph_node((const xp_rec_graph_node *)h);
    case XP_REC_BLOCK: return xp_check_block((const xp_rec_block *)h);
    case XP_REC_PAD:       /* the reader never delivers it */
    case XP_REC_DAMAGED: break;
    }
    return "unknown type";
}
