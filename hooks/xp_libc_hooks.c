/* xp_libc_hooks.c: the two libc calls the preload interposes for its own
 * sake: pipe and pipe2, so that the pipe libunwind makes for itself is moved
 * out of the program's way (src/xp_unwind_fds.c).  Everyone else's pipe is
 * made exactly as libc makes it, by the same system call. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "xp_unwind_fds.h"

__attribute__((visibility("default"), noinline)) int pipe2(int fds[2], int flags)
{
    /* glibc's pipe2 is this system call and nothing else. */
    int rc = (int)syscall(SYS_pipe2, fds, flags);
    if (rc == 0) {
        int saved = errno;
        xp_unwind_fds_adopt(fds, flags, (uintptr_t)__builtin_return_address(0));
        errno = saved;
    }
    return rc;
}

__attribute__((visibility("default"), noinline)) int pipe(int fds[2])
{
    int rc = (int)syscall(SYS_pipe2, fds, 0);
    if (rc == 0) {
        int saved = errno;
        xp_unwind_fds_adopt(fds, 0, (uintptr_t)__builtin_return_address(0));
        errno = saved;
    }
    return rc;
}
