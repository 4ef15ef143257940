/* xp_fds.h: our descriptors among the program's: headroom below RLIMIT_NOFILE,
 * and whether a descriptor still names the file we opened. */
#ifndef XP_FDS_H
#define XP_FDS_H

#include <stdbool.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Descriptors left free for the program while we take some during the run
 * (an ingest pass takes 3 for a few milliseconds). */
#define XP_FD_RESERVE 16

/* A file's identity: what a path or a descriptor must still name. */
typedef struct xp_file_id {
    dev_t dev;
    ino_t ino;
} xp_file_id;

static inline bool xp_same_file(const struct stat *st, const xp_file_id *id)
{
    return st->st_dev == id->dev && st->st_ino == id->ino;
}

/* Whether the process can open `want` more descriptors below its
 * RLIMIT_NOFILE soft limit without an open() of the program's failing for it
 * (EMFILE).  Takes no descriptor to find out. */
bool xp_fd_spare(unsigned want);

/* Whether fd is open and names the regular file id. */
bool xp_fd_is(int fd, const xp_file_id *id);

/* Opens path (O_NOFOLLOW | O_CLOEXEC added to flags) if it still names the
 * regular file id, and only when `reserve` descriptors stay free for the
 * program beside it.  Returns the descriptor, or -1 with errno: EMFILE (too
 * close to the limit), ESTALE (the path names another file now), or open's. */
int xp_fd_reopen(const char *path, int flags, const xp_file_id *id, unsigned reserve);

/* The descriptors (at most max, into fds) that name one of the n files ids,
 * found by fstat of each number from 0 up, stopping once every id was seen.
 * Returns how many. */
unsigned xp_fd_find(const xp_file_id *ids, unsigned n, int *fds, unsigned max);

#endif
