/* xp_registry.h: the address ranges the preload has seen allocated (device
 * memory, pinned and registered host memory, managed memory), so that a copy's
 * pointers are classified without asking the driver. */
#ifndef XP_REGISTRY_H
#define XP_REGISTRY_H

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

/* Adds a range (replacing any it overlaps: the driver has reused the
 * addresses, so what we knew is stale).  False when the table is full. */
bool xp_registry_add(const xp_range *r);

/* Removes the range of a kind in `kinds` (bit 1 << xp_alloc_kind) starting
 * exactly at base, returning it in *out.  False if there is none. */
bool xp_registry_remove(uint64_t base, unsigned kinds, xp_range *out);

/* The range containing addr.  Lock-free for readers (a sequence lock), so
 * the copy hooks never wait for an allocation on another thread. */
bool xp_registry_lookup(uint64_t addr, xp_range *out);

/* Bumped on every change: lets per-thread caches of negative answers
 * ("this page is pageable") know when to forget them. */
uint64_t xp_registry_generation(void);

/* Drops every entry of both tables (context reset). */
void xp_registry_clear(void);

/* The second table: allocations that are no memory at their address
 * (reserved address ranges keyed by their base, physical allocation
 * handles keyed by the handle's value, size 1).  Apart from the first, so
 * that classifying a copy's pointers never finds them, and a mapping
 * inside a reservation does not replace the reservation.  Same semantics
 * as the functions above; a lookup finds the entry containing key. */
bool xp_handles_add(const xp_range *r);
bool xp_handles_remove(uint64_t key, unsigned kinds, xp_range *out);
bool xp_handles_lookup(uint64_t key, xp_range *out);

#endif
