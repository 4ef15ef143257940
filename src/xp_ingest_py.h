/* xp_ingest_py.h: the Python parts of journal records as the database stores them. */
#ifndef XP_INGEST_PY_H
#define XP_INGEST_PY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "xp_format.h"

/* Bytes of stacks.pyframes per Python frame: code key (u64), instruction
 * offset (i32), flags (u32), each little-endian. */
#define XP_PYFRAME_BLOB 16u

/* Whether a stack record's Python part fits its size and bounds. */
bool xp_ingest_py_stack_ok(const xp_rec_stack *r);

/* Encodes the record's Python frames into out (py_depth * XP_PYFRAME_BLOB
 * bytes); returns the bytes written. */
size_t xp_ingest_py_frames(const xp_rec_stack *r, uint8_t *out);

/* Binds a PYCODE record to the statement "INSERT ... py_code(key, file,
 * name, first_line, line_table, py_version, line_format) VALUES (?1..?7)".
 * Returns false (nothing bound) when the record is malformed. */
bool xp_ingest_py_bind_code(sqlite3_stmt *s, const xp_rec_pycode *r);

#endif
