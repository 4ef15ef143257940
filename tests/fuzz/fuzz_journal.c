/* fuzz_journal.c: the fuzzer's bytes as a journal file: opened by the
 * journal reader (src/xp_journal_reader.c) and ingested with a final pass
 * into a fresh database (src/xp_ingest.c), as `xferprof recover` does with
 * what a crashed process left.  Any input must be refused or stored, never
 * crash or trip the sanitizers.
 *
 * Records of a version 5 journal carry a checksum, which nearly every
 * mutation breaks: the reader then skips them as damaged, and the values
 * behind never reach the validation and the ingest.  So an input whose
 * header's reserved0 word is odd has its checksums made right first (every
 * committed record's whose size fits its chunk), and a mutation that
 * changes a record's values or size is then read as the writer's. */
#include <limits.h>
#include <stdbool.h>

#include "fuzz_common.h"
#include "xp_checksum.h"
#include "xp_ingest.h"
#include "xp_journal.h"

/* Rewrites the commit word of every committed record in buf as its
 * checksum, walking each chunk as the reader would. */
static void fix_checksums(uint8_t *buf, size_t size, uint32_t version)
{
    for (size_t start = XP_JOURNAL_HEADER_SIZE; start + sizeof(xp_chunk_header) <= size;
         start += XP_CHUNK_SIZE) {
        size_t limit = size - start < XP_CHUNK_SIZE ? size - start : XP_CHUNK_SIZE;
        size_t off = sizeof(xp_chunk_header);
        while (off + sizeof(xp_rec_header) <= limit) {
            xp_rec_header h;
            memcpy(&h, buf + start + off, sizeof h);
            if (h.commit == 0 || h.size < sizeof h || h.size % 8 != 0 || h.size > limit - off)
                break;
            h.commit = xp_record_checksum_v(version, buf + start + off, h.size);
            memcpy(buf + start + off, &h.commit, sizeof h.commit);
            off += h.size;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char jpath[PATH_MAX], dbpath[PATH_MAX];
    snprintf(dbpath, sizeof dbpath, "%s/run.db", fuzz_dir());
    fuzz_remove_db(dbpath);
    xp_journal_header jh;
    if (size >= sizeof jh && (memcpy(&jh, data, sizeof jh), jh.reserved0 & 1u) &&
        jh.version >= XP_JOURNAL_CHECKSUM_VERSION) {
        uint8_t *copy = malloc(size);
        if (copy == NULL)
            abort();
        memcpy(copy, data, size);
        fix_checksums(copy, size, jh.version);
        fuzz_write("run.db.xpj", copy, size, jpath, sizeof jpath);
        free(copy);
    } else {
        fuzz_write("run.db.xpj", data, size, jpath, sizeof jpath);
    }

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
