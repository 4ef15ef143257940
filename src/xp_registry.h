/* xp_registry.h: the address ranges the preload has seen allocated (device
 * memory, pinned and registered host memory, managed memory), so that a copy's
 * pointers are classified without asking the driver. */
#ifndef XP_REGISTRY_H
#define XP_REGISTRY_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "xp_format.h"

typedef struct xp_range {
    uint64_t base;
    uint64_t size;
    uint64_t alloc_id;        /* the ALLOC record's id */
    uint8_t kind;             /* xp_alloc_kind */
    int32_t device;
} xp_range;

/* The tables of ranges.  MEMORY: what copies are classified by, device
 * memory (mapped ranges included), pinned, registered and managed memory.
 * HANDLES: allocations that are no memory at their address, reserved
 * address ranges keyed by their base, physical allocation handles and CUDA
 * arrays keyed by the handle's value (size 1), kept apart so that classifying a copy's
 * pointers never finds them, and a mapping inside a reservation does not
 * replace the reservation. */
typedef enum xp_table { XP_TABLE_MEMORY = 0, XP_TABLE_HANDLES = 1 } xp_table;

/* Adds a range (replacing any it overlaps: the driver has reused the
 * addresses, so what we knew is stale).  False when the table is full. */
bool xp_table_add(xp_table t, const xp_range *r);

/* Removes the range of a kind in `kinds` (bit 1 << xp_alloc_kind) starting
 * exactly at base, returning it in *out.  False if there is none. */
bool xp_table_remove(xp_table t, uint64_t base, unsigned kinds, xp_range *out);

/* The range containing addr.  Lock-free for readers (a sequence lock), so
 * the copy hooks never wait for an allocation on another thread. */
bool xp_table_lookup(xp_table t, uint64_t addr, xp_range *out);

/* The first range whose base is at least `from` (lock-free, like
 * xp_table_lookup): walks a table in address order without holding it.
 * False past the last. */
bool xp_table_next(xp_table t, uint64_t from, xp_range *out);

/* The memory table, as most callers know it. */
static inline bool xp_registry_add(const xp_range *r)
{
    return xp_table_add(XP_TABLE_MEMORY, r);
}

static inline bool xp_registry_remove(uint64_t base, unsigned kinds, xp_range *out)
{
    return xp_table_remove(XP_TABLE_MEMORY, base, kinds, out);
}

static inline bool xp_registry_lookup(uint64_t addr, xp_range *out)
{
    return xp_table_lookup(XP_TABLE_MEMORY, addr, out);
}

/* Bumped on every change of the memory table: lets per-thread caches of
 * negative answers ("this page is pageable") know when to forget them.
 * Read inline by every copy (xp_classify.h). */
extern _Atomic uint64_t xp_registry_gen __attribute__((visibility("hidden")));

static inline uint64_t xp_registry_generation(void)
{
    return atomic_load_explicit(&xp_registry_gen, memory_order_relaxed);
}

/* Drops every entry of both tables (context reset). */
void xp_registry_clear(void);

#endif
