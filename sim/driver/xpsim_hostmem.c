/* xpsim_hostmem.c: a sorted, read-mostly table of host ranges known to the driver. */
#include "xpsim_hostmem.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The table is process-wide like the driver's own: pinned memory is visible to
 * every context.  Guarded by table_lock; sorted by base, never overlapping. */
static pthread_rwlock_t table_lock = PTHREAD_RWLOCK_INITIALIZER;
static xpsim_host_range *table;
static size_t table_count, table_cap;

/* First index whose range ends after addr. */
static size_t lower_bound(uint64_t addr)
{
    size_t lo = 0, hi = table_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (table[mid].base + table[mid].size <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

CUresult xpsim_hostmem_add(const xpsim_host_range *range)
{
    CUresult rc = CUDA_SUCCESS;
    pthread_rwlock_wrlock(&table_lock);
    size_t i = lower_bound(range->base);
    if (i < table_count && table[i].base < range->base + range->size) {
        rc = CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED;
    } else {
        if (table_count == table_cap) {
            size_t ncap = table_cap ? table_cap * 2 : 64;
            xpsim_host_range *nt = realloc(table, ncap * sizeof *nt);
            if (nt == NULL) {
                rc = CUDA_ERROR_OUT_OF_MEMORY;
                goto out;
            }
            table = nt;
            table_cap = ncap;
        }
        memmove(&table[i + 1], &table[i], (table_count - i) * sizeof *table);
        table[i] = *range;
        table_count++;
    }
out:
    pthread_rwlock_unlock(&table_lock);
    return rc;
}

bool xpsim_hostmem_remove(uint64_t base, xpsim_host_kind kind, xpsim_host_range *out_range)
{
    bool found = false;
    pthread_rwlock_wrlock(&table_lock);
    size_t i = lower_bound(base);
    if (i < table_count && table[i].base == base && table[i].kind == kind) {
        if (out_range)
            *out_range = table[i];
        memmove(&table[i], &table[i + 1], (table_count - i - 1) * sizeof *table);
        table_count--;
        found = true;
    }
    pthread_rwlock_unlock(&table_lock);
    return found;
}

bool xpsim_hostmem_lookup(uint64_t addr, xpsim_host_range *out_range)
{
    bool found = false;
    pthread_rwlock_rdlock(&table_lock);
    size_t i = lower_bound(addr);
    if (i < table_count && table[i].base <= addr) {
        *out_range = table[i];
        found = true;
    }
    pthread_rwlock_unlock(&table_lock);
    return found;
}

void xpsim_hostmem_drop_managed(const void *owner)
{
    pthread_rwlock_wrlock(&table_lock);
    size_t out = 0;
    for (size_t i = 0; i < table_count; i++) {
        if (table[i].kind == XPSIM_HOST_MANAGED && table[i].owner == owner)
            munmap((void *)(uintptr_t)table[i].base, table[i].mapped);
        else
            table[out++] = table[i];
    }
    table_count = out;
    pthread_rwlock_unlock(&table_lock);
}
