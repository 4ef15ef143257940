/* xp_synth.h: synthetic journals written with the real journal writer, so
 * that the real ingest path (xp_recover) turns them into databases: the
 * report benchmark's large runs (bench/make_db) and the fuzzers' seeds. */
#ifndef XP_SYNTH_H
#define XP_SYNTH_H

#include <stddef.h>
#include <stdint.h>

typedef struct xp_synth_opts {
    uint64_t copies;      /* copy records */
    unsigned stacks;      /* distinct stacks (at least 1) */
    uint64_t seed;        /* the same seed writes the same journal */
} xp_synth_opts;

typedef struct xp_synth_stats {
    uint64_t records;     /* records of every kind written */
    uint64_t allocations; /* successful allocation records */
    uint64_t failures;    /* records of failed calls */
} xp_synth_stats;

/* Writes a journal of a plausible training run at path (truncating it):
 * modules, stacks, copies of every direction and memory kind with repeated
 * contents, allocations and frees, syncs, memsets and some failed calls.
 * stats may be NULL.  Returns 0 or an errno value. */
int xp_synth_journal(const char *path, const xp_synth_opts *o, xp_synth_stats *stats);

#endif
