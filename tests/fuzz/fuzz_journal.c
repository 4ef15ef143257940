/* fuzz_journal.c: the fuzzer's bytes as a journal file: opened by the
 * journal reader (src/xp_journal_reader.c) and ingested with a final pass
 * into a fresh database (src/xp_ingest.c), as `xferprof recover` does with
 * what a crashed process left.  Any input must be refused or stored, never
 * crash or trip the sanitizers. */
#include <limits.h>
#include <stdbool.h>

#include "fuzz_common.h"
#include "xp_ingest.h"
#include "xp_journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char jpath[PATH_MAX], dbpath[PATH_MAX];
    snprintf(dbpath, sizeof dbpath, "%s/run.db", fuzz_dir());
    fuzz_remove_db(dbpath);
    fuzz_write("run.db.xpj", data, size, jpath, sizeof jpath);

    char err[256];
    xp_journal_reader *r = NULL;
    if (xp_journal_open(jpath, &r, err, sizeof err) == 0) {
        (void)xp_journal_info(r);
        xp_ingest *ig = NULL;
        if (xp_ingest_open(dbpath, &ig, err, sizeof err) == 0) {
            /* Twice: the second pass resumes from the stored progress. */
            (void)xp_ingest_pass(ig, r, false, err, sizeof err);
            (void)xp_ingest_pass(ig, r, true, err, sizeof err);
            xp_ingest_close(ig);
        }
        xp_journal_reader_close(r);
    }
    fuzz_remove_db(dbpath);
    return 0;
}
