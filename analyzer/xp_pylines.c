/* xp_pylines.c: CPython line tables decoded offline (instruction offset -> line).
 *
 * The formats are CPython's own (Objects/lnotab_notes.txt and
 * Objects/codeobject.c of each version); each decoder walks the table as
 * PyCode_Addr2Line does, so the answer is the interpreter's. */
#include "xp_pylines.h"

#include <stdbool.h>

/* 3.9: (bytecode increment, signed line increment) pairs; the line of
 * offset is the line after the last increment whose address is <= offset. */
static int lnotab_line(const uint8_t *t, size_t len, int line, int offset)
{
    int addr = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        addr += t[i];
        if (addr > offset)
            break;
        line += (int8_t)t[i + 1];
    }
    return line;
}

/* 3.10: (unsigned byte length of a range, signed line delta) pairs, a delta
 * of -128 meaning "no line" for that range. */
static int linetable_line(const uint8_t *t, size_t len, int line, int offset)
{
    int end = 0;
    for (size_t i = 0; i + 1 < len; i += 2) {
        int start = end;
        end += t[i];
        int delta = (int8_t)t[i + 1];
        bool none = delta == -128;
        if (!none)
            line += delta;
        if (offset >= start && offset < end)
            return none ? 0 : line;
    }
    return 0;
}

/* Reads a 6-bit-chunk varint of the location table at *p (below end). */
static bool varint(const uint8_t *t, size_t len, size_t *p, unsigned *out)
{
    unsigned v = 0, shift = 0;
    for (;;) {
        if (*p >= len || shift > 24)
            return false;
        uint8_t b = t[(*p)++];
        v |= (unsigned)(b & 63) << shift;
        shift += 6;
        if (!(b & 64))
            break;
    }
    *out = v;
    return true;
}

/* 3.11+: entries starting with a byte whose top bit is set: bits 3-6 the
 * entry's kind, bits 0-2 its length in code units minus one.  Kind 15: no
 * location; 14: long form (signed varint line delta, then end line, columns);
 * 13: no columns (signed varint line delta); 10-12: one line, delta kind - 10
 * (two column bytes); 0-9: short form, same line (one column byte). */
static int locations_line(const uint8_t *t, size_t len, int line, int offset)
{
    int end = 0;
    size_t p = 0;
    while (p < len) {
        uint8_t first = t[p++];
        if (!(first & 0x80))
            return 0;         /* not at an entry: damaged */
        int kind = (first >> 3) & 15, start = end;
        end += ((first & 7) + 1) * 2;
        int delta = 0;
        if (kind == 13 || kind == 14) {
            unsigned u;
            if (!varint(t, len, &p, &u))
                return 0;
            delta = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (kind >= 10 && kind <= 12) {
            delta = kind - 10;
        }
        line += delta;
        if (offset >= start && offset < end)
            return kind == 15 ? 0 : line;
        while (p < len && !(t[p] & 0x80))
            p++;              /* the rest of the entry: columns */
    }
    return 0;
}

int xp_py_line(int format, const uint8_t *table, size_t len, int first_line, int offset)
{
    if (offset < 0)
        return first_line;
    if (table == NULL)
        return 0;
    switch (format) {
    case 0: return lnotab_line(table, len, first_line, offset);
    case 1: return linetable_line(table, len, first_line, offset);
    case 2: return locations_line(table, len, first_line, offset);
    }
    return 0;
}
