/* fuzz_symbols.c: the fuzzer's bytes as a module on disk (an ELF file with
 * or without DWARF), read by the symbolizer (analyzer/xp_symbols.c, elfutils
 * libdw) to name the frames of a recorded stack that point into it.  Any
 * file must be symbolized or refused with a note, never crash or trip the
 * sanitizers. */
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <elfutils/libdwelf.h>
#include <sqlite3.h>

#include "fuzz_common.h"
#include "xp_load.h"
#include "xp_schema.h"
#include "xp_symbols.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where the module is "loaded", and how many frames point into it. */
#define FUZZ_BASE 0x400000ull
#define FUZZ_FRAMES 64

/* The build id the module has, in hex as the journal records it ("" for
 * none): the symbolizer only reads a module whose build id is the recorded
 * one, so the harness records what the file says. */
static void fuzz_build_id(const char *path, char *hex, size_t len)
{
    hex[0] = '\0';
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
    const void *bits = NULL;
    ssize_t n = elf != NULL ? dwelf_elf_gnu_build_id(elf, &bits) : -1;
    for (ssize_t i = 0; i < n && (size_t)(2 * i + 3) <= len && 2 * i < 128; i++)
        snprintf(hex + 2 * i, 3, "%02x", ((const unsigned char *)bits)[i]);
    if (elf != NULL)
        elf_end(elf);
    close(fd);
}

/* One database for the whole run, in memory, with the real schema; each
 * input replaces its module and its one stack. */
static sqlite3 *fuzz_db(void)
{
    static sqlite3 *db;
    char err[256];
    if (db == NULL) {
        if (elf_version(EV_CURRENT) == EV_NONE ||
            sqlite3_open(":memory:", &db) != SQLITE_OK ||
            xp_schema_create(db, err, sizeof err) != 0)
            abort();
    }
    sqlite3_exec(db, "DELETE FROM modules; DELETE FROM stacks; DROP TABLE IF EXISTS symbols; "
                     "DROP TABLE IF EXISTS symbol_inlines",
                 NULL, NULL, NULL);
    return db;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[PATH_MAX];
    fuzz_write("module.so", data, size, path, sizeof path);
    char bid[129];
    fuzz_build_id(path, bid, sizeof bid);
    sqlite3 *db = fuzz_db();

    /* Frames spread over the first 64 KiB of the module, where a small
     * object's text is, and some the input names itself. */
    uint64_t frames[FUZZ_FRAMES];
    for (size_t i = 0; i < FUZZ_FRAMES; i++) {
        uint64_t off = i * 1024u;
        if (i % 4 == 3 && size >= 8 * (i + 1))
            memcpy(&off, data + 8 * i, 8), off %= 1u << 20;
        frames[i] = FUZZ_BASE + off;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO modules(path, base, size, low, build_id) "
                               "VALUES (?1, ?2, ?3, ?2, ?4)", -1, &st, NULL) != SQLITE_OK)
        abort();
    sqlite3_bind_text(st, 1, path, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, (sqlite3_int64)FUZZ_BASE);
    sqlite3_bind_int64(st, 3, 1 << 20);
    if (bid[0])
        sqlite3_bind_text(st, 4, bid, -1, SQLITE_TRANSIENT);
    sqlite3_step(st);
    sqlite3_finalize(st);
    if (sqlite3_prepare_v2(db, "INSERT INTO stacks(id, hash, depth, frames) VALUES (1, 1, ?1, ?2)",
                           -1, &st, NULL) != SQLITE_OK)
        abort();
    sqlite3_bind_int(st, 1, FUZZ_FRAMES);
    sqlite3_bind_blob(st, 2, frames, sizeof frames, SQLITE_TRANSIENT);
    sqlite3_step(st);
    sqlite3_finalize(st);

    struct xp_process p = {0};
    char err[512];
    /* Writable: the cache of what was found is written and read back too. */
    (void)xp_symbols_resolve(db, true, &p, err, sizeof err);
    xp_process_free(&p);
    unlink(path);
    return 0;
}
