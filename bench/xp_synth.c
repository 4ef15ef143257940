/* xp_synth.c: synthetic journals for benchmarks and fuzz seeds (xp_synth.h).
 * Records are laid out exactly as the preload writes them (xp_format.h) and
 * go through the real writer, so a reader cannot tell them from a run's. */
#include "xp_synth.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "xp_api.h"
#include "xp_journal.h"

#define SYNTH_TID 4242
#define SYNTH_LIVE 256          /* allocations kept live at a time */
#define MOD_COUNT 3

/* splitmix64: small, fast and the same everywhere. */
static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

typedef struct synth {
    xp_journal *j;
    uint64_t rng;
    uint64_t now;             /* monotonic ns of the next call */
    uint64_t records, allocations, failures;
} synth;

static void *reserve(synth *s, uint16_t type, uint16_t api, uint32_t size)
{
    xp_rec_header *h = xp_journal_reserve(s->j, size);
    if (h == NULL)
        return NULL;
    h->type = type;
    h->api = api;
    h->size = size;
    h->tid = SYNTH_TID;
    s->records++;
    return h;
}

/* Fills the call header; the clock advances by the call and a gap after it. */
static void call(synth *s, xp_call *c, uint64_t dur, uint64_t stack, int status)
{
    c->start_ns = s->now;
    c->end_ns = s->now + dur;
    c->stack_id = stack;
    c->status = status;
    c->device = 0;
    s->now += dur + 200 + next_rand(&s->rng) % 2000;
}

static int put_meta(synth *s, const char *key, const char *value)
{
    size_t kl = strlen(key), vl = strlen(value);
    xp_rec_meta *m = reserve(s, XP_REC_META, 0, xp_record_size(sizeof *m + kl + vl + 2));
    if (m == NULL)
        return ENOSPC;
    m->key_len = (uint16_t)kl;
    m->value_len = (uint32_t)vl;
    memcpy((char *)(m + 1), key, kl + 1);
    memcpy((char *)(m + 1) + kl + 1, value, vl + 1);
    xp_journal_commit(m);
    return 0;
}

static const struct { const char *path; uint64_t base, size; } mods[MOD_COUNT] = {
    {"/opt/train/bin/train", 0x555555554000ull, 0x200000},
    {"/opt/train/lib/libmodel.so", 0x7f0000000000ull, 0x4000000},
    {"/usr/local/cuda/lib64/libcudart.so.13", 0x7f1000000000ull, 0x1000000},
};

static int put_modules(synth *s)
{
    for (int i = 0; i < MOD_COUNT; i++) {
        size_t pl = strlen(mods[i].path);
        xp_rec_module *m = reserve(s, XP_REC_MODULE, 0, xp_record_size(sizeof *m + pl + 1));
        if (m == NULL)
            return ENOSPC;
        m->base = mods[i].base;
        m->size = mods[i].size;
        m->low = mods[i].base;
        m->build_id_len = 20;
        for (int b = 0; b < 20; b++)
            m->build_id[b] = (uint8_t)(i * 31 + b);
        m->path_len = (uint16_t)pl;
        memcpy(m + 1, mods[i].path, pl + 1);
        xp_journal_commit(m);
    }
    return 0;
}

/* Stack i: a cudart frame or not, a few model frames, then the program's. */
static int put_stack(synth *s, unsigned i)
{
    uint32_t depth = 6 + (uint32_t)(next_rand(&s->rng) % 15);
    xp_rec_stack *st = reserve(s, XP_REC_STACK, 0, (uint32_t)(sizeof *st + depth * 8));
    if (st == NULL)
        return ENOSPC;
    st->stack_id = (0x5354000000000000ull | i) + 1; /* never 0 */
    st->depth = depth;
    uint64_t *f = (uint64_t *)(st + 1);
    for (uint32_t d = 0; d < depth; d++) {
        int m = d == 0 && i % 2 ? 2 : d < depth / 2 ? 1 : 0;
        f[d] = mods[m].base + 0x1000 + (next_rand(&s->rng) % (mods[m].size - 0x2000));
    }
    xp_journal_commit(st);
    return 0;
}

static uint64_t stack_of(synth *s, unsigned stacks)
{
    /* Skewed: a few hot sites make most calls, as in a training loop. */
    uint64_t r = next_rand(&s->rng);
    unsigned i = (unsigned)(r % 8 == 0 ? (r >> 8) % stacks : (r >> 8) % (stacks < 16 ? stacks : 16));
    return (0x5354000000000000ull | i) + 1;
}

static int put_copy(synth *s, uint64_t stack, uint64_t kernel_seq)
{
    uint64_t r = next_rand(&s->rng);
    xp_rec_copy *c = reserve(s, XP_REC_COPY, 0, sizeof *c);
    if (c == NULL)
        return ENOSPC;
    unsigned dir = 1 + (unsigned)(r % 10 < 6 ? 0 : r % 10 < 9 ? 1 : 2); /* H2D, D2H, D2D */
    unsigned sz = (unsigned)((r >> 8) % 100);
    c->bytes = sz < 60 ? 4u << ((r >> 16) % 11)           /* 4 B .. 4 KiB */
             : sz < 97 ? 65536u << ((r >> 16) % 7)        /* 64 KiB .. 4 MiB */
             : 16u << 20;                                 /* 16 MiB */
    bool async = (r >> 24) % 3 != 0;
    c->c.h.api = async ? XP_API_cudaMemcpyAsync : XP_API_cudaMemcpy;
    c->direction = (uint8_t)dir;
    c->host_mem = dir == XP_DIR_D2D ? XP_HOST_NONE : (r >> 28) % 4 == 0 ? XP_HOST_PAGEABLE : XP_HOST_PINNED;
    c->blocking = !async ? XP_BLOCK_SYNC
                : c->host_mem == XP_HOST_PAGEABLE ? XP_BLOCK_ASYNC_PAGEABLE : XP_BLOCK_ASYNC;
    c->kind = (uint8_t)dir;
    c->stream = async ? 0x7000 + ((r >> 32) % 4) * 0x100 : 0;
    uint64_t dev = 0x7e0000000000ull + ((r >> 36) % 4096) * 0x100000;
    uint64_t host = 0x7fff00000000ull + ((r >> 40) % 4096) * 0x100000;
    c->src = dir == XP_DIR_H2D ? host : dev;
    c->dst = dir == XP_DIR_D2H ? host : dev + 0x10000000;
    int status = (r >> 48) % 5000 == 0 ? 1 : 0;
    if (status == 0 && dir != XP_DIR_D2D && !(dir == XP_DIR_D2H && async)) {
        c->fingerprint_kind = c->bytes <= XP_FP_THRESHOLD ? XP_FP_FULL : XP_FP_SAMPLED;
        /* One content in eight repeats (redundant uploads, round trips). */
        c->fingerprint = (r >> 52) % 8 == 0 ? 0xfeed0000ull + (r >> 56) % 16 : next_rand(&s->rng);
    }
    c->kernel_seq = kernel_seq;
    /* A few GB/s, plus a microsecond of latency. */
    call(s, &c->c, 1000 + c->bytes / 8, stack, status);
    if (status != 0)
        s->failures++;
    xp_journal_commit(c);
    return 0;
}

static int put_alloc(synth *s, uint64_t id, uint64_t ptr, uint64_t bytes, uint64_t stack,
                     int status)
{
    xp_rec_alloc *a = reserve(s, XP_REC_ALLOC, XP_API_cudaMalloc, sizeof *a);
    if (a == NULL)
        return ENOSPC;
    a->alloc_id = status == 0 ? id : 0;
    a->ptr = status == 0 ? ptr : 0;
    a->bytes = bytes;
    a->kind = XP_ALLOC_DEVICE;
    if (status != 0) {
        a->mem_free = 1ull << 30;
        a->mem_total = 16ull << 30;
        s->failures++;
    } else {
        s->allocations++;
    }
    call(s, &a->c, 5000, stack, status);
    xp_journal_commit(a);
    return 0;
}

static int put_free(synth *s, uint64_t id, uint64_t ptr, uint64_t stack)
{
    xp_rec_free *f = reserve(s, XP_REC_FREE, XP_API_cudaFree, sizeof *f);
    if (f == NULL)
        return ENOSPC;
    f->alloc_id = id;
    f->ptr = ptr;
    f->kind = XP_ALLOC_DEVICE;
    call(s, &f->c, 3000, stack, 0);
    xp_journal_commit(f);
    return 0;
}

static int put_sync(synth *s, uint64_t stack)
{
    xp_rec_sync *y = reserve(s, XP_REC_SYNC, XP_API_cudaStreamSynchronize, sizeof *y);
    if (y == NULL)
        return ENOSPC;
    y->stream = 0x7000;
    call(s, &y->c, 20000 + next_rand(&s->rng) % 200000, stack, 0);
    xp_journal_commit(y);
    return 0;
}

static int put_memset(synth *s, uint64_t stack, uint64_t kernel_seq)
{
    xp_rec_memset *m = reserve(s, XP_REC_MEMSET, XP_API_cudaMemsetAsync, sizeof *m);
    if (m == NULL)
        return ENOSPC;
    m->dst = 0x7e0000000000ull;
    m->bytes = 1u << 20;
    m->stream = 0x7000;
    m->kernel_seq = kernel_seq;
    m->blocking = XP_BLOCK_ASYNC;
    call(s, &m->c, 2000, stack, 0);
    xp_journal_commit(m);
    return 0;
}

static int put_failed_launch(synth *s, uint64_t stack)
{
    xp_rec_call *k = reserve(s, XP_REC_CALL, XP_API_cudaLaunchKernel, sizeof *k);
    if (k == NULL)
        return ENOSPC;
    k->arg0 = 0x555555560000ull;
    call(s, &k->c, 1000, stack, 98); /* cudaErrorInvalidDeviceFunction */
    s->failures++;
    xp_journal_commit(k);
    return 0;
}

int xp_synth_journal(const char *path, const xp_synth_opts *o, xp_synth_stats *stats)
{
    unsigned stacks = o->stacks > 0 ? o->stacks : 1;
    synth s = {.rng = o->seed, .now = 1000000000ull};
    xp_journal_header h = {.pid = 4242, .ppid = 1, .start_wall_ns = 1700000000000000000ull,
                           .start_mono_ns = s.now};
    int e = xp_journal_create(path, &h, &s.j);
    if (e != 0)
        return e;
    e = put_meta(&s, "cmdline", "python3 train.py --synthetic");
    if (e == 0)
        e = put_meta(&s, "hostname", "synth");
    if (e == 0)
        e = put_modules(&s);
    for (unsigned i = 0; e == 0 && i < stacks; i++)
        e = put_stack(&s, i);

    uint64_t live_id[SYNTH_LIVE] = {0}, live_ptr[SYNTH_LIVE] = {0};
    uint64_t next_id = 1, kernel_seq = 0;
    for (uint64_t i = 0; e == 0 && i < o->copies; i++) {
        uint64_t st = stack_of(&s, stacks);
        if (i % 64 == 0) {
            /* Replace one live allocation: a free, then an allocation. */
            unsigned slot = (unsigned)((i / 64) % SYNTH_LIVE);
            if (live_id[slot] != 0)
                e = put_free(&s, live_id[slot], live_ptr[slot], st);
            live_id[slot] = next_id++;
            live_ptr[slot] = 0x7e0000000000ull + live_id[slot] * 0x200000;
            if (e == 0)
                e = put_alloc(&s, live_id[slot], live_ptr[slot],
                              (1ull << 20) << (next_rand(&s.rng) % 4), st, 0);
        }
        if (e == 0 && i % 100000 == 99999)
            e = put_alloc(&s, 0, 0, 32ull << 30, st, 2); /* out of memory */
        if (e == 0 && i % 10 == 9)
            kernel_seq++;
        if (e == 0 && i % 1000 == 999)
            e = put_sync(&s, st);
        if (e == 0 && i % 500 == 250)
            e = put_memset(&s, st, kernel_seq);
        if (e == 0 && i % 20000 == 10000)
            e = put_failed_launch(&s, st);
        if (e == 0)
            e = put_copy(&s, st, kernel_seq);
    }
    xp_journal_close(s.j);
    if (stats != NULL)
        *stats = (xp_synth_stats){s.records, s.allocations, s.failures};
    return e;
}
