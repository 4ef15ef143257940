/* xp_stack.c: unw_backtrace into a buffer on the stack, XXH3 of the frames as
 * the id, and a lock-free set of ids already written. */
#include "xp_stack.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <link.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xxhash.h>

/* Open addressing over ids seen; 0 marks an empty slot.  A full table (or a
 * long probe) only means a stack is written again, which ingest ignores. */
#define SEEN_SLOTS (1u << 16)
#define SEEN_PROBES 16
static _Atomic uint64_t seen[SEEN_SLOTS];

/* The preload's own text, [self_lo, self_hi): frames there are ours. */
static uintptr_t self_lo, self_hi;

static int find_self(struct dl_phdr_info *info, size_t size, void *data)
{
    uintptr_t probe = (uintptr_t)data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (probe >= lo && probe < hi) {
            self_lo = lo;
            self_hi = hi;
            return 1;
        }
    }
    return 0;
}

void xp_stack_init(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&xp_stack_init);
}

void xp_stack_reset(void)
{
    for (size_t i = 0; i < SEEN_SLOTS; i++)
        atomic_store_explicit(&seen[i], 0, memory_order_relaxed);
}

/* True if this call claimed id (so the caller must write the record). */
static int claim(uint64_t id)
{
    size_t i = (size_t)(id & (SEEN_SLOTS - 1));
    for (int p = 0; p < SEEN_PROBES; p++, i = (i + 1) & (SEEN_SLOTS - 1)) {
        uint64_t cur = atomic_load_explicit(&seen[i], memory_order_relaxed);
        if (cur == id)
            return 0;
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&seen[i], &expected, id))
                return 1;
            if (expected == id)
                return 0;
        }
    }
    return 1;
}

uint64_t xp_stack_capture(xp_journal *j, int depth)
{
    if (depth <= 0)
        return 0;
    /* Ours are at most a few frames deep; capture that many more. */
    enum { OWN_FRAMES = 8 };
    void *buf[XP_MAX_FRAMES + OWN_FRAMES];
    int want = depth + OWN_FRAMES;
    if (want > (int)(sizeof buf / sizeof buf[0]))
        want = (int)(sizeof buf / sizeof buf[0]);
    int n = unw_backtrace(buf, want);
    int first = 0;
    while (first < n && (uintptr_t)buf[first] >= self_lo && (uintptr_t)buf[first] < self_hi)
        first++;
    int got = n - first;
    if (got > depth)
        got = depth;
    if (got <= 0)
        return 0;
    uint64_t frames[XP_MAX_FRAMES];
    for (int i = 0; i < got; i++)
        frames[i] = (uint64_t)(uintptr_t)buf[first + i];
    uint64_t id = XXH3_64bits(frames, (size_t)got * sizeof frames[0]);
    if (id == 0)
        id = 1;
    if (claim(id)) {
        uint32_t size = xp_record_size(sizeof(xp_rec_stack) + (size_t)got * 8);
        xp_rec_stack *r = xp_journal_reserve(j, size);
        if (r != NULL) {
            r->h.type = XP_REC_STACK;
            r->h.size = size;
            r->h.tid = (uint32_t)syscall(SYS_gettid);
            r->stack_id = id;
            r->depth = (uint32_t)got;
            memcpy(r + 1, frames, (size_t)got * 8);
            xp_journal_commit(r);
        }
    }
    return id;
}
