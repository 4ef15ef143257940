/* xp_registry.c: sorted arrays of ranges behind sequence locks. */
#include "xp_registry.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

/* Reserved once and never moved, so a reader racing a writer reads mapped
 * memory (then retries); MAP_NORESERVE keeps the unused tail free. */
#define REGISTRY_CAPACITY (1u << 20)

typedef struct slot {
    _Atomic uint64_t base, size, alloc_id;
    _Atomic uint32_t kind;
    _Atomic int32_t device;
} slot;

/* One table of ranges.  Owned by the writers under writer_lock; readers
 * only load atomically. */
typedef struct table {
    slot *slots;
    _Atomic uint64_t count;
    _Atomic uint64_t seq;          /* odd while a writer is changing slots */
    _Atomic uint64_t *generation;  /* xp_registry_gen for the memory table */
    pthread_mutex_t writer_lock;
    pthread_once_t map_once;
} table;

_Atomic uint64_t xp_registry_gen;
static _Atomic uint64_t handles_gen;

/* The two tables (see xp_registry.h), by xp_table. */
static table tables[] = {
    [XP_TABLE_MEMORY] = {.generation = &xp_registry_gen, .writer_lock = PTHREAD_MUTEX_INITIALIZER,
                         .map_once = PTHREAD_ONCE_INIT},
    [XP_TABLE_HANDLES] = {.generation = &handles_gen, .writer_lock = PTHREAD_MUTEX_INITIALIZER,
                          .map_once = PTHREAD_ONCE_INIT},
};

static slot *map_table(void)
{
    void *p = mmap(NULL, (size_t)REGISTRY_CAPACITY * sizeof(slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* pthread_once takes no argument: one initializer per table. */
static void map_memory(void)
{
    tables[XP_TABLE_MEMORY].slots = map_table();
}

static void map_handles(void)
{
    tables[XP_TABLE_HANDLES].slots = map_table();
}

static void (*const mappers[])(void) = {[XP_TABLE_MEMORY] = map_memory,
                                        [XP_TABLE_HANDLES] = map_handles};

static void load_slot(const slot *slots, size_t i, xp_range *r)
{
    r->base = atomic_load_explicit(&slots[i].base, memory_order_relaxed);
    r->size = atomic_load_explicit(&slots[i].size, memory_order_relaxed);
    r->alloc_id = atomic_load_explicit(&slots[i].alloc_id, memory_order_relaxed);
    r->kind = (uint8_t)atomic_load_explicit(&slots[i].kind, memory_order_relaxed);
    r->device = atomic_load_explicit(&slots[i].device, memory_order_relaxed);
}

static void store_slot(slot *slots, size_t i, const xp_range *r)
{
    atomic_store_explicit(&slots[i].base, r->base, memory_order_relaxed);
    atomic_store_explicit(&slots[i].size, r->size, memory_order_relaxed);
    atomic_store_explicit(&slots[i].alloc_id, r->alloc_id, memory_order_relaxed);
    atomic_store_explicit(&slots[i].kind, r->kind, memory_order_relaxed);
    atomic_store_explicit(&slots[i].device, r->device, memory_order_relaxed);
}

static uint64_t base_at(const slot *slots, size_t i)
{
    return atomic_load_explicit(&slots[i].base, memory_order_relaxed);
}

/* First index whose base is > addr (writer side, or inside a read section). */
static size_t upper_bound(const slot *slots, uint64_t addr, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (base_at(slots, mid) <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void write_begin(table *t)
{
    pthread_mutex_lock(&t->writer_lock);
    atomic_fetch_add_explicit(&t->seq, 1, memory_order_acq_rel);
}

static void write_end(table *t)
{
    atomic_fetch_add_explicit(&t->seq, 1, memory_order_release);
    atomic_fetch_add_explicit(t->generation, 1, memory_order_relaxed);
    pthread_mutex_unlock(&t->writer_lock);
}

static void move_slots(slot *slots, size_t to, size_t from, size_t n)
{
    xp_range r;
    if (to < from) {
        for (size_t k = 0; k < n; k++) {
            load_slot(slots, from + k, &r);
            store_slot(slots, to + k, &r);
        }
    } else {
        for (size_t k = n; k-- > 0;) {
            load_slot(slots, from + k, &r);
            store_slot(slots, to + k, &r);
        }
    }
}

bool xp_table_add(xp_table which, const xp_range *r)
{
    table *t = &tables[which];
    pthread_once(&t->map_once, mappers[which]);
    slot *slots = t->slots;
    if (slots == NULL || r->size == 0)
        return false;
    write_begin(t);
    size_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
    /* Drop stale ranges overlapping the new one. */
    size_t i = upper_bound(slots, r->base, n);
    if (i > 0) {
        xp_range prev;
        load_slot(slots, i - 1, &prev);
        if (prev.base + prev.size > r->base)
            i--;
    }
    size_t j = i;
    while (j < n && base_at(slots, j) < r->base + r->size)
        j++;
    bool ok = true;
    if (j - i == 0 && n == REGISTRY_CAPACITY) {
        ok = false;
    } else {
        /* Replace [i, j) by the one new range. */
        if (j - i != 1) {
            move_slots(slots, i + 1, j, n - j);
            n = n - (j - i) + 1;
        }
        store_slot(slots, i, r);
        atomic_store_explicit(&t->count, n, memory_order_relaxed);
    }
    write_end(t);
    return ok;
}

bool xp_table_remove(xp_table which, uint64_t base, unsigned kinds, xp_range *out)
{
    table *t = &tables[which];
    slot *slots = t->slots;
    if (slots == NULL)
        return false;
    bool found = false;
    write_begin(t);
    size_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
    size_t i = upper_bound(slots, base, n);
    if (i > 0 && base_at(slots, i - 1) == base) {
        xp_range r;
        load_slot(slots, i - 1, &r);
        if (kinds & (1u << r.kind)) {
            *out = r;
            move_slots(slots, i - 1, i, n - i);
            atomic_store_explicit(&t->count, n - 1, memory_order_relaxed);
            found = true;
        }
    }
    write_end(t);
    return found;
}

bool xp_table_lookup(xp_table which, uint64_t addr, xp_range *out)
{
    const table *t = &tables[which];
    const slot *slots = t->slots;
    if (slots == NULL)
        return false;
    for (;;) {
        uint64_t s0 = atomic_load_explicit(&t->seq, memory_order_acquire);
        if (s0 & 1)
            continue;
        size_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
        bool found = false;
        if (n <= REGISTRY_CAPACITY) {
            size_t i = upper_bound(slots, addr, n);
            if (i > 0) {
                load_slot(slots, i - 1, out);
                found = addr - out->base < out->size;
            }
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&t->seq, memory_order_relaxed) == s0)
            return found;
    }
}

/* First index whose base is >= addr (inside a read section). */
static size_t lower_bound(const slot *slots, uint64_t addr, size_t n)
{
    return addr == 0 ? 0 : upper_bound(slots, addr - 1, n);
}

bool xp_table_next(xp_table which, uint64_t from, xp_range *out)
{
    const table *t = &tables[which];
    const slot *slots = t->slots;
    if (slots == NULL)
        return false;
    for (;;) {
        uint64_t s0 = atomic_load_explicit(&t->seq, memory_order_acquire);
        if (s0 & 1)
            continue;
        size_t n = atomic_load_explicit(&t->count, memory_order_relaxed);
        bool found = false;
        if (n <= REGISTRY_CAPACITY) {
            size_t i = lower_bound(slots, from, n);
            if (i < n) {
                load_slot(slots, i, out);
                found = true;
            }
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&t->seq, memory_order_relaxed) == s0)
            return found;
    }
}

static void table_clear(table *t)
{
    if (t->slots == NULL)
        return;
    write_begin(t);
    atomic_store_explicit(&t->count, 0, memory_order_relaxed);
    write_end(t);
}

void xp_registry_clear(void)
{
    table_clear(&tables[XP_TABLE_MEMORY]);
    table_clear(&tables[XP_TABLE_HANDLES]);
}
