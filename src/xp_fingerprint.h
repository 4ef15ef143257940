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

/* For an upload whose fingerprint `sampled` is XP_FP_SAMPLED: when an
 * earlier sampled upload of the same size had the same sample, wherever it
 * went, the XXH3-64 of every byte of this one (never 0), else 0.  The
 * memory of earlier uploads is a fixed table of XP_FP_CONFIRM_SLOTS samples
 * (a hint: a slot taken by another sample only costs a missed or a useless
 * confirmation, never a wrong one). */
#define XP_FP_CONFIRM_SLOTS 4096u
uint64_t xp_fp_confirm(const xp_copy_call *c, uint64_t sampled);

/* Forgets every remembered upload (a forked child starts afresh). */
void xp_fp_confirm_reset(void);

#endif
