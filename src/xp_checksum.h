/* xp_checksum.h: the checksum a version 5 journal record carries in its commit word. */
#ifndef XP_CHECKSUM_H
#define XP_CHECKSUM_H

#include <stdint.h>

/* Inlined: the writer computes it for every record on the hot path, where a
 * call into libxxhash would cost as much as the hash of a small record. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "xp_format.h"

/* The checksum of a record of `size` bytes (its header's size, at least
 * the header's): the low half of XXH3-64 of every byte after the commit word,
 * so the type, size and thread are covered as well as the body.  Never 0,
 * which means "not committed": a hash of 0 becomes 1. */
static inline uint32_t xp_record_checksum(const void *record, uint32_t size)
{
    uint32_t h = (uint32_t)XXH3_64bits((const unsigned char *)record + sizeof(uint32_t),
                                       size - sizeof(uint32_t));
    return h != 0 ? h : 1u;
}

#endif
