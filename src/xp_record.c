/* xp_record.c: the call records: what the hooks saw turned into journal
 * records (copies, allocations, frees, syncs, memsets, failed calls; the
 * traffic only inside the capture window, xp_window.h), the
 * registry kept up to date with allocations and frees, and the state that
 * pairs an async copy with the sync that waits for it. */
#include "xp_classify.h"
#include "xp_engine.h"
#include "xp_engine_int.h"
#include "xp_fingerprint.h"

#include <limits.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "xp_devices.h"
#include "xp_graph.h"
#include "xp_journal.h"
#include "xp_nvtx.h"
#include "xp_registry.h"
#include "xp_thread.h"
#include "xp_window.h"

/* The next allocation's id, for the whole process (0 says "none"). */
static _Atomic uint64_t next_alloc_id = 1;

/* classify_copy's device when it is the calling thread's current one at
 * the call (remembered as such with a copy's facts). */
#define DEVICE_CURRENT INT_MIN

/* Successful kernel launches per device since the session started, one
 * cache line each (threads launching on different devices do not share
 * one).  Written by the launch hooks, read by every copy record. */
#define XP_MAX_DEVICES 64
static struct {
    _Alignas(64) _Atomic uint64_t n;
} launches[XP_MAX_DEVICES];

/* Inlined into each record function: the type and size are constants
 * there, and the copy's hook saves a call (issue 15).  stack_id: the stack
 * to record (a graph node's), NULL for the calling thread's own. */
static inline __attribute__((always_inline)) void *
reserve_call_at(uint16_t type, xp_api api, uint32_t size, const xp_scope *s, int status, int device,
                const uint64_t *stack_id)
{
    xp_call *c = xp_journal_reserve(xp_sess.journal, size);
    if (c == NULL) {
        xp_engine_call_lost();
        return NULL;
    }
    c->h.type = type;
    c->h.api = (uint16_t)api;
    c->h.size = size;
    c->h.tid = xp_my_tid();
    c->start_ns = s->start_ns;
    /* At or after the start, whichever TSC scale each was read on
     * (xp_clock.h). */
    uint64_t end = xp_now_ns();
    c->end_ns = end > s->start_ns ? end : s->start_ns;
    /* Not even a call without stacks (issue 15: every instruction counts);
     * nor a store of 0: the journal's space is zero (xp_journal_reserve). */
    if (stack_id != NULL) {
        c->stack_id = *stack_id;
    } else if (xp_sess.cfg.stack_depth > 0) {
        const xp_call_site site = s->site;   /* s does not escape (xp_scope_enter) */
        c->stack_id = xp_stack_capture(xp_sess.journal, xp_sess.cfg.stack_depth, &site);
    }
    c->status = status;
    c->device = device;
    return c;
}

void *xp_reserve_call(uint16_t type, xp_api api, uint32_t size, const xp_scope *s, int status,
                      int device, const uint64_t *stack_id)
{
    return reserve_call_at(type, api, size, s, status, device, stack_id);
}

static inline __attribute__((always_inline)) void *
reserve_call(uint16_t type, xp_api api, uint32_t size, const xp_scope *s, int status, int device)
{
    return reserve_call_at(type, api, size, s, status, device, NULL);
}

static bool host_kind(uint8_t k)
{
    return k == 0 || k == XP_ALLOC_PINNED || k == XP_ALLOC_REGISTERED;
}

static uint8_t host_mem_of(const xp_where *w)
{
    if (w->kind == XP_ALLOC_MANAGED)
        return XP_HOST_MANAGED;
    return w->kind == XP_ALLOC_PINNED || w->kind == XP_ALLOC_REGISTERED ? XP_HOST_PINNED
                                                                        : XP_HOST_PAGEABLE;
}

/* Where device's launches are counted, NULL for a device out of range. */
static inline const _Atomic uint64_t *launch_count(int device)
{
    return (unsigned)device < XP_MAX_DEVICES ? &launches[device].n : NULL;
}

uint64_t xp_kernel_seq(int device)
{
    const _Atomic uint64_t *n = launch_count(device);
    return n != NULL ? atomic_load_explicit(n, memory_order_relaxed) : 0;
}

/* ---- copies ------------------------------------------------------------- */

/* How long the API holds the caller, as NVIDIA's "API synchronization
 * behavior" page documents it (docs/schema.md, blocking):
 * - synchronous APIs (cudaMemcpy, cudaMemcpy2D/3D, cudaMemcpyToSymbol, ...):
 *   H2D, D2H and H2H return once the bytes are out of the caller's memory or
 *   have arrived (SYNC); device to device performs no host-side
 *   synchronization (ASYNC), and so does cudaMemcpyPeer ("asynchronous with
 *   respect to the host") and cudaMemcpy3DPeer between devices;
 * - asynchronous APIs: host to host is fully synchronous (SYNC); a pageable
 *   host side is staged, or waited for, while the caller is held
 *   (ASYNC_PAGEABLE); everything else returns at once (ASYNC). */
static uint8_t blocking_of(bool async, uint8_t dir, uint8_t host_mem)
{
    if (dir == XP_DIR_H2H)
        return XP_BLOCK_SYNC;
    if (!async)
        return dir == XP_DIR_D2D ? XP_BLOCK_ASYNC : XP_BLOCK_SYNC;
    return host_mem == XP_HOST_PAGEABLE ? XP_BLOCK_ASYNC_PAGEABLE : XP_BLOCK_ASYNC;
}

/* A recorded call breaks the pairing of the thread's last copy with a
 * sync (xp_thread.h, xp_last_copy). */
static inline void forget_last_copy(const xp_scope *s)
{
    xp_scope_thread(s)->last_copy.valid = false;
}

/* What the record of a copy reads of its description: read into these
 * before any call and never handed to one, so that the fields a 1D copy's
 * hook fills with constants fold away (issue 15: the hook's cost); the
 * description itself goes where it is passed on. */
typedef struct copy_fields {
    uint64_t src, dst, bytes, stream, height;
    int kind, device;
    xp_api api;
    unsigned sides;
    uint8_t migrate;
    bool async, has_device;
} copy_fields;

static inline __attribute__((always_inline)) copy_fields fields_of(const xp_copy_call *c)
{
    return (copy_fields){.src = c->src, .dst = c->dst, .bytes = c->bytes, .stream = c->stream,
                         .height = c->height, .kind = c->kind, .device = c->device,
                         .api = c->api, .sides = c->device_sides, .migrate = c->migrate,
                         .async = c->async, .has_device = c->has_device};
}

/* Inlined into write_copy; xp_copy_classify is the graph table's. */
/* Its facts come back in separate variables, not in an xp_copy_facts whose
 * sides are handed on: the direction and the rest then stay in registers. */
static inline __attribute__((always_inline)) void
classify_copy(const copy_fields *c, xp_where *ws, xp_where *wd, uint8_t *direction,
              uint8_t *host_mem_out, int *device_out)
{
    /* Arrays are rare: the common case keeps its one classification of both sides. */
    if (__builtin_expect(c->sides & (XP_SIDE_SRC_ARRAY | XP_SIDE_DST_ARRAY), 0)) {
        if (c->sides & XP_SIDE_SRC_ARRAY)
            xp_classify_array(c->src, ws);
        else
            xp_classify(c->src, ws);
        if (c->sides & XP_SIDE_DST_ARRAY)
            xp_classify_array(c->dst, wd);
        else
            xp_classify(c->dst, wd);
    } else {
        xp_classify_copy(c->src, c->dst, ws, wd);
    }
    if (c->sides & XP_SIDE_SRC_DEVICE && host_kind(ws->kind))
        ws->kind = XP_ALLOC_DEVICE;
    if (c->sides & XP_SIDE_DST_DEVICE && host_kind(wd->kind))
        wd->kind = XP_ALLOC_DEVICE;
    uint8_t dir = c->migrate;
    switch (c->migrate ? -1 : c->kind) {
    case -1: break;
    case 0: dir = XP_DIR_H2H; break;
    case 1: dir = XP_DIR_H2D; break;
    case 2: dir = XP_DIR_D2H; break;
    case 3: dir = XP_DIR_D2D; break;
    default: {
        /* cudaMemcpyDefault: unified addressing says which side is which;
         * managed memory counts as device memory, where it is used. */
        bool sd = !host_kind(ws->kind), dd = !host_kind(wd->kind);
        dir = sd ? (dd ? XP_DIR_D2D : XP_DIR_D2H) : (dd ? XP_DIR_H2D : XP_DIR_H2H);
        break;
    }
    }
    uint8_t host_mem = XP_HOST_NONE;
    if (c->migrate)
        host_mem = XP_HOST_MANAGED;
    else if (dir == XP_DIR_H2D)
        host_mem = host_mem_of(ws);
    else if (dir == XP_DIR_D2H)
        host_mem = host_mem_of(wd);
    else if (dir == XP_DIR_H2H)
        host_mem = host_mem_of(ws) == XP_HOST_PAGEABLE || host_mem_of(wd) == XP_HOST_PAGEABLE
                       ? XP_HOST_PAGEABLE : XP_HOST_PINNED;
    int device = dir == XP_DIR_D2H || dir == XP_DIR_D2D ? ws->device
                 : dir == XP_DIR_H2D ? wd->device : -1;
    if (device < 0 && dir != XP_DIR_H2H)
        device = DEVICE_CURRENT;
    if (c->has_device)
        device = c->device;
    *direction = dir;
    *host_mem_out = host_mem;
    *device_out = device;
}

/* classify_copy's device as recorded. */
static inline int device_now(int device)
{
    return __builtin_expect(device == DEVICE_CURRENT, 0) ? xp_current_device : device;
}

void xp_copy_classify(const xp_copy_call *c, xp_copy_facts *f)
{
    const copy_fields k = fields_of(c);
    classify_copy(&k, &f->ws, &f->wd, &f->direction, &f->host_mem, &f->device);
    f->device = device_now(f->device);
}

/* A copy record's direction, host_mem, blocking and kind bytes as one word,
 * in the record's order (xp_rec_copy.direction onwards). */
_Static_assert(offsetof(xp_rec_copy, host_mem) == offsetof(xp_rec_copy, direction) + 1 &&
                   offsetof(xp_rec_copy, blocking) == offsetof(xp_rec_copy, direction) + 2 &&
                   offsetof(xp_rec_copy, kind) == offsetof(xp_rec_copy, direction) + 3,
               "a copy record's facts word is four bytes in a row");
static inline uint32_t facts_word(uint8_t dir, uint8_t host_mem, uint8_t blocking, int kind)
{
    uint8_t b[4] = {dir, host_mem, blocking, kind < 0 || kind > 254 ? 255 : (uint8_t)kind};
    uint32_t w;
    memcpy(&w, b, sizeof w);
    return w;
}

/* A facts_word's direction and blocking bytes. */
static inline uint8_t facts_dir(const xp_pair_memo *m)
{
    return (uint8_t)m->facts;
}

static inline uint8_t facts_blocking(const xp_pair_memo *m)
{
    return (uint8_t)(m->facts >> 16);
}

/* What a copy's record says that follows from its sides, its kind and its
 * nature (classify_copy's results). */
static inline __attribute__((always_inline)) void
facts_of(const copy_fields *k, bool async, xp_where *ws, xp_where *wd, uint32_t *word,
         int *device)
{
    uint8_t dir, host_mem;
    classify_copy(k, ws, wd, &dir, &host_mem, device);
    *word = facts_word(dir, host_mem, blocking_of(async, dir, host_mem), k->kind);
}

/* A plain 1D copy (no forced sides, no migration, no device given): the
 * pair memo's facts key for its kind and nature (one lea; never 0). */
static inline uint64_t plain_key(int kind, bool async)
{
    return ((uint64_t)(uint32_t)kind << 1 | async) + 1;
}

/* plain_facts past the memo (out of line; the copy by value, so that the
 * hot caller's description of it stays in registers): worked out into t's
 * pair memo, which then holds them for the next call between the same
 * sides; where no known range holds a side, for this call only (its sizes
 * 0: no call hits it). */
static __attribute__((noinline)) void plain_facts_slow(xp_thread *t, uint64_t src, uint64_t dst,
                                                       int kind, bool async)
{
    const copy_fields k = {.src = src, .dst = dst, .kind = kind, .async = async};
    uint64_t gen = xp_registry_generation();
    xp_pair_memo f = {.generation = gen};
    facts_of(&k, async, &f.ws, &f.wd, &f.facts, &f.facts_device);
    xp_pair_memo *p = &t->pair;
    if (xp_pair_hit(t, gen, src, dst) == NULL)
        *p = f;
    p->ws = f.ws;
    p->wd = f.wd;
    p->facts_key = plain_key(kind, async);
    p->facts = f.facts;
    p->facts_device = f.facts_device;
    p->launch_count = launch_count(f.facts_device);   /* NULL for DEVICE_CURRENT */
    p->device_asked = false;
}

/* A plain 1D copy's facts, in t's pair memo: from its memory of the last
 * copy when that was between the same sides with the same kind and nature
 * (a copy loop's every call but the first), else worked out.  Read in place:
 * only a recorded call changes it, and none is recorded on the thread while
 * this one writes its record (a signal handler's call then is not:
 * xp_engine.h, xp_callee_clean). */
static inline __attribute__((always_inline)) xp_pair_memo *plain_facts(xp_thread *t,
                                                                       const copy_fields *k)
{
    if (__builtin_expect(xp_pair_hit(t, xp_registry_generation(), k->src, k->dst) == NULL ||
                             t->pair.facts_key != plain_key(k->kind, k->async),
                         0))
        plain_facts_slow(t, k->src, k->dst, k->kind, k->async);
    return &t->pair;
}

/* A copy record: an ordinary call's (run NULL), or one of the copies a
 * graph launch ran (its node and the launch's stack; held the caller no
 * more than the launch did, and pairs with no sync); k: fields_of(c). */
static inline __attribute__((always_inline)) void
write_copy(const xp_scope *s, const xp_copy_call *c, const copy_fields *k, int status,
           const xp_graph_run *run)
{
    /* The facts, read where they are used (not copied into registers that
     * would be spilled across the calls below): a plain copy's in its
     * thread's pair memo, any other's worked out here. */
    xp_pair_memo own;
    xp_pair_memo *m = &own;
    if (k->sides == 0 && !k->migrate && !k->has_device && run == NULL) {
        m = plain_facts(xp_scope_thread(s), k);
    } else {
        /* A graph's copies run asynchronously, except that a launch stages a
         * pageable host side as cudaMemcpyAsync does, holding its caller. */
        facts_of(k, run != NULL || k->async || k->migrate, &own.ws, &own.wd, &own.facts,
                 &own.facts_device);
        own.launch_count = NULL;
        own.device_asked = false;
    }
    const xp_where *ws = &m->ws, *wd = &m->wd;
    int device = device_now(m->facts_device);
    /* A copy outside a graph ends before the graph's two fields: 120 bytes,
     * not 136, which the readers take as a whole record with those fields 0
     * (issue 15: a copy's time is mostly its record's cold cache lines).
     * Constant in each caller, since this is inlined with `run` known. */
    const uint32_t size = run != NULL ? sizeof(xp_rec_copy) : XP_REC_COPY_V4_SIZE;
    xp_rec_copy *r = reserve_call_at(XP_REC_COPY, k->api, size, s, status, device,
                                     run != NULL ? &run->node_stack : NULL);
    if (r == NULL)
        return;
    /* After the record's end time: hashing is not part of the call.  The
     * journal's space is zero (xp_journal_reserve): what stays 0 without a
     * fingerprint (and, below, outside a graph) is not written (issue 15);
     * the fingerprint's kind goes straight into it (XP_FP_NONE is 0). */
    xp_fp_mode mode = xp_sess.cfg.fingerprint;
    if (status == 0 && mode != XP_FP_MODE_OFF && !k->migrate) {
        /* A 1D copy's side is its address: hashed without a region's
         * description (the hottest copies). */
        int side = k->height == 0 ? xp_fp_side(facts_dir(m), ws, wd, k->sides, !k->async) : 0;
        uint64_t fp = 0;
        if (k->height != 0)
            fp = xp_fp_copy(c, facts_dir(m), ws, wd, mode, !k->async, &r->fingerprint_kind);
        else if (side != 0)
            fp = xp_fp_bytes(side == XP_FP_SRC ? k->src : k->dst, k->bytes, mode,
                             &r->fingerprint_kind);
        r->fingerprint = fp;
        if (r->fingerprint_kind == XP_FP_SAMPLED && facts_dir(m) == XP_DIR_H2D)
            r->full_fingerprint = k->height == 0 ? xp_fp_confirm_bytes(k->src, k->bytes, fp)
                                                 : xp_fp_confirm(c, fp);
    }
    r->kernel_seq = m->launch_count != NULL
                        ? atomic_load_explicit(m->launch_count, memory_order_relaxed)
                        : xp_kernel_seq(device >= 0 ? device : xp_current_device);
    r->src = k->src;
    r->dst = k->dst;
    r->bytes = k->bytes;
    r->stream = k->stream;
    memcpy(&r->direction, &m->facts, sizeof m->facts);
    r->nvtx_range = xp_nvtx_top;
    if (run != NULL) {
        r->graph_node = run->node_id;
        r->launch_stack_id = run->launch_stack;
    }
    if (status == 0 && facts_blocking(m) != XP_BLOCK_SYNC && run == NULL) {
        xp_last_copy *last = &xp_scope_thread(s)->last_copy;
        last->valid = true;
        last->device = device;
        last->start_ns = r->c.start_ns;
        last->stream = k->stream;
        last->d2h =
            facts_dir(m) == XP_DIR_D2H && r->fingerprint_kind == XP_FP_NONE && !k->migrate;
        if (last->d2h) {
            last->call = *c;
            last->wd = *wd;
        }
    }
    xp_journal_commit_sized(r, size);
    /* Once per memo, not per call: the device's UUID stays asked for. */
    if (status == 0 && !m->device_asked) {
        xp_devices_used(device);
        m->device_asked = m->facts_device != DEVICE_CURRENT;
    }
}

/* A copy call's record: a graph node while its stream captures, else the
 * copy that ran.  Inlined into xp_record_copy (every kind of copy) and
 * xp_copy_1d (the 1D copies' whole call). */
/* The rest of a copy call's record once no capture claimed it: the copy
 * that ran (inside the capture window). */
static inline __attribute__((always_inline)) void record_ran(const xp_scope *s,
                                                             const xp_copy_call *c, int status)
{
    const copy_fields k = fields_of(c);
    forget_last_copy(s);
    if (xp_window_skip(s->start_ns, XP_WIN_COPY))
        return;
    write_copy(s, c, &k, status, NULL);
}

/* While a capture is in progress anywhere, a copy on a capturing stream is
 * a graph node, not a copy that ran; a few instructions otherwise (nearly
 * always).  Checked by the callers before they describe the copy, so that
 * the description of the common case never leaves their frame. */
static inline bool captures_now(void)
{
    return __builtin_expect(atomic_load_explicit(&xp_graph_captures, memory_order_relaxed) != 0, 0);
}

void xp_record_copy(const xp_scope *s, const xp_copy_call *c, int status)
{
    if (!s->recording)
        return;
    if (captures_now() && status == 0 && xp_graph_capture_copy(s, c)) {
        forget_last_copy(s);
        return;
    }
    record_ran(s, c, status);
}

/* A 1D copy described as its hook gives it. */
static inline __attribute__((always_inline)) xp_copy_call
copy_1d(xp_api api, uint64_t dst, uint64_t src, uint64_t bytes, int kind, uint64_t stream,
        bool async)
{
    xp_copy_call c;
    c.api = api;
    c.kind = kind;
    c.dst = dst;
    c.src = src;
    c.bytes = bytes;
    c.stream = stream;
    c.width = c.height = c.spitch = c.dpitch = 0;
    c.depth = 0;   /* sslice and dslice are not read */
    c.migrate = 0;
    c.async = async;
    c.device_sides = 0;
    c.has_device = false;
    c.device = 0;
    return c;
}

/* A 1D copy's path after its real call returned: xp_scope_returned, the
 * record of a plain xp_copy_call, xp_scope_leave. */
static inline __attribute__((always_inline)) void
copy_done(xp_scope *s, xp_api api, uint64_t dst, uint64_t src, uint64_t bytes, int kind,
          uint64_t stream, bool async, int status)
{
    if (xp_scope_returned(s)) {
        if (captures_now()) {
            xp_copy_call c = copy_1d(api, dst, src, bytes, kind, stream, async);
            const xp_scope t = *s;   /* s does not escape (xp_scope_enter) */
            xp_record_copy(&t, &c, status);
        } else {
            xp_copy_call c = copy_1d(api, dst, src, bytes, kind, stream, async);
            record_ran(s, &c, status);
        }
    }
    xp_scope_leave(s);
}

int xp_copy_1d(void *dst, const void *src, size_t bytes, int kind, void *stream,
               void (*real)(void), unsigned how, uintptr_t ret)
{
    xp_api api = (xp_api)(how & (XP_COPY_1D_ASYNC - 1));
    bool async = how & XP_COPY_1D_ASYNC;
    xp_scope s;
    s.site.ret = ret;
    /* Where the hook put ret, a fixed distance from the program's stack
     * pointer (a stand-in for it, xp_stack.h); not s's own address, so that
     * s stays in registers. */
    s.site.sp = (uintptr_t)&ret;
    xp_scope_enter(&s, (uintptr_t)real);
    /* The function's own type is the runtime's (enum, cudaStream_t): the
     * same arguments in the same registers. */
    int rc = async ? ((xp_copy_async_real_fn)real)(dst, src, bytes, kind, stream)
                   : ((xp_copy_real_fn)real)(dst, src, bytes, kind);
    /* A recorded call's thread has a block, which knows where errno is. */
    int *err = s.recording ? xp_scope_thread(&s)->errno_at : &errno;
    int saved_errno = *err;
    copy_done(&s, api, (uint64_t)(uintptr_t)dst, (uint64_t)(uintptr_t)src, bytes, kind,
              (uint64_t)(uintptr_t)stream, async, rc);
    *err = saved_errno;
    return rc;
}

void xp_record_graph_copy_run(const xp_scope *s, const xp_copy_call *c, const xp_graph_run *run)
{
    const copy_fields k = fields_of(c);
    write_copy(s, c, &k, 0, run);
}

/* Kept in the handles table, not the memory table (xp_registry.h). */
static bool handle_kind(uint8_t k)
{
    return k == XP_ALLOC_RESERVED || k == XP_ALLOC_PHYSICAL || k == XP_ALLOC_ARRAY;
}

#define XP_HANDLE_KINDS                                                        \
    ((1u << XP_ALLOC_RESERVED) | (1u << XP_ALLOC_PHYSICAL) | (1u << XP_ALLOC_ARRAY))

void xp_record_alloc_on(const xp_scope *s, xp_api api, uint8_t kind, uint64_t ptr,
                        uint64_t bytes, int device, int status)
{
    if (!s->recording)
        return;
    forget_last_copy(s);
    /* Host memory and address space belong to no device. */
    bool no_device = kind == XP_ALLOC_PINNED || kind == XP_ALLOC_REGISTERED ||
                     kind == XP_ALLOC_RESERVED;
    if (device == XP_DEVICE_OF_KIND)
        device = no_device ? -1 : xp_current_device;
    uint64_t id = 0, mem_free = 0, mem_total = 0;
    if (status == 0) {
        id = atomic_fetch_add_explicit(&next_alloc_id, 1, memory_order_relaxed);
        /* A physical allocation or an array is a handle: one value, whatever
         * its bytes. */
        uint64_t size = kind == XP_ALLOC_PHYSICAL || kind == XP_ALLOC_ARRAY || bytes == 0 ? 1
                                                                                          : bytes;
        xp_range range = {.base = ptr, .size = size, .alloc_id = id, .kind = kind,
                          .device = device};
        if (handle_kind(kind))
            xp_table_add(XP_TABLE_HANDLES, &range);
        else
            xp_registry_add(&range);
    } else if (status == 2 /* cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY */ &&
               !no_device && kind != XP_ALLOC_MAPPED) {
        /* Out-of-memory forensics: what the device had left right then. */
        xp_driver_mem_info(&mem_free, &mem_total);
    }
    xp_rec_alloc *r = reserve_call(XP_REC_ALLOC, api, sizeof *r, s, status, device);
    if (r == NULL)
        return;
    r->alloc_id = id;
    r->ptr = status == 0 ? ptr : 0;
    r->bytes = bytes;
    r->mem_free = mem_free;
    r->mem_total = mem_total;
    r->kind = kind;
    xp_journal_commit(r);
    if (status == 0)
        xp_devices_used(device);
}

void xp_record_free_span(const xp_scope *s, xp_api api, unsigned kinds, uint64_t ptr,
                         uint64_t span, int status)
{
    if (!s->recording)
        return;
    forget_last_copy(s);
    if (ptr == 0 && status == 0)
        return;
    bool handles = (kinds & XP_HANDLE_KINDS) != 0;
    uint64_t at = ptr;
    for (bool first = true;; first = false) {
        xp_range range = {0};   /* alloc_id 0 unless a live allocation is removed */
        if (status == 0 && handles)
            xp_table_remove(XP_TABLE_HANDLES, at, kinds, &range);
        else if (status == 0)
            xp_registry_remove(at, kinds, &range);
        /* Past the first, only allocations the span really ended. */
        if (!first && range.alloc_id == 0)
            return;
        int device = range.alloc_id ? range.device : xp_current_device;
        xp_rec_free *r = reserve_call(XP_REC_FREE, api, sizeof *r, s, status, device);
        if (r == NULL)
            return;
        r->alloc_id = range.alloc_id;
        r->ptr = at;
        r->kind = range.alloc_id ? range.kind : 0;
        xp_journal_commit(r);
        if (range.alloc_id == 0 || range.size >= ptr + span - range.base)
            return;
        at = range.base + range.size;
    }
}

/* Whether sync call `api` on `handle` waits for the thread's last copy. */
static bool sync_completes_last_copy(const xp_last_copy *last_copy, xp_api api,
                                     uint64_t handle)
{
    switch (api) {
    case XP_API_cudaStreamSynchronize:
    case XP_API_cudaStreamSynchronize_ptsz:
    case XP_API_cuStreamSynchronize:
    case XP_API_cuStreamSynchronize_ptsz:
        return handle == last_copy->stream;
    case XP_API_cudaDeviceSynchronize:
    case XP_API_cuCtxSynchronize:
    case XP_API_cuCtxSynchronize_v2:
        return last_copy->device < 0 || last_copy->device == xp_current_device;
    default:
        return false;   /* an event: what it marks is not known here */
    }
}

void xp_record_sync(const xp_scope *s, xp_api api, uint64_t handle, int status)
{
    if (!s->recording)
        return;
    xp_last_copy *last = &xp_scope_thread(s)->last_copy;
    bool paired = last->valid && status == 0 && sync_completes_last_copy(last, api, handle);
    last->valid = false;
    if (xp_window_skip(s->start_ns, XP_WIN_SYNC))
        return;
    xp_rec_sync *r = reserve_call(XP_REC_SYNC, api, sizeof *r, s, status, xp_current_device);
    if (r == NULL)
        return;
    r->stream = handle;
    r->nvtx_range = xp_nvtx_top;
    r->copy_start_ns = paired ? last->start_ns : 0;
    uint8_t fp_kind = XP_FP_NONE;
    /* The copy's bytes have all arrived now: its destination can be read. */
    r->fingerprint = paired && last->d2h
                         ? xp_fp_copy(&last->call, XP_DIR_D2H, &last->wd, &last->wd,
                                      xp_sess.cfg.fingerprint, true, &fp_kind)
                         : 0;
    r->fingerprint_kind = fp_kind;
    memset(r->reserved, 0, sizeof r->reserved);
    xp_journal_commit_sized(r, sizeof *r);
}

void xp_record_call(const xp_scope *s, xp_api api, uint64_t arg0, int status)
{
    if (!s->recording)
        return;
    forget_last_copy(s);   /* a call between a copy and a sync breaks the pair */
    if (status == 0)
        return;
    if (xp_window_skip(s->start_ns, XP_WIN_CALL))
        return;
    xp_rec_call *r = reserve_call(XP_REC_CALL, api, sizeof *r, s, status, xp_current_device);
    if (r == NULL)
        return;
    r->arg0 = arg0;
    xp_journal_commit(r);
}

uint8_t xp_memset_host_mem(uint64_t dst, int *device)
{
    xp_where w;
    xp_classify(dst, &w);
    *device = w.device >= 0 && (w.kind == XP_ALLOC_DEVICE || w.kind == XP_ALLOC_MANAGED)
                  ? w.device
                  : xp_current_device;
    return w.kind == XP_ALLOC_DEVICE ? XP_HOST_NONE : host_mem_of(&w);
}

/* A memset record: an ordinary call's (run NULL) or one a graph launch ran. */
static void write_memset(const xp_scope *s, xp_api api, uint64_t dst, int value, uint64_t bytes,
                         uint64_t stream, bool async, int status, const xp_graph_run *run)
{
    int device;
    uint8_t host_mem = xp_memset_host_mem(dst, &device);
    /* NVIDIA's API synchronization behavior: a memset is asynchronous with
     * respect to the host, except the synchronous API on pinned host memory
     * or managed memory, which completes before it returns. */
    uint8_t blocking = !async && host_mem != XP_HOST_NONE ? XP_BLOCK_SYNC : XP_BLOCK_ASYNC;
    xp_rec_memset *r = xp_reserve_call(XP_REC_MEMSET, api, sizeof *r, s, status, device,
                                       run != NULL ? &run->node_stack : NULL);
    if (r == NULL)
        return;
    r->dst = dst;
    r->bytes = bytes;
    r->stream = stream;
    r->kernel_seq = xp_kernel_seq(device);
    r->value = value;
    r->host_mem = host_mem;
    r->blocking = blocking;
    r->nvtx_range = xp_nvtx_top;
    r->graph_node = run != NULL ? run->node_id : 0;
    r->launch_stack_id = run != NULL ? run->launch_stack : 0;
    xp_journal_commit(r);
}

void xp_record_memset(const xp_scope *s, xp_api api, uint64_t dst, int value, uint64_t bytes,
                      uint64_t stream, bool async, int status)
{
    if (!s->recording)
        return;
    forget_last_copy(s);
    if (__builtin_expect(atomic_load_explicit(&xp_graph_captures, memory_order_relaxed) != 0, 0) &&
        status == 0 && xp_graph_capture_memset(s, api, dst, value, bytes, stream))
        return;
    if (xp_window_skip(s->start_ns, XP_WIN_MEMSET))
        return;
    write_memset(s, api, dst, value, bytes, stream, async, status, NULL);
}

void xp_record_graph_memset_run(const xp_scope *s, xp_api api, uint64_t dst, int value,
                                uint64_t bytes, const xp_graph_run *run)
{
    write_memset(s, api, dst, value, bytes, run->stream, true, 0, run);
}

void xp_record_launch(const xp_scope *s, xp_api api, uint64_t func, int status)
{
    if (!s->recording)
        return;
    forget_last_copy(s);
    if (status != 0) {
        xp_record_call(s, api, func, status);
        return;
    }
    /* A launch goes to the current device (a stream of another one is an
     * error), so that is the device whose count grows. */
    int device = xp_current_device;
    if ((unsigned)device < XP_MAX_DEVICES)
        atomic_fetch_add_explicit(&launches[device].n, 1, memory_order_relaxed);
}

void xp_record_profiler(const xp_scope *s, xp_api api, bool start, int status)
{
    if (!s->recording)
        return;
    if (status == 0)
        xp_window_profiler(start);
    xp_record_call(s, api, 0, status);
}

void xp_record_after_fork(void)
{
    xp_thread *t = xp_self;
    if (t != NULL) {
        t->last_copy.valid = false;
        t->pair.facts_key = 0;   /* its device_asked is the parent's */
    }
    for (size_t i = 0; i < XP_MAX_DEVICES; i++)
        atomic_store_explicit(&launches[i].n, 0, memory_order_relaxed);
}
