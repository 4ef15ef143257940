/* xp_nvtx.h: NVTX ranges in the engine: each thread's stack of open push
 * ranges (what copies, memsets and syncs are attributed to), range records,
 * and interned names.  Called by hooks/xp_nvtx_hooks.c, which decodes NVTX's
 * messages; no NVTX header is needed here. */
#ifndef XP_NVTX_H
#define XP_NVTX_H

#include <stddef.h>
#include <stdint.h>
#include <wchar.h>

#include "xp_tls.h"

/* Open push ranges tracked per thread.  A push deeper than this still
 * returns the right level but is not recorded (meta nvtx_too_deep says so);
 * calls inside it are attributed to the deepest tracked range. */
#define XP_NVTX_DEPTH 64

/* A thread's open push ranges, outermost first, with the domain each was
 * pushed in (NVTX levels are per domain): its part of xp_thread.h's block. */
typedef struct xp_nvtx_thread {
    uint32_t n;               /* entries in id/domain */
    uint32_t overflow;        /* pushes beyond XP_NVTX_DEPTH, untracked */
    uint64_t id[XP_NVTX_DEPTH];
    uint64_t domain[XP_NVTX_DEPTH];
    uint64_t window;          /* bit i: entry i is a capture range (xp_window.h) */
} xp_nvtx_thread;

/* The innermost push range open on this thread (any domain), 0 none: what
 * copy, memset and sync records carry as nvtx_range.  Written only by the
 * thread itself. */
#define xp_nvtx_top (xp_tls.nvtx_top)

/* The hash a name is interned by (never 0): what a capture setting's name
 * is compared with. */
uint64_t xp_nvtx_hash(const char *s, size_t len);

/* Interns the name s[0..len) (len already at most XP_NVTX_NAME_MAX; see
 * xp_nvtx_cut): writes a NAME record the first time this process sees it
 * and returns its hash (never 0).  No malloc, no locks. */
uint64_t xp_nvtx_intern(const char *s, size_t len);

/* The length of s to keep: at most XP_NVTX_NAME_MAX bytes, cut back to a
 * UTF-8 character boundary when longer.  s may be NULL (0). */
size_t xp_nvtx_cut(const char *s);

/* Converts the wide string w (may be NULL) to UTF-8 in out (out_size bytes),
 * stopping before the first character that would not fit; code points that
 * are not Unicode scalar values become U+FFFD.  Locale independent (wcstombs
 * depends on the program's locale).  Returns the bytes written; no NUL is
 * written. */
size_t xp_nvtx_from_wide(const wchar_t *w, char *out, size_t out_size);

/* The NVTX operations, with NVTX's return values.  domain and name are
 * interned hashes (0: the default domain, no name).  Push and pop return -2
 * (NVTX_NO_PUSH_POP_TRACKING), recording nothing, on a thread that could not
 * be given its state (xp_thread.h: no memory to map). */
int xp_nvtx_push(uint64_t domain, uint64_t name);     /* 0-based level in domain */
int xp_nvtx_pop(uint64_t domain);                     /* the level left, -1 none open */
uint64_t xp_nvtx_start(uint64_t domain, uint64_t name); /* a unique nonzero id */
void xp_nvtx_end(uint64_t domain, uint64_t id);

/* The injection initialized: meta nvtx = injected. */
void xp_nvtx_injected(void);

/* In a forked child (from the engine's fork handler): ranges the parent
 * opened are not in the child's database, and names must be written again. */
void xp_nvtx_after_fork(void);

#endif
