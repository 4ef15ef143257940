/* xp_fds.c: our descriptors among the program's: headroom, and verifying one still names our file. */
#include "xp_fds.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

/* fstat scans stop here: a process with a million descriptors is not one
 * whose numbers we walk (xp_fd_find then reports fewer). */
#define XP_FD_SCAN_MAX 65536

bool xp_fd_spare(unsigned want)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
        return true;
    /* open() hands out the lowest free number below the soft limit, so what
     * counts is free numbers below it.  Counted from the top down with
     * F_GETFD (no descriptor taken): where the limit is far above what the
     * program uses, the first `want` numbers tried are free and this is
     * `want` system calls; only near the limit does it walk the used ones. */
    unsigned found = 0;
    for (rlim_t fd = rl.rlim_cur; fd-- > 0 && found < want;)
        if (fcntl((int)fd, F_GETFD) < 0 && errno == EBADF)
            found++;
    return found >= want;
}

bool xp_fd_is(int fd, const xp_file_id *id)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && xp_same_file(&st, id);
}

int xp_fd_reopen(const char *path, int flags, const xp_file_id *id, unsigned reserve)
{
    if (!xp_fd_spare(1 + reserve)) {
        errno = EMFILE;
        return -1;
    }
    int fd;
    do
        fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return -1;
    if (!xp_fd_is(fd, id)) {
        close(fd);   /* ours: just opened, and not handed to anyone */
        errno = ESTALE;
        return -1;
    }
    return fd;
}

unsigned xp_fd_find(const xp_file_id *ids, unsigned n, int *fds, unsigned max)
{
    struct rlimit rl;
    rlim_t end = XP_FD_SCAN_MAX;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < end)
        end = rl.rlim_cur;
    unsigned got = 0, seen = 0;   /* seen: a bit per id */
    for (rlim_t fd = 0; fd < end && got < max && seen != (1u << n) - 1; fd++) {
        struct stat st;
        if (fstat((int)fd, &st) != 0)
            continue;
        for (unsigned i = 0; i < n; i++)
            if (xp_same_file(&st, &ids[i])) {
                fds[got++] = (int)fd;
                seen |= 1u << i;
                break;
            }
    }
    return got;
}
