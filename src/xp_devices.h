/* xp_devices.h: the facts that tell which physical GPU a process used (meta). */
#ifndef XP_DEVICES_H
#define XP_DEVICES_H

#include <stdint.h>

#include "xp_journal.h"

/* At session start: meta cuda_visible_devices and local_rank, when set. */
void xp_devices_start_meta(xp_journal *j, uint32_t tid);

/* A call on device ordinal `device` succeeded: the first time for that
 * ordinal, its UUID goes into meta (device_uuid.N). */
void xp_devices_used(int device);

#endif
