/* xp_validate.h: whether a journal record's values can be true, before the ingest stores them. */
#ifndef XP_VALIDATE_H
#define XP_VALIDATE_H

#include "xp_format.h"

/* How far a call's end may lie before its start and still be taken for
 * clock noise (stored as a call of no time, meta times_fixed) rather than
 * for a damaged record: both are CLOCK_MONOTONIC readings of one thread, so
 * anything larger is not a clock. */
#define XP_CLOCK_NOISE_NS 1000000ull

/* NULL when every value of the record (h->size bytes, at least a header,
 * inside the journal) is possible for its type in a journal of any version
 * this reader reads; else a phrase saying what is impossible (an unknown
 * type, a size no writer of that type produces, a byte count or time past
 * INT64_MAX, an address range that wraps, an enum out of range, a string
 * without its terminator, a stack deeper than XP_MAX_FRAMES, ...).  The
 * checksum is the reader's (xp_journal_reader.c); this catches damage in
 * journals from before it, and values a writer got wrong. */
const char *xp_validate_record(const xp_rec_header *h);

#endif
