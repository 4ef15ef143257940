/* xp_stack.c: libunwind walks into the thread's block (not its stack), XXH3
 * of the frames as the id, a lock-free set of ids already written, and no
 * walk where the stack left is too short for one. */
#include "xp_stack.h"
#include "xp_engine.h"
#include "xp_python.h"
#include "xp_seen.h"
#include "xp_thread.h"

#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <xxhash.h>

/* Stack ids already written (xp_seen.h). */
#define SEEN_SLOTS (1u << 16)
static _Atomic uint64_t seen[SEEN_SLOTS];

/* Bumped by xp_stack_reset so that no thread's cache trusts a stack that was
 * written to an earlier journal. */
static _Atomic uint64_t generation = 1;

/* Stacks skipped for want of room (xp_stack_skipped); zeroed with the
 * journal. */
static _Atomic uint64_t skipped;

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

static int unwind(xp_stack_thread *st, int depth);

void xp_stack_init(void)
{
    unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
    dl_iterate_phdr(find_self, (void *)(uintptr_t)&xp_stack_init);
    /* One walk here, on the thread that starts the session: libunwind's
     * calls into libc are bound lazily, at the process's first walk, which
     * then takes 4.5 KiB of stack rather than 2 (the dynamic linker saves
     * the vector registers), and that first walk could be on a small stack. */
    xp_thread *t = xp_thread_get();
    if (t != NULL)
        unwind(&t->stack, XP_MAX_FRAMES);
}

void xp_stack_reset(void)
{
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    atomic_store_explicit(&skipped, 0, memory_order_relaxed);
    xp_seen_clear(seen, SEEN_SLOTS);
}

/* A cached return-address slot, read wherever the stack now has it: on a
 * hit that is the frame the cached walk found, on a miss it may be inside
 * another frame's locals, which is what the comparison is for.  ASan's
 * redzones lie between locals, so under ASan the read is made where it
 * does not instrument it (out of line: an inlined body would be
 * instrumented as its caller is); every other build reads it inline. */
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address, noinline)) static uintptr_t read_slot(uintptr_t slot)
{
    return *(const volatile uintptr_t *)slot;
}
#else
#define read_slot(slot) (*(const volatile uintptr_t *)(slot))
#endif

static inline __attribute__((always_inline)) bool
cache_hit(const xp_cached_stack *e, const xp_call_site *site, int depth, uint64_t gen, uint64_t py)
{
    if (e->ret != site->ret || e->sp != site->sp || e->depth != depth || e->generation != gen ||
        e->py != py)
        return false;
    /* Every slot, differences or'ed together, unrolled in full and entered
     * at the entry's depth: a branch a frame and a loop's own instructions
     * were most of a hit's cost (issue 15).  Reading on past a mismatch is
     * safe: the slots lie above the same stack pointer, in the stack the
     * cached walk found them in. */
    uintptr_t diff = 0;
#define XP_FRAME_DIFF(i)                                                       \
    case (i) + 1:                                                              \
        diff |= read_slot(e->slot[i]) ^ e->frame[i];                           \
        __attribute__((fallthrough));
    _Static_assert(XP_STACK_CACHE_FRAMES == 32, "one case a cached frame");
    switch (e->n) {
        XP_FRAME_DIFF(31) XP_FRAME_DIFF(30) XP_FRAME_DIFF(29) XP_FRAME_DIFF(28)
        XP_FRAME_DIFF(27) XP_FRAME_DIFF(26) XP_FRAME_DIFF(25) XP_FRAME_DIFF(24)
        XP_FRAME_DIFF(23) XP_FRAME_DIFF(22) XP_FRAME_DIFF(21) XP_FRAME_DIFF(20)
        XP_FRAME_DIFF(19) XP_FRAME_DIFF(18) XP_FRAME_DIFF(17) XP_FRAME_DIFF(16)
        XP_FRAME_DIFF(15) XP_FRAME_DIFF(14) XP_FRAME_DIFF(13) XP_FRAME_DIFF(12)
        XP_FRAME_DIFF(11) XP_FRAME_DIFF(10) XP_FRAME_DIFF(9) XP_FRAME_DIFF(8)
        XP_FRAME_DIFF(7) XP_FRAME_DIFF(6) XP_FRAME_DIFF(5) XP_FRAME_DIFF(4)
        XP_FRAME_DIFF(3) XP_FRAME_DIFF(2) XP_FRAME_DIFF(1)
    default:
        break;   /* n 1: the site is the stack (frame 0 is the key's ret) */
    }
#undef XP_FRAME_DIFF
    return diff == 0;
}

/* Where a new entry for a key whose two sets are `sets` goes: a free way
 * (never used, or of an earlier generation) of either set, else the next
 * way in turn of the first. */
static xp_cached_stack *cache_slot(xp_stack_thread *st, const unsigned sets[2], uint64_t gen)
{
    for (int k = 0; k < 2; k++)
        for (int w = 0; w < XP_STACK_CACHE_WAYS; w++) {
            xp_cached_stack *e = &st->cache[sets[k]][w];
            if (e->id == 0 || e->generation != gen)
                return e;
        }
    return &st->cache[sets[0]][st->cache_next[sets[0]]++ % XP_STACK_CACHE_WAYS];
}

/* ---- room to walk -------------------------------------------------------- */

/* Bytes of stack a walk needs below xp_stack_capture's frame.  Measured
 * (docs/performance.md): 2 KiB at most, DWARF cache misses included, and
 * 4.5 KiB when libunwind makes a call into libc the dynamic linker has not
 * bound yet (once per function and process, mostly done by xp_stack_init's
 * walk); the rest of the recording takes less.  With less left, the stack
 * is skipped. */
#define MIN_ROOM 6144

/* Where the program's stack starts (ld.so's): the main thread's bounds
 * without pthread_getattr_np, which would read /proc/self/maps. */
extern void *__libc_stack_end;

static bool within(uintptr_t sp, uintptr_t lo, uintptr_t hi)
{
    return sp - lo < hi - lo;
}

/* The most of the main thread's stack trusted to be its own when
 * RLIMIT_STACK allows more (or is unlimited, common on HPC systems): below
 * that, its stack is one of unknown size (walked as before) rather than
 * memory a malloc'ed alternate signal stack could lie in. */
#define MAIN_STACK_MAX ((uintptr_t)1 << 30)

/* Looks the calling thread's stack up, once: the main thread's from ld.so's
 * start and RLIMIT_STACK; another's from pthread_getattr_np (which
 * allocates: never on an alternate signal stack, see room_slow).  lo 0 when
 * no limit is known. */
static void find_bounds(xp_stack_thread *st, uintptr_t sp)
{
    st->bounds_known = true;
    uintptr_t top = (uintptr_t)__libc_stack_end;
    struct rlimit rl;
    if (xp_engine_tid() == (uint32_t)getpid() && sp < top &&
        getrlimit(RLIMIT_STACK, &rl) == 0) {
        /* (Arguments and environment above __libc_stack_end count against
         * the limit too: usually kilobytes of megabytes.) */
        uintptr_t limit = rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > MAIN_STACK_MAX
                              ? MAIN_STACK_MAX : (uintptr_t)rl.rlim_cur;
        if (limit > top)
            limit = top;
        if (sp > top - limit) {
            st->lo = top - limit;
            st->hi = top;
            return;
        }
        /* Not on the main stack: a thread that forked is its child's main
         * thread, on its own stack. */
    }
    pthread_attr_t a;
    void *addr = NULL;
    size_t size = 0;
    st->lo = 0;
    st->hi = UINTPTR_MAX;
    if (pthread_getattr_np(pthread_self(), &a) != 0)
        return;
    if (pthread_attr_getstack(&a, &addr, &size) == 0) {
        st->lo = (uintptr_t)addr;
        st->hi = (uintptr_t)addr + size;
    }
    pthread_attr_destroy(&a);
}

/* room() when sp is on neither stack known yet: the first walk of the
 * thread, a signal handler on an alternate stack, or a stack the program
 * switched to (a coroutine's, whose size is unknown: UINTPTR_MAX, walked as
 * before).  One sigaltstack() each time: rare but for coroutines. */
static __attribute__((noinline, cold)) uintptr_t room_slow(xp_stack_thread *st, uintptr_t sp)
{
    stack_t ss;
    if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK) &&
        within(sp, (uintptr_t)ss.ss_sp, (uintptr_t)ss.ss_sp + ss.ss_size)) {
        st->alt_lo = (uintptr_t)ss.ss_sp;
        st->alt_hi = st->alt_lo + ss.ss_size;
        return sp - st->alt_lo;
    }
    if (!st->bounds_known) {
        find_bounds(st, sp);
        if (within(sp, st->lo, st->hi))
            return sp - st->lo;
    }
    return UINTPTR_MAX;
}

/* Bytes of stack below sp, on whichever stack sp is; a compare or two. */
static inline uintptr_t room(xp_stack_thread *st, uintptr_t sp)
{
    if (within(sp, st->lo, st->hi))
        return sp - st->lo;
    if (within(sp, st->alt_lo, st->alt_hi))
        return sp - st->alt_lo;
    return room_slow(st, sp);
}

uint64_t xp_stack_skipped(void)
{
    return atomic_load_explicit(&skipped, memory_order_relaxed);
}

/* ---- walking ------------------------------------------------------------- */

/* libunwind's state, in the thread's block (xp_stack_thread.unw). */
typedef struct unw_space {
    unw_context_t uc;
    unw_cursor_t cur;
} unw_space;
_Static_assert(sizeof(unw_space) <= XP_STACK_UNW_BYTES, "XP_STACK_UNW_BYTES holds unw_space");
_Static_assert(_Alignof(unw_space) <= 64, "xp_stack_thread.unw is aligned for unw_space");

/* Unwinds the caller's stack into st->frames (return addresses) innermost
 * first, without the preload's own, with st->slots (the stack slot each was
 * read from). */
static int unwind(xp_stack_thread *st, int depth)
{
    unw_space *u = (unw_space *)st->unw;
    if (unw_getcontext(&u->uc) != 0 || unw_init_local(&u->cur, &u->uc) != 0)
        return 0;
    int n = 0;
    bool ours = true;
    while (n < depth) {
        unw_word_t ip = 0, sp = 0;
        if (unw_get_reg(&u->cur, UNW_REG_IP, &ip) != 0 || ip == 0)
            break;
        unw_get_reg(&u->cur, UNW_REG_SP, &sp);
        if (ours && !(ip >= self_lo && ip < self_hi))
            ours = false;
        if (!ours) {
            st->frames[n] = ip;
            /* The call pushed the return address just below the SP the
             * frame has once the callee returned. */
            st->slots[n] = (uintptr_t)sp - sizeof(uintptr_t);
            n++;
        }
        if (unw_step(&u->cur) <= 0)
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

/* xp_stack_capture past the thread's last entry. */
static __attribute__((noinline)) uint64_t capture(xp_journal *j, int depth,
                                                  const xp_call_site *site)
{
    if (depth <= 0)
        return 0;
    if (depth > XP_MAX_FRAMES)
        depth = XP_MAX_FRAMES;
    xp_thread *t = xp_thread_get();
    if (t == NULL) {
        atomic_fetch_add_explicit(&skipped, 1, memory_order_relaxed);
        return 0;   /* no work space: nowhere to walk */
    }
    xp_stack_thread *st = &t->stack;
    uint64_t gen = atomic_load_explicit(&generation, memory_order_relaxed);
    /* Python frames change under the same native stack (one C call of the
     * eval loop runs many lines): they are part of the cache key. */
    uint64_t pyh;
    int npy = xp_python_capture(j, st->py, XP_PY_MAX_FRAMES, &pyh);
    /* Two sets a key may be in (two hashes of it: return addresses and
     * stack pointers differ in their low bits from site to site); a new
     * entry goes where there is room, so that no set overflows while the
     * cache has room ("two choices": with one, some set drew more of 64
     * sites than it had ways, and those missed every time). */
    uint64_t key = (uint64_t)site->ret * 0x9e3779b97f4a7c15ull ^ (uint64_t)site->sp ^ pyh;
    key = (key ^ (key >> 29)) * 0xbf58476d1ce4e5b9ull;
    unsigned sets[2] = {(unsigned)(key >> 58) % XP_STACK_CACHE_SETS,
                        (unsigned)(key >> 32) % XP_STACK_CACHE_SETS};
    for (int k = 0; k < 2; k++)
        for (int w = 0; w < XP_STACK_CACHE_WAYS; w++)
            if (cache_hit(&st->cache[sets[k]][w], site, depth, gen, pyh)) {
                st->last = &st->cache[sets[k]][w];
                return st->last->id;
            }

    if (room(st, (uintptr_t)__builtin_frame_address(0)) < MIN_ROOM) {
        atomic_fetch_add_explicit(&skipped, 1, memory_order_relaxed);
        return 0;
    }
    int n = unwind(st, depth);
    if (n <= 0)
        return 0;
    uint64_t id = XXH3_64bits(st->frames, (size_t)n * sizeof st->frames[0]);
    if (npy)
        id = XXH3_64bits_withSeed(&pyh, sizeof pyh, id);
    if (id == 0)
        id = 1;
    if (xp_seen_claim(seen, SEEN_SLOTS, id))
        write_stack(j, id, st->frames, n, st->py, npy);
    /* Cache it only if it really starts at this site (it does unless the
     * unwinder lost its way) and fits. */
    if (n <= XP_STACK_CACHE_FRAMES && st->frames[0] == site->ret) {
        xp_cached_stack *e = cache_slot(st, sets, gen);
        e->ret = site->ret;
        e->sp = site->sp;
        e->id = id;
        e->generation = gen;
        e->depth = depth;
        e->n = n;
        e->py = pyh;
        memcpy(e->frame, st->frames, (size_t)n * sizeof st->frames[0]);
        memcpy(e->slot, st->slots, (size_t)n * sizeof st->slots[0]);
        st->last = e;
    }
    return id;
}

uint64_t xp_stack_capture(xp_journal *j, int depth, const xp_call_site *site)
{
    /* The common case, a loop calling from one site again, without a hash
     * of the key or a search of its sets (issue 15).  Not with Python
     * frames: their hash is part of the key. */
    xp_thread *t = xp_self;
    if (__builtin_expect(t != NULL && t->stack.last != NULL, 1) &&
        atomic_load_explicit(&xp_python_active, memory_order_relaxed) == NULL &&
        cache_hit(t->stack.last, site, depth > XP_MAX_FRAMES ? XP_MAX_FRAMES : depth,
                  atomic_load_explicit(&generation, memory_order_relaxed), 0))
        return t->stack.last->id;
    return capture(j, depth, site);
}
