/* fuzz_common.h: what the fuzz targets share: a private temporary folder
 * and writing the fuzzer's bytes to a file there (the readers under test
 * take paths, as they do in the analyzer). */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The folder lives as long as the fuzzing process (one per target run); in
 * /dev/shm when there is one: each input makes a database, and SQLite's
 * syncs on a disk would set the pace. */
static char fuzz_dir_path[64];

static void fuzz_dir_remove(void)
{
    rmdir(fuzz_dir_path);
}

static inline const char *fuzz_dir(void)
{
    char *dir = fuzz_dir_path;
    if (dir[0] == '\0') {
        strcpy(dir, access("/dev/shm", W_OK) == 0 ? "/dev/shm/xpfuzz-XXXXXX" : "/tmp/xpfuzz-XXXXXX");
        if (mkdtemp(dir) == NULL) {
            perror("mkdtemp");
            abort();
        }
        atexit(fuzz_dir_remove); /* empty by then: each input removes its files */
    }
    return dir;
}

/* Writes data to DIR/name; the path goes to out (PATH_MAX-sized). */
static inline void fuzz_write(const char *name, const uint8_t *data, size_t size, char *out,
                              size_t outlen)
{
    snprintf(out, outlen, "%s/%s", fuzz_dir(), name);
    FILE *f = fopen(out, "wb");
    if (f == NULL || (size > 0 && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
        perror(out);
        abort();
    }
}

/* Removes the database and the files SQLite and the ingest may leave beside it. */
static inline void fuzz_remove_db(const char *path)
{
    static const char *suffixes[] = {"", "-wal", "-shm", "-journal", ".xpj"};
    char p[4200];
    for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
        snprintf(p, sizeof p, "%s%s", path, suffixes[i]);
        unlink(p);
    }
}

#endif
