/* fp_common.h: what the measured programs of tests/findings share on top of
 * examples/example_util.h (CHECK, EX_SITE, the do-nothing kernel): a host
 * "compute" pause that makes a step last as long as a real one, and a batch
 * filler whose bytes differ every step (real data never repeats). */
#ifndef FP_COMMON_H
#define FP_COMMON_H

#include "example_util.h"

#include <stdint.h>
#include <string.h>
#include <time.h>

/* The host's share of a step (data decoding, logging): sleeps, so a loaded CPU
 * does not stretch the run. */
static inline void fp_host_work_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* Fills a batch with bytes that depend on the step, as a real sample does. */
static inline void fp_fill_batch(void *buf, size_t bytes, unsigned step)
{
    uint32_t *w = buf;
    uint32_t x = 2654435761u * (step + 1);
    for (size_t i = 0; i < bytes / 4; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        w[i] = x;
    }
}

#endif
