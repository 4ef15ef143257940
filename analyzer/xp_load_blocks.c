/* xp_load_blocks.c: a caching allocator's blocks (block_rows, schema 3) into
 * the model: each block handed out, paired with its return. */
#include "xp_load.h"

#include <stdlib.h>

#include "xp_format.h"
#include "xp_schema.h"

static int xp_by_taken(const void *a, const void *b)
{
    const struct xp_alloc *x = a, *y = b;
    return (x->alloc_ns > y->alloc_ns) - (x->alloc_ns < y->alloc_ns);
}

int xp_load_blocks(sqlite3 *db, struct xp_process *p)
{
    sqlite3_stmt *st = NULL;
    /* A database from before schema 3 has none. */
    int has;
    int rc = xp_schema_has(db, "block_rows", &has);
    if (rc != SQLITE_OK)
        goto out;
    if (!has)
        return SQLITE_OK;
    /* By address, then in the allocator's order (the index's): a block's
     * return is the next event at its address, the pairing the blocks view
     * makes (src/xp_schema.c).  Not read through the view: its subquery per
     * block made a report of 200,000 blocks take 0.49 s and 167 MB instead
     * of 0.17 s and 46 MB. */
    rc = sqlite3_prepare_v2(db, "SELECT op, device, ptr, bytes, time_ns, stack, allocator "
                                "FROM block_rows ORDER BY allocator, device, ptr, id",
                            -1, &st, NULL);
    if (rc != SQLITE_OK)
        goto out;
    size_t cap = 0;
    struct xp_alloc *open = NULL;   /* the last block taken at this address, not yet returned */
    int64_t open_alloc = -1, open_dev = -1, open_ptr = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int op = sqlite3_column_int(st, 0);
        int64_t alloc = sqlite3_column_int64(st, 6), dev = sqlite3_column_int64(st, 1);
        int64_t ptr = sqlite3_column_int64(st, 2), t = sqlite3_column_int64(st, 4);
        bool same = open != NULL && alloc == open_alloc && dev == open_dev && ptr == open_ptr;
        if (op == XP_BLOCK_RETURNED) {
            if (same) {
                open->free_ns = t;
                open->free_stack = (uint32_t)sqlite3_column_int64(st, 5);
            }
            open = NULL;
            continue;
        }
        if (op != XP_BLOCK_TAKEN)
            continue;
        if (xp_grow(&p->blocks, &cap, p->n_blocks + 1, sizeof *p->blocks) != 0) {
            rc = SQLITE_NOMEM;
            goto out;
        }
        struct xp_alloc *b = &p->blocks[p->n_blocks++];
        *b = (struct xp_alloc){
            .alloc_ns = t, .alloc_end_ns = t, .free_ns = -1,
            .ptr = (uint64_t)ptr, .bytes = (uint64_t)sqlite3_column_int64(st, 3),
            .alloc_stack = (uint32_t)sqlite3_column_int64(st, 5),
            .device = (int32_t)dev, .kind = XP_AK_DEVICE,
        };
        open = b;
        open_alloc = alloc, open_dev = dev, open_ptr = ptr;
    }
    if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
        if (p->n_blocks > 1)
            qsort(p->blocks, p->n_blocks, sizeof *p->blocks, xp_by_taken);
    }
out:
    sqlite3_finalize(st);
    return rc;
}
