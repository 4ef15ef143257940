/* xp_stack.c: unw_backtrace into a buffer on the stack, XXH3 of the frames as
 * the id, and a lock-free set of ids already written. */
#include "xp_stack.h"
#include "xp_python.h"
#include "xp_seen.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xxhash.h>

/* Stack ids already written (xp_seen.h). */
#define SEEN_SLOTS (1u << 16)
static _Atomic uint64_t seen[SEEN_SLOTS];

/* Bumped by xp_stack_reset so that no thread's cache trusts a stack that was
 * written to an earlier journal. */
static _Atomic uint64_t generation = 1;

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
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    xp_seen_clear(seen, SEEN_SLOTS);
}

/* The thread's recent stacks.  slot[i] is where frame[i] (a return
 * address) was found on the stack; frame[0] is the site's own return
 * address, checked through the key. */
#define CACHE_WAYS 4
#define CACHE_FRAMES 64
typedef struct cached_stack {
    uintptr_t ret, sp;
    uint64_t id;
    uint64_t generation;
    int depth;                /* the depth asked for */
    int n;
    uint64_t py;              /* hash of the Python frames (0: none) */
    uintptr_t slot[CACHE_FRAMES];
    uint64_t frame[CACHE_FRAMES];
} cached_stack;
static __thread cached_stack cache[CACHE_WAYS] __attribute__((tls_model("initial-exec")));
static __thread unsigned cache_next __attribute__((tls_model("initial-exec")));

static bool cache_hit(const cached_stack *e, const xp_call_site *site, int depth, uint64_t gen,
                      uint64_t py)
{
    if (e->ret != site->ret || e->sp != site->sp || e->depth != depth || e->generation != gen ||
        e->py != py)
        return false;
    for (int i = 1; i < e->n; i++)
        if (*(const volatile uintptr_t *)e->slot[i] != e->frame[i])
            return false;
    return true;
}

/* Unwinds the caller's stack: frames (return addresses) innermost first,
 * without the preload's own, and the stack slot each was read from. */
static int unwind(int depth, uint64_t *frames, uintptr_t *slots)
{
    unw_context_t uc;
    unw_cursor_t cur;
    if (unw_getcontext(&uc) != 0 || unw_init_local(&cur, &uc) != 0)
        return 0;
    int n = 0;
    bool ours = true;
    while (n < depth) {
        unw_word_t ip = 0, sp = 0;
        if (unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
            break;
        unw_get_reg(&cur, UNW_REG_SP, &sp);
        if (ours && !(ip >= self_lo && ip < self_hi))
            ours = false;
        if (!ours) {
            frames[n] = ip;
            /* The call pushed the return address just below the SP the
             * frame has once the callee returned. */
            slots[n] = (uintptr_t)sp - sizeof(uintptr_t);
            n++;
        }
        if (unw_step(&cur) <= 0)
            break;
    }
    return n;
}

static void write_stack(xp_journal *j, uint64_t id, const uint64_t *frames, int n,
                        const xp_pyframe *py, int npy)
{
    uint32_t size = xp_record_size(sizeof(xp_rec_stack) + (size_t)n * 8 + (size_t)npy * sizeof *py);
    xp_rec_stack *r = xp_journal_reserve(j, size);
    if (r == NULL)
        return;
    r->h.type = XP_REC_STACK;
    r->h.size = size;
    r->h.tid = (uint32_t)syscall(SYS_gettid);
    r->stack_id = id;
    r->depth = (uint32_t)n;
    r->py_depth = (uint32_t)npy;
    memcpy(r + 1, frames, (size_t)n * 8);
    memcpy((char *)(r + 1) + (size_t)n * 8, py, (size_t)npy * sizeof *py);
    xp_journal_commit(r);
}

uint64_t xp_stack_capture(xp_journal *j, int depth, const xp_call_site *site)
{
    if (depth <= 0)
        return 0;
    if (depth > XP_MAX_FRAMES)
        depth = XP_MAX_FRAMES;
    uint64_t gen = atomic_load_explicit(&generation, memory_order_relaxed);
    /* Python frames change under the same native stack (one C call of the
     * eval loop runs many lines): they are part of the cache key. */
    xp_pyframe py[XP_PY_MAX_FRAMES];
    uint64_t pyh;
    int npy = xp_python_capture(j, py, XP_PY_MAX_FRAMES, &pyh);
    for (int w = 0; w < CACHE_WAYS; w++)
        if (cache_hit(&cache[w], site, depth, gen, pyh))
            return cache[w].id;

    uint64_t frames[XP_MAX_FRAMES];
    uintptr_t slots[XP_MAX_FRAMES];
    int n = unwind(depth, frames, slots);
    if (n <= 0)
        return 0;
    uint64_t id = XXH3_64bits(frames, (size_t)n * sizeof frames[0]);
    if (npy)
        id = XXH3_64bits_withSeed(&pyh, sizeof pyh, id);
    if (id == 0)
        id = 1;
    if (xp_seen_claim(seen, SEEN_SLOTS, id))
        write_stack(j, id, frames, n, py, npy);
    /* Cache it only if it really starts at this site (it does unless the
     * unwinder lost its way) and fits. */
    if (n <= CACHE_FRAMES && frames[0] == site->ret) {
        cached_stack *e = &cache[cache_next++ % CACHE_WAYS];
        e->ret = site->ret;
        e->sp = site->sp;
        e->id = id;
        e->generation = gen;
        e->depth = depth;
        e->n = n;
        e->py = pyh;
        memcpy(e->frame, frames, (size_t)n * sizeof frames[0]);
        memcpy(e->slot, slots, (size_t)n * sizeof slots[0]);
    }
    return id;
}
