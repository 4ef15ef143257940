/* xp_thread.c: per-thread blocks: mapped on a thread's first use, handed back
 * at its exit (a pthread key's destructor) and reused from a list. */
#include "xp_thread.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The hottest thread-locals of every module (xp_tls.h). */
__thread xp_tls_block xp_tls __attribute__((tls_model("initial-exec")));

/* Every block ever mapped, newest first.  Blocks are never unmapped nor
 * unlinked: walking the list needs no lock, and pushing onto it cannot meet
 * the ABA problem of a lock-free free list.  Their number is the most
 * threads that used the preload at once. */
static _Atomic(xp_thread *) blocks;

/* Its destructor hands a thread's block back when the thread exits.  Created
 * at load (xp_thread_load); have_key false if that failed (blocks are then
 * not reused). */
static pthread_key_t exit_key;
static bool have_key;

static void on_thread_exit(void *p)
{
    xp_thread *t = p;
    /* A CUDA call from a later destructor of this thread takes a new block
     * (and sets the key again, so that one is handed back too). */
    if (xp_self == t)
        xp_self = NULL;
    if (xp_inflight_self == &t->inflight)
        xp_inflight_self = NULL;
    /* A thread that ends inside a recorded call (cancelled, or exiting from
     * a callback) leaves it counted in flight: the block is kept, so that
     * exit counts the call. */
    if (xp_inflight_busy(&t->inflight))
        return;
    atomic_store_explicit(&t->in_use, false, memory_order_release);
}

/* Zeroes what the last thread to hold t left in it.  The whole pages in it
 * (most of the block is the stack cache, xp_stack.h) are given back to the
 * kernel instead, which zero-fills them when next touched: a reused block
 * then holds only the pages its new thread uses, as a new one does. */
static void clear(xp_thread *t)
{
    char *lo = (char *)t + offsetof(xp_thread, where), *hi = (char *)t + sizeof *t;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    char *a = (char *)(((uintptr_t)lo + page - 1) & ~(page - 1));
    char *b = (char *)((uintptr_t)hi & ~(page - 1));
    int saved = errno;   /* the program's, whatever madvise says */
    if (b > a && madvise(a, (size_t)(b - a), MADV_DONTNEED) == 0) {
        memset(lo, 0, (size_t)(a - lo));
        memset(b, 0, (size_t)(hi - b));
    } else {
        memset(lo, 0, (size_t)(hi - lo));
    }
    errno = saved;
}

/* A block no thread holds, now the caller's; NULL if none. */
static xp_thread *claim(void)
{
    for (xp_thread *t = atomic_load_explicit(&blocks, memory_order_acquire); t; t = t->next) {
        if (atomic_load_explicit(&t->in_use, memory_order_relaxed))
            continue;
        bool expected = false;
        if (atomic_compare_exchange_strong_explicit(&t->in_use, &expected, true,
                                                    memory_order_acquire, memory_order_relaxed)) {
            /* What the last thread left: its caches point into its stack. */
            clear(t);
            return t;
        }
    }
    return NULL;
}

static xp_thread *map_new(void)
{
    void *p = mmap(NULL, sizeof(xp_thread), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    xp_thread *t = p;   /* zeroed by the kernel */
    atomic_store_explicit(&t->in_use, true, memory_order_relaxed);
    xp_thread *head = atomic_load_explicit(&blocks, memory_order_relaxed);
    do
        t->next = head;
    while (!atomic_compare_exchange_weak_explicit(&blocks, &head, t, memory_order_release,
                                                  memory_order_relaxed));
    return t;
}

xp_thread *xp_thread_blocks(void)
{
    return atomic_load_explicit(&blocks, memory_order_acquire);
}

xp_thread *xp_thread_attach(void)
{
    xp_thread *t = claim();
    if (t == NULL && (t = map_new()) == NULL)
        return NULL;
    t->errno_at = &errno;
    /* A signal handler may have attached one while this ran (NVTX calls are
     * not guarded against reentry): keep the first. */
    xp_thread *none = NULL;
    if (!__atomic_compare_exchange_n(&xp_self, &none, t, false, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED)) {
        atomic_store_explicit(&t->in_use, false, memory_order_release);
        return none;
    }
    if (have_key)
        pthread_setspecific(exit_key, t);
    return t;
}

/* In a forked child only the forking thread is left: the other threads'
 * blocks are free. */
static void after_fork_child(void)
{
    for (xp_thread *t = atomic_load_explicit(&blocks, memory_order_acquire); t; t = t->next)
        if (t != xp_self)
            atomic_store_explicit(&t->in_use, false, memory_order_relaxed);
    /* (Their calls in flight are forgotten by xp_inflight_after_fork.) */
}

__attribute__((constructor)) static void xp_thread_load(void)
{
    have_key = pthread_key_create(&exit_key, on_thread_exit) == 0;
    pthread_atfork(NULL, NULL, after_fork_child);
}
