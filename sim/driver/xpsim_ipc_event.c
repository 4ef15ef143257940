/* xpsim_ipc_event.c: the state of interprocess events, in memory shared between the processes that hold one (a slot of a per-process memory file). */
#include "xpsim_ipc_event.h"

#include "xpsim_log.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* One event's state, the same for every process that holds it.  A record
 * (in any process) takes the next generation from issued; the stream that
 * reaches it raises done to it, unless a later one already has: the event
 * is complete when done has caught up with the latest record, as CUDA's is
 * when its most recent record has completed. */
typedef struct ipc_slot {
    _Atomic uint32_t issued;
    _Atomic uint32_t done;    /* a futex word: waiters of any process sleep on it */
    _Atomic uint32_t serial;  /* the event holding the slot; 0 while free */
    uint32_t next_free;       /* the creator's free list (index + 1), only it reads it */
} ipc_slot;
_Static_assert(sizeof(ipc_slot) == 16, "slots pack a page");

/* 65536 slots: a sparse 1 MiB file, of which only touched pages take memory. */
#define SLAB_SLOTS 65536u

struct xpsim_ipc_ref {
    atomic_uint refs;
    ipc_slot *slot;
    xpsim_ipc_slot_name name;
    void *page;               /* an opened slot's mapping, NULL for our own */
    size_t len;
};

/* This process's file of slots, made at its first interprocess event and
 * kept to the end (its descriptor is what other processes open).  A forked
 * child inherits the parent's and makes its own: the free list is the
 * parent's, and so are the slots of the events it inherited. */
static pthread_mutex_t slab_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t slab_pid;        /* slab_lock; the process that made slab */
static int slab_fd = -1;      /* slab_lock */
static uint64_t slab_ino;     /* slab_lock */
static ipc_slot *slab;        /* slab_lock */
static uint32_t slab_used;    /* slab_lock: slots ever handed out */
static uint32_t slab_free;    /* slab_lock: first free slot + 1, 0 if none */
static uint32_t slab_serial;  /* slab_lock: the last serial handed out */

static bool slab_ready_locked(void)
{
    if (slab != NULL && slab_pid == getpid())
        return true;
    slab = NULL;
    slab_used = slab_free = 0;
    int fd = memfd_create("xpsim-ipc-events", MFD_CLOEXEC);
    struct stat st;
    void *p = MAP_FAILED;
    if (fd >= 0 && ftruncate(fd, (off_t)(SLAB_SLOTS * sizeof(ipc_slot))) == 0 &&
        fstat(fd, &st) == 0)
        p = mmap(NULL, SLAB_SLOTS * sizeof(ipc_slot), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        if (fd >= 0)
            close(fd);
        xpsim_debug("interprocess events: no memory file, events stay in this process");
        return false;
    }
    slab = p;
    slab_fd = fd;
    slab_ino = (uint64_t)st.st_ino;
    slab_pid = getpid();
    return true;
}

xpsim_ipc_ref *xpsim_ipc_ref_new(void)
{
    xpsim_ipc_ref *ref = calloc(1, sizeof *ref);
    if (ref == NULL)
        return NULL;
    pthread_mutex_lock(&slab_lock);
    uint32_t index = UINT32_MAX;
    if (slab_ready_locked()) {
        if (slab_free != 0) {
            index = slab_free - 1;
            slab_free = slab[index].next_free;
        } else if (slab_used < SLAB_SLOTS) {
            index = slab_used++;
        }
    }
    if (index == UINT32_MAX) {
        pthread_mutex_unlock(&slab_lock);
        free(ref);
        return NULL;
    }
    if (++slab_serial == 0)
        slab_serial = 1;
    ipc_slot *s = &slab[index];
    atomic_store(&s->issued, 0);
    atomic_store(&s->done, 0);
    atomic_store(&s->serial, slab_serial);
    ref->slot = s;
    ref->name = (xpsim_ipc_slot_name){.pid = (int32_t)slab_pid, .fd = slab_fd, .ino = slab_ino,
                                      .index = index, .serial = slab_serial};
    pthread_mutex_unlock(&slab_lock);
    atomic_init(&ref->refs, 1);
    return ref;
}

CUresult xpsim_ipc_ref_open(const xpsim_ipc_slot_name *name, xpsim_ipc_ref **out)
{
    if (name->index >= SLAB_SLOTS || name->serial == 0)
        return CUDA_ERROR_INVALID_HANDLE;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)name->pid, (int)name->fd);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != name->ino)) {
        close(fd);   /* the descriptor names another file now */
        fd = -1;
    }
    if (fd < 0)
        return CUDA_ERROR_INVALID_HANDLE;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t at = name->index * sizeof(ipc_slot);
    void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)(at & ~(page - 1)));
    close(fd);
    if (p == MAP_FAILED)
        return CUDA_ERROR_MAP_FAILED;
    ipc_slot *s = (ipc_slot *)((char *)p + (at & (page - 1)));
    if (atomic_load(&s->serial) != name->serial) {   /* that event was destroyed */
        munmap(p, page);
        return CUDA_ERROR_INVALID_HANDLE;
    }
    xpsim_ipc_ref *ref = calloc(1, sizeof *ref);
    if (ref == NULL) {
        munmap(p, page);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    *ref = (xpsim_ipc_ref){.slot = s, .name = *name, .page = p, .len = page};
    atomic_init(&ref->refs, 1);
    *out = ref;
    return CUDA_SUCCESS;
}

void xpsim_ipc_ref_take(xpsim_ipc_ref *ref)
{
    atomic_fetch_add_explicit(&ref->refs, 1, memory_order_relaxed);
}

void xpsim_ipc_ref_drop(xpsim_ipc_ref *ref)
{
    if (atomic_fetch_sub_explicit(&ref->refs, 1, memory_order_acq_rel) != 1)
        return;
    if (ref->page != NULL) {
        munmap(ref->page, ref->len);
    } else {
        /* Our slot goes back to our free list; an inherited one stays the
         * parent's. */
        pthread_mutex_lock(&slab_lock);
        if (slab != NULL && ref->slot == &slab[ref->name.index] && slab_pid == getpid()) {
            atomic_store(&ref->slot->serial, 0);
            ref->slot->next_free = slab_free;
            slab_free = ref->name.index + 1;
        }
        pthread_mutex_unlock(&slab_lock);
    }
    free(ref);
}

void xpsim_ipc_ref_retire(xpsim_ipc_ref *ref)
{
    /* Only the creator's own slot; an inherited one is still the parent's. */
    if (ref->page == NULL && ref->name.pid == (int32_t)getpid())
        atomic_store(&ref->slot->serial, 0);
}

CUresult xpsim_ipc_ref_name(const xpsim_ipc_ref *ref, xpsim_ipc_slot_name *out)
{
    /* A program that closes every descriptor (as daemons do) may have
     * closed our file: its slots can no longer be handed out. */
    if (ref->page == NULL && ref->name.pid == (int32_t)getpid()) {
        struct stat st;
        if (fstat(ref->name.fd, &st) != 0 || (uint64_t)st.st_ino != ref->name.ino)
            return CUDA_ERROR_MAP_FAILED;
    }
    *out = ref->name;
    return CUDA_SUCCESS;
}

uint32_t xpsim_ipc_issue(xpsim_ipc_ref *ref)
{
    return atomic_fetch_add(&ref->slot->issued, 1) + 1;
}

/* Generations wrap: A is at or after B when A - B, read signed, is not negative. */
static bool at_or_after(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) >= 0;
}

void xpsim_ipc_publish(xpsim_ipc_ref *ref, uint32_t gen)
{
    _Atomic uint32_t *done = &ref->slot->done;
    uint32_t cur = atomic_load(done);
    while (!at_or_after(cur, gen) && !atomic_compare_exchange_weak(done, &cur, gen))
        ;
    /* Not FUTEX_PRIVATE: the sleepers may be in other processes. */
    syscall(SYS_futex, (uint32_t *)done, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

uint32_t xpsim_ipc_latest(const xpsim_ipc_ref *ref)
{
    return atomic_load(&ref->slot->issued);
}

bool xpsim_ipc_done(const xpsim_ipc_ref *ref, uint32_t gen)
{
    return at_or_after(atomic_load(&ref->slot->done), gen);
}

void xpsim_ipc_wait(xpsim_ipc_ref *ref, uint32_t gen)
{
    _Atomic uint32_t *done = &ref->slot->done;
    for (uint32_t cur; !at_or_after(cur = atomic_load(done), gen);)
        syscall(SYS_futex, (uint32_t *)done, FUTEX_WAIT, cur, NULL, NULL, 0);
}
