/* xp_devices.h: the facts that tell which physical GPU a process used (meta). */
#ifndef XP_DEVICES_H
#define XP_DEVICES_H

#include <stdatomic.h>
#include <stdint.h>

#include "xp_journal.h"

/* At session start: meta cuda_visible_devices and local_rank, when set. */
void xp_devices_start_meta(xp_journal *j, uint32_t tid);

/* One bit per ordinal below 64 whose UUID has been asked for
 * (xp_devices.c owns it). */
extern _Atomic uint64_t xp_devices_asked __attribute__((visibility("hidden")));

/* xp_devices_used for an ordinal not asked for yet (out of line). */
void xp_devices_first_use(int device);

/* A call on device ordinal `device` succeeded: the first time for that
 * ordinal, its UUID goes into meta (device_uuid.N).  Inline: every copy
 * calls it, and the common case is one relaxed load (already asked). */
static inline void xp_devices_used(int device)
{
    if ((unsigned)device < 64 &&
        !(atomic_load_explicit(&xp_devices_asked, memory_order_relaxed) & (1ull << device)))
        xp_devices_first_use(device);
}

#endif
