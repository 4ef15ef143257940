/* xp_blocks.c: the blocks a framework's caching allocator hands out and
 * takes back (PyTorch's, hooks/xp_torch_hooks.c), as BLOCK records: which
 * line of the program holds what the allocator's segments hold. */
#include "xp_engine.h"
#include "xp_engine_int.h"

#include <stdatomic.h>

#include "xp_journal.h"

/* The next event's number, for the whole process.  Taken inside the
 * allocator's report, which it makes holding its own lock: numbers follow
 * the allocator's order, in which a block returned is handed out again. */
static _Atomic uint64_t next_block_seq = 1;

void xp_record_block(const xp_scope *s, uint8_t allocator, bool taken, uint64_t ptr,
                     uint64_t bytes, uint64_t allocated, uint64_t reserved_bytes, int device)
{
    if (!s->recording)
        return;
    uint64_t seq = atomic_fetch_add_explicit(&next_block_seq, 1, memory_order_relaxed);
    xp_rec_block *r = xp_reserve_call(XP_REC_BLOCK, XP_API_NONE, sizeof *r, s, 0, device, NULL);
    if (r == NULL)
        return;
    r->seq = seq;
    r->ptr = ptr;
    r->bytes = bytes;
    r->allocated = allocated;
    r->reserved_bytes = reserved_bytes;
    r->op = taken ? XP_BLOCK_TAKEN : XP_BLOCK_RETURNED;
    r->allocator = allocator;
    for (unsigned i = 0; i < sizeof r->reserved; i++)
        r->reserved[i] = 0;
    xp_journal_commit(r);
}

void xp_blocks_after_fork(void)
{
    atomic_store_explicit(&next_block_seq, 1, memory_order_relaxed);
}
