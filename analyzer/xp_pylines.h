/* xp_pylines.h: CPython line tables decoded offline (instruction offset -> line). */
#ifndef XP_PYLINES_H
#define XP_PYLINES_H

#include <stddef.h>
#include <stdint.h>

/* The line of the instruction at byte offset `offset` of a code object
 * whose first line is first_line and whose line table is `table` (len
 * bytes) in `format` (py_code.line_format: 0 co_lnotab of 3.9, 1
 * co_linetable of 3.10, 2 the location table of 3.11+).  A negative offset
 * (the frame had not started) is the first line, as CPython says.  Returns
 * 0 when the table gives the instruction no line, the offset is past the
 * table, the table is damaged, or the format is unknown: never a guess. */
int xp_py_line(int format, const uint8_t *table, size_t len, int first_line, int offset);

#endif
