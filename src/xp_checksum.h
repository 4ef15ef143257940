/* xp_checksum.h: the checksum a journal record carries in its commit word (version 5 on). */
#ifndef XP_CHECKSUM_H
#define XP_CHECKSUM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Inlined: versions 5 and 6 hash each record with XXH3, where a call into
 * libxxhash would cost as much as the hash of a small record. */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "xp_format.h"

#if defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
#include <arm_acle.h>
#endif

/* Whether this CPU computes CRC32C in hardware (x86-64 SSE4.2, AArch64's
 * CRC extension): set before main by xp_checksum.c. */
extern bool xp_crc32c_hw __attribute__((visibility("hidden")));

/* CRC32C (Castagnoli) of bytes [4, size) of a record, by table: CPUs
 * without the instruction, and records of odd sizes (damaged ones). */
uint32_t xp_crc32c_record_sw(const void *record, uint32_t size)
    __attribute__((visibility("hidden")));

static inline uint64_t xp_load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, 8);
    return w;
}

#if defined(__x86_64__)
/* One CRC32C step of an 8-byte (4-byte) word.  Inline assembly rather than
 * the SSE4.2 intrinsic: the intrinsic needs the function compiled for
 * SSE4.2, which gcc then will not inline into its callers, and a commit of
 * a record of known size is meant to inline whole (xp_journal_commit_sized).
 * Executed only where the CPU has it (xp_crc32c_hw). */
static inline uint64_t xp_crc32c_u64(uint64_t crc, uint64_t w)
{
    __asm__("crc32q %1, %0" : "+r"(crc) : "rm"(w));
    return crc;
}
static inline uint64_t xp_crc32c_u32(uint64_t crc, uint32_t w)
{
    uint32_t c = (uint32_t)crc;
    __asm__("crc32l %1, %0" : "+r"(c) : "rm"(w));
    return c;
}
#define XP_CRC32C_HW 1
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
static inline uint64_t xp_crc32c_u64(uint64_t crc, uint64_t w)
{
    return __crc32cd((uint32_t)crc, w);
}
static inline uint64_t xp_crc32c_u32(uint64_t crc, uint32_t w)
{
    return __crc32cw((uint32_t)crc, w);
}
#define XP_CRC32C_HW 1
#endif

/* The same with the CPU's CRC32C instruction, for a record whose size is a
 * multiple of 8 (every whole one): the word after the commit word, then
 * aligned 8-byte words, one instruction each.  Why CRC32C since version 7
 * (issue 15): XXH3 of a 120-byte copy record cost 97 instructions of the
 * ~700 a recorded copy took; this is 15 CRC instructions (unrolled where the
 * size is a constant). */
static inline uint32_t xp_crc32c_record_hw(const void *record, uint32_t size)
{
#ifdef XP_CRC32C_HW
    const unsigned char *p = record;
    uint32_t w32;
    memcpy(&w32, p + 4, 4);
    uint64_t crc = xp_crc32c_u32(0xFFFFFFFFu, w32);
    /* Unrolled: the loop's own instructions were half the cost (a constant
     * size unrolls whole). */
#pragma GCC unroll 16
    for (uint32_t off = 8; off < size; off += 8)
        crc = xp_crc32c_u64(crc, xp_load64(p + off));
    return ~(uint32_t)crc;
#else
    return xp_crc32c_record_sw(record, size);
#endif
}

/* The checksum of a record of `size` bytes (its header's size, at least
 * the header's) in a journal of `version` (5 or later): of every byte after
 * the commit word, so the type, size and thread are covered as well as the
 * body.  Version 7 on: CRC32C; 5 and 6: the low half of XXH3-64.  Never 0,
 * which means "not committed": a sum of 0 becomes 1. */
static inline uint32_t xp_record_checksum_v(uint32_t version, const void *record, uint32_t size)
{
    uint32_t h;
    if (version >= XP_JOURNAL_CRC32C_VERSION)
        h = xp_crc32c_hw && (size & 7u) == 0 ? xp_crc32c_record_hw(record, size)
                                              : xp_crc32c_record_sw(record, size);
    else
        h = (uint32_t)XXH3_64bits((const unsigned char *)record + sizeof(uint32_t),
                                  size - sizeof(uint32_t));
    return h != 0 ? h : 1u;
}

/* The checksum records of the journal version written now carry. */
static inline uint32_t xp_record_checksum(const void *record, uint32_t size)
{
    return xp_record_checksum_v(XP_JOURNAL_VERSION, record, size);
}

#endif
