/* xp_frames.h: the report's frames of every stack, named and stored in the database (stack_frames). */
#ifndef XP_FRAMES_H
#define XP_FRAMES_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

#include "xp_report.h"

/* Gives p the stacks of db as the report shows them: symbolized
 * (xp_symbols_resolve, which caches names in db when writable) and with
 * their Python frames in place of the interpreter's (xp_pyframes_merge).
 * Returns 0, or -1 with err (OUT) set when db cannot be read. */
int xp_frames_resolve(sqlite3 *db, bool writable, struct xp_process *p, char *err,
                      size_t errlen);

/* Stores the frames of p's stacks (after xp_frames_resolve) in db's
 * stack_frame_rows, one row per frame, innermost level 0, and sets
 * meta.stack_frames_upto to the last stacks.id they cover, in one
 * transaction; creates the table and the stack_frames view in a database
 * made before them.  Nothing is written when the rows stored already say
 * the same (meta.stack_frames_hash).  Sets *rows (OUT, may be NULL) to the
 * number of frames.  Returns 0, or -1 with err (OUT) set. */
int xp_frames_store(sqlite3 *db, const struct xp_process *p, size_t *rows, char *err,
                    size_t errlen);

#endif
