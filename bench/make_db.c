/* make_db.c: writes a large run database for the report benchmark through
 * the real ingest path: a synthetic journal (xp_synth.c, the real writer),
 * then xp_recover, as `xferprof recover` would after a crash.
 *
 *   make_db [-n COPIES] [-s STACKS] [--seed N] [--journal-only] OUT.db
 *
 * COPIES defaults to 10 million, STACKS to 300.  Prints how long each half
 * took.  --journal-only leaves OUT.db.xpj and writes no database (the fuzzers'
 * seeds). */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "xp_format.h"
#include "xp_ingest.h"
#include "xp_synth.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int usage(void)
{
    fprintf(stderr, "usage: make_db [-n COPIES] [-s STACKS] [--seed N] [--journal-only] OUT.db\n");
    return 2;
}

int main(int argc, char **argv)
{
    xp_synth_opts o = {.copies = 10000000, .stacks = 300, .seed = 1};
    bool journal_only = false;
    const char *out = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            o.copies = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-s") == 0 && i + 1 < argc)
            o.stacks = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
            o.seed = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--journal-only") == 0)
            journal_only = true;
        else if (argv[i][0] == '-' || out != NULL)
            return usage();
        else
            out = argv[i];
    }
    if (out == NULL)
        return usage();

    char jpath[4096];
    if (snprintf(jpath, sizeof jpath, "%s%s", out, XP_JOURNAL_SUFFIX) >= (int)sizeof jpath)
        return usage();
    if (!journal_only && unlink(out) != 0 && errno != ENOENT) {
        fprintf(stderr, "make_db: %s: %s\n", out, strerror(errno));
        return 1;
    }
    double t0 = now_s();
    xp_synth_stats st;
    int e = xp_synth_journal(jpath, &o, &st);
    if (e != 0) {
        fprintf(stderr, "make_db: %s: %s\n", jpath, strerror(e));
        return 1;
    }
    double t1 = now_s();
    printf("journal: %llu records (%llu copies) in %.2f s, %.2f M records/s\n",
           (unsigned long long)st.records, (unsigned long long)o.copies, t1 - t0,
           st.records / (t1 - t0) / 1e6);
    if (journal_only)
        return 0;
    char err[512];
    bool did;
    if (xp_recover(out, &did, err, sizeof err) != 0) {
        fprintf(stderr, "make_db: %s: %s\n", out, err);
        return 1;
    }
    double t2 = now_s();
    printf("ingest: %.2f s, %.2f M records/s; total %.2f s for %llu copies\n", t2 - t1,
           st.records / (t2 - t1) / 1e6, t2 - t0, (unsigned long long)o.copies);
    return 0;
}
