/* xp_checksum.c: CRC32C by table, and whether the CPU has the instruction (xp_checksum.h). */
#include "xp_checksum.h"

bool xp_crc32c_hw;

/* The reflected Castagnoli polynomial's byte table, filled before main
 * (constructors run before any thread of ours or the program's). */
static uint32_t table[256];

__attribute__((constructor)) static void xp_checksum_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[i] = c;
    }
#if defined(__x86_64__)
    __builtin_cpu_init();   /* required before __builtin_cpu_supports in a constructor */
    xp_crc32c_hw = __builtin_cpu_supports("sse4.2");
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
    xp_crc32c_hw = true;    /* compiled for a CPU that has it */
#endif
}

uint32_t xp_crc32c_record_sw(const void *record, uint32_t size)
{
    const unsigned char *p = record;
    uint32_t crc = 0xFFFFFFFFu;
    for (uint32_t i = 4; i < size; i++)
        crc = table[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
    return ~crc;
}
