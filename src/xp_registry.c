/* xp_registry.c: a sorted array of ranges behind a sequence lock. */
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

/* Owned by the writers under writer_lock; readers only load atomically. */
static slot *slots;
static _Atomic uint64_t count;
static _Atomic uint64_t seq;          /* odd while a writer is changing slots */
static _Atomic uint64_t generation;
static pthread_mutex_t writer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t map_once = PTHREAD_ONCE_INIT;

static void map_slots(void)
{
    void *p = mmap(NULL, (size_t)REGISTRY_CAPACITY * sizeof(slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    slots = p == MAP_FAILED ? NULL : p;
}

static void load_slot(size_t i, xp_range *r)
{
    r->base = atomic_load_explicit(&slots[i].base, memory_order_relaxed);
    r->size = atomic_load_explicit(&slots[i].size, memory_order_relaxed);
    r->alloc_id = atomic_load_explicit(&slots[i].alloc_id, memory_order_relaxed);
    r->kind = (uint8_t)atomic_load_explicit(&slots[i].kind, memory_order_relaxed);
    r->device = atomic_load_explicit(&slots[i].device, memory_order_relaxed);
}

static void store_slot(size_t i, const xp_range *r)
{
    atomic_store_explicit(&slots[i].base, r->base, memory_order_relaxed);
    atomic_store_explicit(&slots[i].size, r->size, memory_order_relaxed);
    atomic_store_explicit(&slots[i].alloc_id, r->alloc_id, memory_order_relaxed);
    atomic_store_explicit(&slots[i].kind, r->kind, memory_order_relaxed);
    atomic_store_explicit(&slots[i].device, r->device, memory_order_relaxed);
}

static uint64_t base_at(size_t i)
{
    return atomic_load_explicit(&slots[i].base, memory_order_relaxed);
}

/* First index whose base is > addr (writer side, or inside a read section). */
static size_t upper_bound(uint64_t addr, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (base_at(mid) <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void write_begin(void)
{
    pthread_mutex_lock(&writer_lock);
    atomic_fetch_add_explicit(&seq, 1, memory_order_acq_rel);
}

static void write_end(void)
{
    atomic_fetch_add_explicit(&seq, 1, memory_order_release);
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    pthread_mutex_unlock(&writer_lock);
}

static void move_slots(size_t to, size_t from, size_t n)
{
    xp_range r;
    if (to < from) {
        for (size_t k = 0; k < n; k++) {
            load_slot(from + k, &r);
            store_slot(to + k, &r);
        }
    } else {
        for (size_t k = n; k-- > 0;) {
            load_slot(from + k, &r);
            store_slot(to + k, &r);
        }
    }
}

bool xp_registry_add(const xp_range *r)
{
    pthread_once(&map_once, map_slots);
    if (slots == NULL || r->size == 0)
        return false;
    write_begin();
    size_t n = atomic_load_explicit(&count, memory_order_relaxed);
    /* Drop stale ranges overlapping the new one. */
    size_t i = upper_bound(r->base, n);
    if (i > 0) {
        xp_range prev;
        load_slot(i - 1, &prev);
        if (prev.base + prev.size > r->base)
            i--;
    }
    size_t j = i;
    while (j < n && base_at(j) < r->base + r->size)
        j++;
    bool ok = true;
    if (j - i == 0 && n == REGISTRY_CAPACITY) {
        ok = false;
    } else {
        /* Replace [i, j) by the one new range. */
        if (j - i != 1) {
            move_slots(i + 1, j, n - j);
            n = n - (j - i) + 1;
        }
        store_slot(i, r);
        atomic_store_explicit(&count, n, memory_order_relaxed);
    }
    write_end();
    return ok;
}

bool xp_registry_remove(uint64_t base, unsigned kinds, xp_range *out)
{
    if (slots == NULL)
        return false;
    bool found = false;
    write_begin();
    size_t n = atomic_load_explicit(&count, memory_order_relaxed);
    size_t i = upper_bound(base, n);
    if (i > 0 && base_at(i - 1) == base) {
        xp_range r;
        load_slot(i - 1, &r);
        if (kinds & (1u << r.kind)) {
            *out = r;
            move_slots(i - 1, i, n - i);
            atomic_store_explicit(&count, n - 1, memory_order_relaxed);
            found = true;
        }
    }
    write_end();
    return found;
}

bool xp_registry_lookup(uint64_t addr, xp_range *out)
{
    if (slots == NULL)
        return false;
    for (;;) {
        uint64_t s0 = atomic_load_explicit(&seq, memory_order_acquire);
        if (s0 & 1)
            continue;
        size_t n = atomic_load_explicit(&count, memory_order_relaxed);
        bool found = false;
        if (n <= REGISTRY_CAPACITY) {
            size_t i = upper_bound(addr, n);
            if (i > 0) {
                load_slot(i - 1, out);
                found = addr - out->base < out->size;
            }
        }
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&seq, memory_order_relaxed) == s0)
            return found;
    }
}

uint64_t xp_registry_generation(void)
{
    return atomic_load_explicit(&generation, memory_order_relaxed);
}

void xp_registry_clear(void)
{
    if (slots == NULL)
        return;
    write_begin();
    atomic_store_explicit(&count, 0, memory_order_relaxed);
    write_end();
}
