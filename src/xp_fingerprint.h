/* xp_fingerprint.h: content hashes of what a copy moved, read from host
 * memory only, and the confirmation of a sampled upload that looks repeated. */
#ifndef XP_FINGERPRINT_H
#define XP_FINGERPRINT_H

#include <stdbool.h>
#include <stdint.h>

#include "xp_config.h"
#include "xp_engine.h"

/* The fingerprint of copy c in direction dir (*kind OUT: xp_fp_kind, NONE
 * when its content cannot be read from host memory now): the source of an
 * H2D or H2H copy; the destination of a D2H copy when `complete` says its
 * bytes have all arrived (a synchronous API returned, or the synchronization
 * that followed an asynchronous one did).  Never device or managed memory. */
uint64_t xp_fp_copy(const xp_copy_call *c, uint8_t dir, const xp_where *ws, const xp_where *wd,
                    xp_fp_mode mode, bool complete, uint8_t *kind);

/* Host memory the preload may read: ordinary or page-locked, never device
 * memory and never managed memory (reading that from the host would migrate
 * its pages on a real GPU and change the program's performance). */
static inline bool xp_fp_readable(const xp_where *w, bool known_device)
{
    return !known_device &&
           (w->kind == 0 || w->kind == XP_ALLOC_PINNED || w->kind == XP_ALLOC_REGISTERED);
}

/* The side xp_fp_copy reads a copy's fingerprint from (sides: its
 * device_sides), or 0 for none.  Inline: a 1D copy's record asks it itself
 * and hashes with xp_fp_bytes (issue 15: the fingerprint of a tiny copy). */
#define XP_FP_SRC 1
#define XP_FP_DST 2
static inline int xp_fp_side(uint8_t dir, const xp_where *ws, const xp_where *wd, unsigned sides,
                             bool complete)
{
    if ((dir == XP_DIR_H2D || dir == XP_DIR_H2H) && xp_fp_readable(ws, sides & XP_SIDE_SRC_DEVICE))
        return XP_FP_SRC;       /* what was sent: still there at call time */
    if (dir == XP_DIR_D2H && complete && xp_fp_readable(wd, sides & XP_SIDE_DST_DEVICE))
        return XP_FP_DST;       /* what arrived */
    return 0;
}

/* xp_fp_copy of `bytes` contiguous bytes at addr (a 1D copy's side, from
 * xp_fp_side), mode not off. */
uint64_t xp_fp_bytes(uint64_t addr, uint64_t bytes, xp_fp_mode mode, uint8_t *kind);

/* For an upload whose fingerprint `sampled` is XP_FP_SAMPLED: when an
 * earlier sampled upload of the same size had the same sample, wherever it
 * went, the XXH3-64 of every byte of this one (never 0), else 0.  The
 * memory of earlier uploads is a fixed table of XP_FP_CONFIRM_SLOTS samples
 * (a hint: a slot taken by another sample only costs a missed or a useless
 * confirmation, never a wrong one). */
#define XP_FP_CONFIRM_SLOTS 4096u
uint64_t xp_fp_confirm(const xp_copy_call *c, uint64_t sampled);

/* xp_fp_confirm of a 1D copy's source, `bytes` at addr. */
uint64_t xp_fp_confirm_bytes(uint64_t addr, uint64_t bytes, uint64_t sampled);

/* Forgets every remembered upload (a forked child starts afresh). */
void xp_fp_confirm_reset(void);

#endif
