/* cap_util.h: what the capture scenario programs share: the simulator tests'
 * checks, and printing the facts (pointers, handles, ids) that the drivers
 * then look for in the database. */
#ifndef CAP_UTIL_H
#define CAP_UTIL_H

#include "../sim/xpt_check.h"

#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

/* "name 0x..." on stdout: the drivers parse these lines (cap_common.py). */
#define CAP_PRINT(name, value)                                                 \
    printf("%s 0x%llx\n", (name), (unsigned long long)(uintptr_t)(value))

static inline long cap_tid(void)
{
    return (long)syscall(SYS_gettid);
}

/* Page-aligned pageable memory, for cudaHostRegister. */
static inline void *cap_pages(size_t n)
{
    void *p = NULL;
    CHECK(posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), n) == 0);
    memset(p, 0, n);
    return p;
}

#endif
