/* xp_seen.h: a lock-free set of 64-bit ids already written to the journal,
 * for what the writer interns by hash (stacks, NVTX names). */
#ifndef XP_SEEN_H
#define XP_SEEN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Open addressing over ids seen; 0 marks an empty slot.  A full table (or a
 * long probe) only means an id is written again, which ingest ignores. */
#define XP_SEEN_PROBES 16

/* True if this call claimed id in set (slots: a power of two), so the caller
 * must write its record. */
static inline bool xp_seen_claim(_Atomic uint64_t *set, size_t slots, uint64_t id)
{
    size_t i = (size_t)(id & (slots - 1));
    for (int p = 0; p < XP_SEEN_PROBES; p++, i = (i + 1) & (slots - 1)) {
        uint64_t cur = atomic_load_explicit(&set[i], memory_order_relaxed);
        if (cur == id)
            return false;
        if (cur == 0) {
            uint64_t expected = 0;
            if (atomic_compare_exchange_strong(&set[i], &expected, id))
                return true;
            if (expected == id)
                return false;
        }
    }
    return true;
}

/* Forgets every id (a forked child writes a new journal). */
static inline void xp_seen_clear(_Atomic uint64_t *set, size_t slots)
{
    for (size_t i = 0; i < slots; i++)
        atomic_store_explicit(&set[i], 0, memory_order_relaxed);
}

#endif
