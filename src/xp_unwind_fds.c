/* xp_unwind_fds.c: keeping libunwind's own descriptors out of the program's way.
 *
 * libunwind checks that an address is readable, when a frame has no unwind
 * information, by writing one byte from it into a pipe of its own, made at
 * its first use and kept for the whole run (it reads back, and when the read
 * fails it closes both ends and makes a new pipe).  Those are the lowest free
 * descriptors, typically 3 and 4.  A program that closes every descriptor
 * >= 3 (close_range, daemons, launchers) and then opens its own files gets
 * those numbers: libunwind would then read a byte out of the program's file
 * and write a byte of our stack into another (issue 14 item 7).
 *
 * The preload made libunwind's pipe, as the only descriptors it holds for
 * the whole run, so it moves them: to just below min(RLIMIT_NOFILE, 1024),
 * numbers a program only reaches with a thousand files open.  After a
 * close_range the pipe is gone, libunwind's next read fails with EBADF, and
 * the pipe it makes then comes here and goes up again.  The cap keeps the
 * kernel's descriptor table small where the limit is a million.
 */
#include "xp_unwind_fds.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* Whether code at addr is libunwind's (libunwind.so.8, or another soname of
 * it): pipes are made rarely, so a dladdr each time costs nothing. */
static bool is_libunwind(uintptr_t addr)
{
    Dl_info info;
    if (dladdr((void *)addr, &info) == 0 || info.dli_fname == NULL)
        return false;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    return strncmp(base, "libunwind", 9) == 0;
}

/* fd moved to the lowest free number >= floor, the original closed; fd
 * unchanged when no such number is free. */
static int move_up(int fd, int floor, bool cloexec)
{
    int high = fcntl(fd, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, floor);
    if (high < 0)
        return fd;
    close(fd);
    return high;
}

void xp_unwind_fds_adopt(int fds[2], int flags, uintptr_t caller)
{
    if (!is_libunwind(caller))
        return;
    struct rlimit rl;
    rlim_t top = 1024;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < top)
        top = rl.rlim_cur;
    if (top < 16 || (rlim_t)fds[0] >= top - 8 || (rlim_t)fds[1] >= top - 8)
        return;
    bool cloexec = (flags & O_CLOEXEC) != 0;
    int floor = (int)top - 2;
    fds[0] = move_up(fds[0], floor, cloexec);
    fds[1] = move_up(fds[1], floor, cloexec);
}
