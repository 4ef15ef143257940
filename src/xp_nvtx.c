/* xp_nvtx.c: per-thread NVTX range stacks, range and name records. */
#include "xp_nvtx.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include <xxhash.h>

#include "xp_engine.h"
#include "xp_format.h"
#include "xp_journal.h"
#include "xp_seen.h"
#include "xp_thread.h"
#include "xp_window.h"

/* NVTX's value for "the tool does not track push/pop levels"
 * (NVTX_NO_PUSH_POP_TRACKING): what push and pop return on a thread that
 * could get no xp_thread block (the calling thread's open ranges live there). */
#define XP_NVTX_UNTRACKED (-2)

/* Range ids, shared by push and start ranges: unique in the process. */
static _Atomic uint64_t next_range = 1;

/* Names already written to this journal (xp_seen.h). */
#define NAME_SLOTS (1u << 12)
static _Atomic uint64_t names_seen[NAME_SLOTS];

static _Atomic bool too_deep_noted;

size_t xp_nvtx_cut(const char *s)
{
    if (s == NULL)
        return 0;
    size_t n = strnlen(s, XP_NVTX_NAME_MAX + 1);
    if (n <= XP_NVTX_NAME_MAX)
        return n;
    n = XP_NVTX_NAME_MAX;
    /* Back to the first byte of a character: a continuation byte is 10xxxxxx. */
    while (n > 0 && ((unsigned char)s[n] & 0xc0u) == 0x80u)
        n--;
    return n;
}

size_t xp_nvtx_from_wide(const wchar_t *w, char *out, size_t out_size)
{
    size_t n = 0;
    for (; w != NULL && *w != 0; w++) {
        uint32_t c = (uint32_t)*w;
        if (c > 0x10ffffu || (c >= 0xd800u && c <= 0xdfffu))
            c = 0xfffdu;
        unsigned len = c < 0x80u ? 1 : c < 0x800u ? 2 : c < 0x10000u ? 3 : 4;
        if (n + len > out_size)
            break;
        if (len == 1) {
            out[n++] = (char)c;
            continue;
        }
        static const unsigned char lead[] = {0, 0, 0xc0, 0xe0, 0xf0};
        out[n] = (char)(lead[len] | (c >> (6 * (len - 1))));
        for (unsigned i = 1; i < len; i++)
            out[n + i] = (char)(0x80u | ((c >> (6 * (len - 1 - i))) & 0x3fu));
        n += len;
    }
    return n;
}

uint64_t xp_nvtx_hash(const char *s, size_t len)
{
    uint64_t h = XXH3_64bits(s, len);
    return h != 0 ? h : 1;
}

uint64_t xp_nvtx_intern(const char *s, size_t len)
{
    uint64_t h = xp_nvtx_hash(s, len);
    xp_journal *j = xp_engine_journal();
    if (j == NULL || !xp_seen_claim(names_seen, NAME_SLOTS, h))
        return h;
    uint32_t size = xp_record_size(sizeof(xp_rec_name) + len + 1);
    xp_rec_name *r = xp_journal_reserve(j, size);
    if (r == NULL)
        return h;
    r->h.type = XP_REC_NAME;
    r->h.size = size;
    r->h.tid = xp_engine_tid();
    r->hash = h;
    r->len = (uint32_t)len;
    memcpy(r + 1, s, len);    /* the NUL is there: reserved space is zeroed */
    xp_journal_commit(r);
    return h;
}

static void put_range(uint8_t op, uint64_t t, uint64_t id, uint64_t parent, uint64_t name,
                      uint64_t domain, int depth)
{
    xp_journal *j = xp_engine_journal();
    if (j == NULL)
        return;
    xp_rec_nvtx *r = xp_journal_reserve(j, sizeof *r);
    if (r == NULL) {
        xp_engine_call_lost();
        return;
    }
    r->h.type = XP_REC_NVTX;
    r->h.size = sizeof *r;
    r->h.tid = xp_engine_tid();
    r->time_ns = t;
    r->range_id = id;
    r->parent_id = parent;
    r->name = name;
    r->domain = domain;
    r->depth = depth;
    r->op = op;
    xp_journal_commit(r);
}

/* Open ranges of domain among the thread's first n entries. */
static int count_in(const xp_nvtx_thread *T, uint64_t domain, uint32_t n)
{
    int c = 0;
    for (uint32_t i = 0; i < n; i++)
        c += T->domain[i] == domain;
    return c;
}

int xp_nvtx_push(uint64_t domain, uint64_t name)
{
    uint64_t t = xp_now_ns();
    xp_thread *th = xp_thread_get();
    if (th == NULL)
        return XP_NVTX_UNTRACKED;
    xp_nvtx_thread *T = &th->nvtx;
    int level = count_in(T, domain, T->n) + (int)T->overflow;
    if (T->n == XP_NVTX_DEPTH) {
        T->overflow++;
        if (!atomic_exchange(&too_deep_noted, true))
            xp_engine_meta("nvtx_too_deep", "NVTX push ranges nested deeper than 64 on a thread "
                                            "were not recorded");
        return level;
    }
    uint64_t id = atomic_fetch_add_explicit(&next_range, 1, memory_order_relaxed);
    uint64_t parent = xp_nvtx_top;
    T->id[T->n] = id;
    T->domain[T->n] = domain;
    T->n++;
    xp_nvtx_top = id;
    put_range(XP_NVTX_PUSH, t, id, parent, name, domain, level);
    /* After the record: it started the session, whose settings say what
     * a capture range is. */
    if (xp_window_nvtx_opened(domain, name))
        T->window |= 1ull << (T->n - 1);
    return level;
}

int xp_nvtx_pop(uint64_t domain)
{
    uint64_t t = xp_now_ns();
    xp_thread *th = xp_thread_get();
    if (th == NULL)
        return XP_NVTX_UNTRACKED;
    xp_nvtx_thread *T = &th->nvtx;
    if (T->overflow > 0) {
        T->overflow--;
        return count_in(T, domain, T->n) + (int)T->overflow;
    }
    uint32_t i = T->n;
    while (i > 0 && T->domain[i - 1] != domain)
        i--;
    if (i == 0)
        return -1;            /* nothing open in this domain: NVTX's error value */
    i--;
    int level = count_in(T, domain, i);
    uint64_t id = T->id[i];
    bool capture = (T->window >> i) & 1u;
    /* Bit i out, the bits above it down one, as the entries move. */
    T->window = (T->window & ((1ull << i) - 1)) |
                (i + 1 < XP_NVTX_DEPTH ? (T->window >> (i + 1)) << i : 0);
    /* Usually the top; a range of another domain opened inside stays open. */
    memmove(&T->id[i], &T->id[i + 1], (T->n - i - 1) * sizeof T->id[0]);
    memmove(&T->domain[i], &T->domain[i + 1], (T->n - i - 1) * sizeof T->domain[0]);
    T->n--;
    xp_nvtx_top = T->n > 0 ? T->id[T->n - 1] : 0;
    if (id != 0)
        put_range(XP_NVTX_POP, t, id, 0, 0, domain, level);
    if (capture)
        xp_window_nvtx_closed();
    return level;
}

uint64_t xp_nvtx_start(uint64_t domain, uint64_t name)
{
    uint64_t t = xp_now_ns();
    uint64_t id = atomic_fetch_add_explicit(&next_range, 1, memory_order_relaxed);
    put_range(XP_NVTX_START, t, id, 0, name, domain, 0);
    if (xp_window_nvtx_opened(domain, name) && !xp_window_nvtx_note_id(id))
        xp_window_nvtx_closed();
    return id;
}

void xp_nvtx_end(uint64_t domain, uint64_t id)
{
    uint64_t t = xp_now_ns();
    if (id != 0)
        put_range(XP_NVTX_END, t, id, 0, 0, domain, 0);
    if (id != 0 && xp_window_nvtx_take_id(id))
        xp_window_nvtx_closed();
}

void xp_nvtx_injected(void)
{
    xp_engine_meta("nvtx", "injected");
}

void xp_nvtx_after_fork(void)
{
    /* id 0: still open (levels stay right) but recorded nowhere. */
    xp_thread *th = xp_self;
    for (uint32_t i = 0; th != NULL && i < th->nvtx.n; i++)
        th->nvtx.id[i] = 0;
    xp_nvtx_top = 0;
    xp_seen_clear(names_seen, NAME_SLOTS);
    atomic_store(&too_deep_noted, false);
}
