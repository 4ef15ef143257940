/* xp_pyframes.h: recorded Python frames named and spliced into the symbolized native stacks. */
#ifndef XP_PYFRAMES_H
#define XP_PYFRAMES_H

#include <stddef.h>

#include <sqlite3.h>

#include "xp_report.h"

/* For every stack of p with Python frames (stacks.pyframes), after
 * symbolization: the native frames of the interpreter (its eval loop, call
 * machinery, ctypes and libffi) are replaced by the Python frames they ran,
 * each eval-loop frame by the Python frames of that C call, in order; frames
 * of framework libraries (torch, c10, NVIDIA's) stay where they are but are
 * marked `library`, and the stack's `top` is its first user frame.  A
 * database without Python frames (or from before them) is left as it is.
 * Returns 0, or -1 with err (OUT) set when db cannot be read. */
int xp_pyframes_merge(sqlite3 *db, struct xp_process *p, char *err, size_t errlen);

/* Frees the names the Python frames of p point to. */
void xp_pyframes_free(struct xp_process *p);

#endif
