/* xp_ingest_py.c: the Python parts of journal records as the database stores them (stacks.pyframes, py_code). */
#include "xp_ingest_py.h"

#include <stdio.h>
#include <string.h>

bool xp_ingest_py_stack_ok(const xp_rec_stack *r)
{
    return r->py_depth <= XP_PY_MAX_FRAMES &&
           sizeof *r + (size_t)r->depth * 8u + (size_t)r->py_depth * sizeof(xp_pyframe) <=
               r->h.size;
}

static uint8_t *put_le(uint8_t *p, uint64_t v, int bytes)
{
    for (int b = 0; b < bytes; b++)
        *p++ = (uint8_t)(v >> (8 * b));
    return p;
}

size_t xp_ingest_py_frames(const xp_rec_stack *r, uint8_t *out)
{
    const uint8_t *src = (const uint8_t *)(r + 1) + (size_t)r->depth * 8u;
    uint8_t *p = out;
    for (uint32_t i = 0; i < r->py_depth; i++) {
        xp_pyframe f;
        memcpy(&f, src + i * sizeof f, sizeof f);
        p = put_le(p, f.code, 8);
        p = put_le(p, (uint32_t)f.offset, 4);
        p = put_le(p, f.flags, 4);
    }
    return (size_t)(p - out);
}

bool xp_ingest_py_bind_code(sqlite3_stmt *s, const xp_rec_pycode *r)
{
    size_t need = sizeof *r + (size_t)r->file_len + 1 + (size_t)r->name_len + 1 + r->table_len;
    if (r->key == 0 || r->file_len > XP_PY_STR_MAX || r->name_len > XP_PY_STR_MAX ||
        r->table_len > XP_PY_TABLE_MAX || need > r->h.size)
        return false;
    const char *file = (const char *)(r + 1);
    const char *name = file + r->file_len + 1;
    const uint8_t *table = (const uint8_t *)(name + r->name_len + 1);
    char version[16];
    snprintf(version, sizeof version, "%u.%u", r->py_major, r->py_minor);
    sqlite3_bind_int64(s, 1, (sqlite3_int64)r->key);
    sqlite3_bind_text(s, 2, file, (int)r->file_len, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 3, name, (int)r->name_len, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 4, r->first_line);
    if (r->lines_kind == 255) {
        sqlite3_bind_null(s, 5);
        sqlite3_bind_null(s, 7);
    } else {
        sqlite3_bind_blob(s, 5, table, (int)r->table_len, SQLITE_TRANSIENT);
        sqlite3_bind_int(s, 7, r->lines_kind);
    }
    sqlite3_bind_text(s, 6, version, -1, SQLITE_TRANSIENT);
    return true;
}
