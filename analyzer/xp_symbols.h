/* xp_symbols.h: offline symbolization of recorded stacks (elfutils libdw), cached in the database. */
#ifndef XP_SYMBOLS_H
#define XP_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

#include "xp_report.h"

/* Reads the stacks and modules tables of db and fills p->stacks (sorted by
 * id, frames inside libcudart*, libcuda* and libxferprof* left out): each
 * frame's function (and demangled name), file and line where the module on
 * disk has them and is the one recorded (same build id), else its module
 * and offset only, with a note in p saying why.  An address inside inlined
 * code becomes one frame per function of its inline chain (struct
 * xp_frame).  Results come from and go to the `symbols` and
 * `symbol_inlines` tables of db (created or grown when needed; not written
 * when !writable or when writing fails).  Returns 0, or -1 with err (OUT)
 * set when db cannot be read. */
int xp_symbols_resolve(sqlite3 *db, bool writable, struct xp_process *p, char *err,
                       size_t errlen);

/* Frees the strings the frames of p point to. */
void xp_symbols_free(struct xp_process *p);

/* Whether a module (its basename) is part of CUDA or of xferprof: its
 * frames are not the program's call site. */
bool xp_symbols_internal(const char *module);

#endif
