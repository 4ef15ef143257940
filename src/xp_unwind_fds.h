/* xp_unwind_fds.h: keeping libunwind's own descriptors out of the program's way. */
#ifndef XP_UNWIND_FDS_H
#define XP_UNWIND_FDS_H

#include <stdint.h>

/* Called with a pipe just made by pipe()/pipe2() (flags: pipe2's) for the
 * code at `caller`.  When that code is libunwind's, the two descriptors are
 * moved up to numbers the program does not reach (see xp_unwind_fds.c);
 * fds[] then holds the new numbers.  Anyone else's pipe is left alone. */
void xp_unwind_fds_adopt(int fds[2], int flags, uintptr_t caller);

#endif
