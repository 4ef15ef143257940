/* xp_fingerprint.c: content hashes (XXH3) of what a copy moved, and the full
 * hash that confirms a sampled upload which looks like a repeat. */
#include "xp_fingerprint.h"

#include <stdatomic.h>
#include <string.h>

/* XXH3 compiled in (static inline): a fingerprint of a small copy is a few
 * nanoseconds, which a call into libxxhash would double; and XXH3_state_t
 * can live on the stack (the hot path never allocates). */
#define XXH_INLINE_ALL
#include <xxhash.h>

/* The bytes a copy moved on one side: `height` rows of `width` bytes, rows
 * `pitch` apart (a 1D copy is one row), in slices of `slice_rows` rows
 * `slice` bytes apart (a 2D copy is one slice).  Offsets below are into the
 * rows laid end to end, so a 2D or 3D copy of contiguous rows hashes as the
 * same bytes copied in one piece would. */
typedef struct fp_region {
    const unsigned char *base;
    uint64_t width, height, pitch;
    uint64_t slice_rows, slice;
} fp_region;

/* The first byte of row `row` (counted across slices). */
static inline const unsigned char *fp_row(const fp_region *r, uint64_t row)
{
    return r->base + row / r->slice_rows * r->slice + row % r->slice_rows * r->pitch;
}

static void fp_feed(XXH3_state_t *st, const fp_region *r, uint64_t off, uint64_t len)
{
    while (len > 0) {
        uint64_t row = off / r->width, col = off % r->width;
        uint64_t n = r->width - col < len ? r->width - col : len;
        XXH3_64bits_update(st, fp_row(r, row) + col, (size_t)n);
        off += n;
        len -= n;
    }
}

/* fingerprint() for what is not one contiguous exact range: many rows, or
 * sampled.  Out of line: its hash state (600 bytes, 64-byte aligned) would
 * otherwise cost every small copy a large stack frame. */
static __attribute__((noinline)) uint64_t fingerprint_rows(const fp_region *r, uint64_t total,
                                                           bool exact)
{
    /* Zeroed: XXH3_*_reset leaves fields the compiler cannot prove it sets
     * (-Wmaybe-uninitialized once inlined); these copies are of many rows or
     * over 64 KiB, where 600 bytes of memset do not show. */
    XXH3_state_t st;
    memset(&st, 0, sizeof st);
    if (exact) {
        XXH3_64bits_reset(&st);
        for (uint64_t row = 0; row < r->height; row++)
            XXH3_64bits_update(&st, fp_row(r, row), (size_t)r->width);
        return XXH3_64bits_digest(&st);
    }
    XXH3_64bits_reset_withSeed(&st, total);
    for (uint64_t i = 0; i < XP_FP_BLOCKS; i++)
        fp_feed(&st, r, (total - XP_FP_BLOCK) * i / (XP_FP_BLOCKS - 1), XP_FP_BLOCK);
    return XXH3_64bits_digest(&st);
}

/* Fingerprints r: every byte when full or when it is no larger than
 * XP_FP_THRESHOLD, otherwise XP_FP_BLOCKS blocks of XP_FP_BLOCK bytes at
 * offsets (size - XP_FP_BLOCK) * i / (XP_FP_BLOCKS - 1), the first and the
 * last bytes included, hashed with the size as seed: equal content of equal
 * size gives equal fingerprints.  *kind (OUT) says which. */
static inline uint64_t fingerprint(const fp_region *r, bool full, uint8_t *kind)
{
    uint64_t total = r->width * r->height;
    bool exact = full || total <= XP_FP_THRESHOLD;
    *kind = exact ? XP_FP_FULL : XP_FP_SAMPLED;
    if (exact && (r->height <= 1 ||
                  (r->pitch == r->width && r->slice == r->slice_rows * r->pitch)))
        return XXH3_64bits(r->base, (size_t)total);   /* contiguous: the common case */
    return fingerprint_rows(r, total, exact);
}

/* A 1D copy's side: one row. */
static fp_region contiguous(uint64_t addr, uint64_t bytes)
{
    return (fp_region){.base = (const unsigned char *)(uintptr_t)addr, .width = bytes,
                       .height = 1, .pitch = bytes, .slice_rows = 1, .slice = bytes};
}

/* The region of side `dst` (else the source) of copy c at addr: false when
 * nothing moved. */
static bool copy_region(const xp_copy_call *c, bool dst, fp_region *r)
{
    uint64_t addr = dst ? c->dst : c->src, pitch = dst ? c->dpitch : c->spitch,
             slice = dst ? c->dslice : c->sslice;
    *r = contiguous(addr, c->bytes);
    if (c->height > 0) {
        if (c->width == 0 || c->bytes == 0)
            return false;   /* nothing moved (a 3D copy of depth 0, too) */
        r->width = c->width;
        r->pitch = pitch;
        r->slice_rows = c->height;
        r->height = c->height;
        r->slice = c->height * pitch;
        if (c->depth > 1) {
            r->height = c->height * c->depth;
            r->slice = slice;
        }
    }
    return true;
}

uint64_t xp_fp_copy(const xp_copy_call *c, uint8_t dir, const xp_where *ws, const xp_where *wd,
                    xp_fp_mode mode, bool complete, uint8_t *kind)
{
    *kind = XP_FP_NONE;
    if (mode == XP_FP_MODE_OFF || c->migrate)
        return 0;               /* off, or managed memory: never read */
    int side = xp_fp_side(dir, ws, wd, c->device_sides, complete);
    fp_region r;
    if (side == 0 || !copy_region(c, side == XP_FP_DST, &r))
        return 0;
    return fingerprint(&r, mode == XP_FP_MODE_FULL, kind);
}

uint64_t xp_fp_bytes(uint64_t addr, uint64_t bytes, xp_fp_mode mode, uint8_t *kind)
{
    /* fingerprint()'s first case, without the region (a tiny copy's hash
     * is a few dozen instructions: issue 15). */
    if (mode == XP_FP_MODE_FULL || bytes <= XP_FP_THRESHOLD) {
        *kind = XP_FP_FULL;
        return XXH3_64bits((const void *)(uintptr_t)addr, (size_t)bytes);
    }
    fp_region r = contiguous(addr, bytes);
    return fingerprint(&r, mode == XP_FP_MODE_FULL, kind);
}

/* Who owns it: every recording thread, without a lock.  Each field is an
 * atomic word; a slot read while another thread rewrites it may mix two
 * uploads, which at worst costs a full hash that confirms nothing (the
 * analyzer compares the full hashes themselves, never this table).
 * Keyed by the content's sample, not by where it goes: the same weights
 * sent every step into whatever buffer an allocator hands out (PyTorch's
 * .to(device) of an unchanged tensor) are the repeat worth confirming. */
static struct {
    _Atomic uint64_t bytes, sample;
} confirm_slots[XP_FP_CONFIRM_SLOTS];

/* Whether an earlier sampled upload of `bytes` had the same sample (and
 * this one is remembered for the next). */
static bool seen_sample(uint64_t bytes, uint64_t sampled)
{
    uint64_t h = sampled ^ (bytes * UINT64_C(0x9E3779B97F4A7C15));
    __typeof__(&confirm_slots[0]) slot = &confirm_slots[(h ^ (h >> 32)) % XP_FP_CONFIRM_SLOTS];
    bool repeat = atomic_load_explicit(&slot->bytes, memory_order_relaxed) == bytes &&
                  atomic_load_explicit(&slot->sample, memory_order_relaxed) == sampled;
    if (!repeat) {
        atomic_store_explicit(&slot->bytes, bytes, memory_order_relaxed);
        atomic_store_explicit(&slot->sample, sampled, memory_order_relaxed);
    }
    return repeat;
}

static uint64_t confirm(const fp_region *r)
{
    uint8_t kind;
    uint64_t full = fingerprint(r, true, &kind);
    return full ? full : 1;   /* 0 says "not taken" */
}

uint64_t xp_fp_confirm(const xp_copy_call *c, uint64_t sampled)
{
    fp_region r;
    if (!seen_sample(c->bytes, sampled) || !copy_region(c, false, &r))
        return 0;
    return confirm(&r);
}

uint64_t xp_fp_confirm_bytes(uint64_t addr, uint64_t bytes, uint64_t sampled)
{
    if (!seen_sample(bytes, sampled))
        return 0;
    fp_region r = contiguous(addr, bytes);
    return confirm(&r);
}

void xp_fp_confirm_reset(void)
{
    for (size_t i = 0; i < XP_FP_CONFIRM_SLOTS; i++) {
        atomic_store_explicit(&confirm_slots[i].bytes, 0, memory_order_relaxed);
        atomic_store_explicit(&confirm_slots[i].sample, 0, memory_order_relaxed);
    }
}
