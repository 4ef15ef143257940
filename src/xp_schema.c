/* xp_schema.c: the run database's schema, its creation and its validation. */
#include "xp_schema.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xp_api.h"
#include "xp_format.h"
#include "xp_cuda_status.h"

/* The contract (docs/schema.md) is the set of tables and views without a
 * _rows suffix: meta, copies, memsets, allocations, syncs, errors, stacks,
 * modules, unknown_frees, nvtx_ranges.  The *_rows tables and call_sites are the compact storage
 * under the views: integer codes instead of text, a duration instead of an
 * end time, and the columns that repeat from one call to the next (api,
 * stream, thread, device, stack, status, copy direction and memory kinds)
 * interned once per distinct combination in call_sites.  That keeps a copy
 * near 40 bytes on disk instead of well over 100.
 *
 * A call without a stack has a NULL stack (no bytes on disk, like a 0, and
 * the views can show the column as it is, which lets the planner use an
 * index on it).  Codes 0 mean "none": direction/host_mem 0 are unknown/no
 * host side (NULL in the views), and kind 255 is "the API takes no
 * cudaMemcpyKind" (NULL).  call_sites is deduplicated by the ingest (a
 * lookup with IS, which matches NULLs), not by a UNIQUE constraint, which
 * would take every NULL stack for a new value.
 *
 * Not indexed: copies by stack.  Measured on 1M copies: 52 instead of 41
 * bytes per copy, and ingest fell from ~1.5M to ~0.45M records/s (every
 * insert then also searches the index); grouping all copies by stack_id
 * is one scan (~0.5 s per million copies). */
/* NVTX ranges (issue 4).  A range's row is keyed by the journal's range id,
 * which copy/memset/sync rows name in nvtx_range; its end is a row of its own
 * keyed the same way (as frees are), so a pop or an end stored in a later
 * batch than its push or start, or before it (another thread's end), meets
 * its range in the view.  Names are stored once, keyed by the journal's hash
 * (a rowid may be any 64-bit integer): range rows carry the hash, and no
 * placeholder is needed for a name whose record another thread's chunk
 * holds further on. */
#define XP_SCHEMA_NVTX_SQL                                                              \
    "CREATE TABLE nvtx_names(\n"                                                        \
    "  hash INTEGER PRIMARY KEY,\n"                                                     \
    "  name TEXT NOT NULL\n"                                                            \
    ");\n"                                                                              \
    "CREATE TABLE nvtx_range_rows(\n"                                                   \
    "  id INTEGER PRIMARY KEY,\n"                                                       \
    "  kind INTEGER NOT NULL,\n"                                                        \
    "  name INTEGER,\n"                                                                 \
    "  domain INTEGER,\n"                                                               \
    "  tid INTEGER NOT NULL,\n"                                                         \
    "  start_ns INTEGER NOT NULL,\n"                                                    \
    "  depth INTEGER,\n"                                                                \
    "  parent INTEGER\n"                                                                \
    ");\n"                                                                              \
    "CREATE TABLE nvtx_end_rows(\n"                                                     \
    "  range_id INTEGER PRIMARY KEY,\n"                                                 \
    "  tid INTEGER NOT NULL,\n"                                                         \
    "  end_ns INTEGER NOT NULL\n"                                                       \
    ");\n"                                                                              \
    "CREATE VIEW nvtx_ranges AS\n"                                                      \
    "SELECT r.id AS id, n.name AS name, d.name AS domain,\n"                            \
    "       CASE r.kind WHEN 1 THEN 'push' WHEN 3 THEN 'startend' END AS kind,\n"       \
    "       r.tid AS tid, e.tid AS end_tid, r.start_ns AS start_ns, e.end_ns AS end_ns,\n" \
    "       r.depth AS depth, r.parent AS parent_id\n"                                  \
    "FROM nvtx_range_rows r LEFT JOIN nvtx_end_rows e ON e.range_id = r.id\n"           \
    "     LEFT JOIN nvtx_names n ON n.hash = r.name\n"                                  \
    "     LEFT JOIN nvtx_names d ON d.hash = r.domain;\n"
/* Call stacks frame by frame (issue 16 item 7), for SQL users who join
 * copies to their code.  Naming a frame takes libdw, Python's line tables
 * and the report's splicing of Python frames into the interpreter's native
 * ones, none of which SQL can do: the analyzer (`xferprof symbolize`, and
 * `report` on a writable database) stores the frames as the report shows
 * them, each distinct frame once in stack_frame_names and each stack's
 * levels in stack_frame_rows, and sets meta.stack_frames_upto to the last
 * stacks.id it did.  Stacks after that (none stored yet, or stored since)
 * are decoded here from their raw return addresses: the module and offset
 * of each, no names.  stack_levels (0 .. XP_MAX_FRAMES - 1) numbers their
 * frames without a recursive query, which a filter on stack_id could not
 * reach.  The same SQL runs again in the analyzer on a database made before
 * it (xp_frames.c): everything is "IF NOT EXISTS" or "OR IGNORE". */
/* Each byte value at its own position, 1-based: instr() of a one-byte blob
 * in it is that byte's value plus one (SQLite has no blob-to-integer). */
#define XP_BYTE_VALUES "X'" "000102030405060708090A0B0C0D0E0F" "101112131415161718191A1B1C1D1E1F" "202122232425262728292A2B2C2D2E2F" "303132333435363738393A3B3C3D3E3F" \
    "404142434445464748494A4B4C4D4E4F" "505152535455565758595A5B5C5D5E5F" "606162636465666768696A6B6C6D6E6F" "707172737475767778797A7B7C7D7E7F" \
    "808182838485868788898A8B8C8D8E8F" "909192939495969798999A9B9C9D9E9F" "A0A1A2A3A4A5A6A7A8A9AAABACADAEAF" "B0B1B2B3B4B5B6B7B8B9BABBBCBDBEBF" \
    "C0C1C2C3C4C5C6C7C8C9CACBCCCDCECF" "D0D1D2D3D4D5D6D7D8D9DADBDCDDDEDF" "E0E1E2E3E4E5E6E7E8E9EAEBECEDEEEF" "F0F1F2F3F4F5F6F7F8F9FAFBFCFDFEFF" "'"
#define XP_FRAME_BYTE(k, shift)                                                             \
    "((instr(" XP_BYTE_VALUES ", substr(s.frames, l.level * 8 + " #k ", 1)) - 1) << " #shift ")"
/* The little-endian 64-bit address at level l.level of s.frames. */
#define XP_FRAME_ADDR                                                                       \
    XP_FRAME_BYTE(1, 0) " | " XP_FRAME_BYTE(2, 8) " | " XP_FRAME_BYTE(3, 16) " | "          \
    XP_FRAME_BYTE(4, 24) " | " XP_FRAME_BYTE(5, 32) " | " XP_FRAME_BYTE(6, 40) " | "        \
    XP_FRAME_BYTE(7, 48) " | " XP_FRAME_BYTE(8, 56)
/* The last stack id whose frames the analyzer stored (0: none). */
#define XP_FRAMES_UPTO                                                                      \
    "coalesce((SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'stack_frames_upto'), 0)"
#define XP_STR(x) XP_STR2(x)
#define XP_STR2(x) #x
#define XP_SCHEMA_FRAMES_SQL                                                                \
    "CREATE TABLE IF NOT EXISTS stack_frame_names(\n"                                       \
    "  id INTEGER PRIMARY KEY,\n"                                                           \
    "  kind INTEGER NOT NULL,\n"                                                            \
    "  module TEXT,\n"                                                                      \
    "  offset INTEGER,\n"                                                                   \
    "  function TEXT,\n"                                                                    \
    "  file TEXT,\n"                                                                        \
    "  line INTEGER\n"                                                                      \
    ");\n"                                                                                  \
    "CREATE TABLE IF NOT EXISTS stack_frame_rows(\n"                                        \
    "  stack_id INTEGER NOT NULL,\n"                                                        \
    "  level INTEGER NOT NULL,\n"                                                           \
    "  frame INTEGER NOT NULL,\n"                                                           \
    "  top_frame INTEGER NOT NULL,\n"                                                       \
    "  PRIMARY KEY (stack_id, level)\n"                                                     \
    ") WITHOUT ROWID;\n"                                                                    \
    "CREATE TABLE IF NOT EXISTS stack_levels(level INTEGER PRIMARY KEY);\n"                 \
    "INSERT OR IGNORE INTO stack_levels(level)\n"                                           \
    "  WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n\n"                   \
    "                          WHERE x + 1 < " XP_STR(XP_MAX_FRAMES) ")\n"                  \
    "  SELECT x FROM n;\n"                                                                  \
    /* The module of an address is looked up per frame. */                                \
    "CREATE INDEX IF NOT EXISTS modules_low ON modules(low);\n"                             \
    "CREATE VIEW IF NOT EXISTS stack_frames AS\n"                                           \
    "SELECT s.id AS stack_id, l.level AS level,\n"                                          \
    "       CASE WHEN r.frame IS NULL THEN m.path ELSE n.module END AS module,\n"           \
    "       CASE WHEN r.frame IS NULL THEN (" XP_FRAME_ADDR ") - coalesce(m.base, 0)\n"    \
    "            ELSE n.offset END AS offset,\n"                                            \
    "       n.function AS function, n.file AS file, n.line AS line,\n"                      \
    "       CASE WHEN r.frame IS NULL OR n.kind = 1 THEN 'native' WHEN n.kind = 2\n"       \
    "            THEN 'inlined' WHEN n.kind = 3 THEN 'python' END AS kind,\n"               \
    "       r.top_frame AS top_frame\n"                                                     \
    "FROM stacks s\n"                                                                       \
    "  JOIN stack_levels l ON l.level < CASE WHEN s.id <= " XP_FRAMES_UPTO "\n"            \
    "    THEN (SELECT count(*) FROM stack_frame_rows c WHERE c.stack_id = s.id)\n"          \
    "    ELSE length(s.frames) / 8 END\n"                                                   \
    "  LEFT JOIN stack_frame_rows r\n"                                                      \
    "    ON r.stack_id = s.id AND r.level = l.level AND s.id <= " XP_FRAMES_UPTO "\n"       \
    "  LEFT JOIN stack_frame_names n ON n.id = r.frame\n"                                   \
    "  LEFT JOIN modules m ON m.id = CASE WHEN r.frame IS NULL THEN (\n"                    \
    "    SELECT id FROM modules WHERE low <= (" XP_FRAME_ADDR ")\n"                         \
    "      AND (" XP_FRAME_ADDR ") - low < size ORDER BY low DESC, id DESC LIMIT 1) END;\n"
/* The name of an xp_alloc_kind code in column `t`.kind (allocations and
 * unknown_frees say it the same way). */
#define XP_ALLOC_KIND_SQL(t)                                                              \
    "CASE " t ".kind WHEN 1 THEN 'device' WHEN 2 THEN 'pinned' WHEN 3 THEN 'registered' " \
    "WHEN 4 THEN 'managed' WHEN 5 THEN 'reserved' WHEN 6 THEN 'physical' "                \
    "WHEN 7 THEN 'mapped' WHEN 8 THEN 'array' WHEN 9 THEN 'ipc' END"
/* The name of status `t`.status in the layer of api row a (cuda_error_names).
 * A subquery rather than a join: a query that does not read status_name never
 * runs it, and the plans of queries on the other columns stay as they were
 * (SQLite does not drop an unused LEFT JOIN on a.layer: counting errors by
 * api then lost its covering index, test_ingest). */
#define XP_STATUS_NAME_SQL(t)                                                             \
    "(SELECT name FROM cuda_error_names n\n"                                               \
    "         WHERE n.layer = a.layer AND n.code = " t ".status) AS status_name\n"

/* The copies and memsets views (schema 2: graph_node, launch_stack_id), made again
 * by the upgrade from schema 1. */
#define XP_SCHEMA_CALL_VIEWS_SQL \
    "CREATE VIEW copies AS\n" \
    "SELECT c.id AS id,\n" \
    "       coalesce(a.name, 'api#' || s.api) AS api,\n" \
    "       a.layer AS layer,\n" \
    "       CASE s.direction WHEN 1 THEN 'H2D' WHEN 2 THEN 'D2H' WHEN 3 THEN 'D2D'\n" \
    "                        WHEN 4 THEN 'H2H' END AS direction,\n" \
    "       c.bytes AS bytes, c.src AS src, c.dst AS dst,\n" \
    "       CASE s.host_mem WHEN 1 THEN 'pageable' WHEN 2 THEN 'pinned'\n" \
    "                       WHEN 3 THEN 'managed' END AS host_mem,\n" \
    "       CASE s.blocking WHEN 1 THEN 'sync' WHEN 2 THEN 'async'\n" \
    "                       WHEN 3 THEN 'async_pageable' END AS blocking,\n" \
    "       s.stream AS stream, s.device AS device, s.tid AS tid,\n" \
    "       c.start_ns AS start_ns, c.start_ns + c.dur_ns AS end_ns, c.dur_ns AS dur_ns,\n" \
    "       s.status AS status, s.stack AS stack_id,\n" \
    "       nullif(s.kind, 255) AS kind, c.site AS site,\n" \
    "       c.fingerprint AS fingerprint,\n" \
    "       CASE c.fp_kind WHEN 1 THEN 'full' WHEN 2 THEN 'sampled' END AS fingerprint_kind,\n" \
    "       c.kernel_seq AS kernel_seq, c.nvtx_range AS nvtx_range,\n" \
    "       c.full_fp AS full_fingerprint,\n" \
    "       c.graph_node AS graph_node, c.launch_stack AS launch_stack_id,\n" \
    "       " XP_STATUS_NAME_SQL("s") \
    "FROM copy_rows c JOIN call_sites s ON s.id = c.site LEFT JOIN apis a ON a.id = s.api;\n" \
    "CREATE VIEW memsets AS\n" \
    "SELECT m.id AS id,\n" \
    "       coalesce(a.name, 'api#' || s.api) AS api,\n" \
    "       a.layer AS layer,\n" \
    "       m.bytes AS bytes, m.dst AS dst, m.value AS value,\n" \
    "       CASE s.host_mem WHEN 1 THEN 'pageable' WHEN 2 THEN 'pinned'\n" \
    "                       WHEN 3 THEN 'managed' END AS host_mem,\n" \
    "       CASE s.blocking WHEN 1 THEN 'sync' WHEN 2 THEN 'async'\n" \
    "                       WHEN 3 THEN 'async_pageable' END AS blocking,\n" \
    "       s.stream AS stream, s.device AS device, s.tid AS tid,\n" \
    "       m.start_ns AS start_ns, m.start_ns + m.dur_ns AS end_ns, m.dur_ns AS dur_ns,\n" \
    "       s.status AS status, s.stack AS stack_id, m.kernel_seq AS kernel_seq,\n" \
    "       m.site AS site, m.nvtx_range AS nvtx_range,\n" \
    "       m.graph_node AS graph_node, m.launch_stack AS launch_stack_id,\n" \
    "       " XP_STATUS_NAME_SQL("s") \
    "FROM memset_rows m JOIN call_sites s ON s.id = m.site LEFT JOIN apis a ON a.id = s.api;\n"
/* Graph nodes (issue 17, schema 2): a copy or memset captured on a stream or
 * added to a CUDA graph is defined there, not run; each launch of a graph
 * runs it, a copy_rows (memset_rows) row whose graph_node is the node's id.
 * Keyed by the journal's node_id, so a node stored after the launches that
 * ran it (another thread's chunk) still meets them. */
#define XP_SCHEMA_GRAPH_SQL                                                             \
    "CREATE TABLE graph_node_rows(\n"                                                   \
    "  id INTEGER PRIMARY KEY,\n"                                                       \
    "  api INTEGER NOT NULL,\n"                                                         \
    "  op INTEGER NOT NULL,\n"                                                          \
    "  via INTEGER NOT NULL,\n"                                                         \
    "  graph INTEGER NOT NULL,\n"                                                       \
    "  handle INTEGER,\n"                                                               \
    "  stream INTEGER,\n"                                                               \
    "  direction INTEGER NOT NULL,\n"                                                   \
    "  host_mem INTEGER NOT NULL,\n"                                                    \
    "  kind INTEGER NOT NULL,\n"                                                        \
    "  src INTEGER NOT NULL,\n"                                                         \
    "  dst INTEGER NOT NULL,\n"                                                         \
    "  bytes INTEGER NOT NULL,\n"                                                       \
    "  value INTEGER,\n"                                                                \
    "  device INTEGER NOT NULL,\n"                                                      \
    "  tid INTEGER NOT NULL,\n"                                                         \
    "  start_ns INTEGER NOT NULL,\n"                                                    \
    "  end_ns INTEGER NOT NULL,\n"                                                      \
    "  stack INTEGER,\n"                                                                \
    "  updated INTEGER NOT NULL\n"                                                      \
    ");\n"                                                                              \
    "CREATE VIEW graph_nodes AS\n"                                                      \
    "SELECT g.id AS id,\n"                                                              \
    "       coalesce(a.name, 'api#' || g.api) AS api, a.layer AS layer,\n"              \
    "       CASE g.op WHEN 1 THEN 'copy' WHEN 2 THEN 'memset' END AS op,\n"             \
    "       CASE g.via WHEN 1 THEN 'capture' WHEN 2 THEN 'add' WHEN 3 THEN 'set' END\n" \
    "         AS via,\n"                                                                \
    "       g.graph AS graph, g.handle AS handle, g.stream AS stream,\n"                \
    "       CASE g.direction WHEN 1 THEN 'H2D' WHEN 2 THEN 'D2H' WHEN 3 THEN 'D2D'\n"   \
    "                        WHEN 4 THEN 'H2H' END AS direction,\n"                     \
    "       CASE g.host_mem WHEN 1 THEN 'pageable' WHEN 2 THEN 'pinned'\n"              \
    "                       WHEN 3 THEN 'managed' END AS host_mem,\n"                   \
    "       nullif(g.kind, 255) AS kind, g.src AS src, g.dst AS dst, g.bytes AS bytes,\n" \
    "       g.value AS value, g.device AS device, g.tid AS tid,\n"                      \
    "       g.start_ns AS start_ns, g.end_ns AS end_ns, g.stack AS stack_id,\n"         \
    "       g.updated AS updated\n"                                                     \
    "FROM graph_node_rows g LEFT JOIN apis a ON a.id = g.api;\n"
/* A caching allocator's blocks (schema 3): each event as reported (id is
 * the journal's seq, the allocator's own order), and each block handed out
 * paired with its return, the next event at its address: the allocator
 * hands an address out again only after it took it back. */
#define XP_SCHEMA_BLOCKS_SQL                                                            \
    "CREATE TABLE block_rows(\n"                                                        \
    "  id INTEGER PRIMARY KEY,\n"                                                       \
    "  op INTEGER NOT NULL,\n"                                                          \
    "  allocator INTEGER NOT NULL,\n"                                                   \
    "  device INTEGER NOT NULL,\n"                                                      \
    "  ptr INTEGER NOT NULL,\n"                                                         \
    "  bytes INTEGER NOT NULL,\n"                                                       \
    "  time_ns INTEGER NOT NULL,\n"                                                     \
    "  tid INTEGER NOT NULL,\n"                                                         \
    "  stack INTEGER,\n"                                                                \
    "  allocated INTEGER NOT NULL,\n"                                                   \
    "  reserved INTEGER NOT NULL\n"                                                     \
    ");\n"                                                                              \
    "CREATE INDEX block_rows_ptr ON block_rows(allocator, device, ptr, id);\n"          \
    "CREATE VIEW block_events AS\n"                                                     \
    "SELECT b.id AS seq,\n"                                                             \
    "       CASE b.op WHEN 1 THEN 'taken' WHEN 2 THEN 'returned' END AS op,\n"          \
    "       CASE b.allocator WHEN 1 THEN 'pytorch' END AS allocator,\n"                 \
    "       b.device AS device, b.ptr AS ptr, b.bytes AS bytes, b.time_ns AS time_ns,\n" \
    "       b.tid AS tid, b.stack AS stack_id, b.allocated AS allocated,\n"             \
    "       b.reserved AS reserved\n"                                                   \
    "FROM block_rows b;\n"                                                              \
    "CREATE VIEW blocks AS\n"                                                           \
    "SELECT t.id AS seq,\n"                                                             \
    "       CASE t.allocator WHEN 1 THEN 'pytorch' END AS allocator,\n"                 \
    "       t.device AS device, t.ptr AS ptr, t.bytes AS bytes,\n"                      \
    "       t.time_ns AS taken_ns, t.tid AS tid, t.stack AS stack_id,\n"                \
    "       iif(n.op = 2, n.time_ns, NULL) AS returned_ns,\n"                           \
    "       iif(n.op = 2, n.stack, NULL) AS return_stack_id\n"                          \
    "FROM block_rows t\n"                                                               \
    "LEFT JOIN block_rows n ON n.id = (SELECT min(x.id) FROM block_rows x\n"            \
    "                                  WHERE x.allocator = t.allocator\n"               \
    "                                    AND x.device = t.device AND x.ptr = t.ptr\n"   \
    "                                    AND x.id > t.id)\n"                            \
    "WHERE t.op = 1;\n"
const char xp_schema_sql[] =
    "CREATE TABLE meta(\n"
    "  key TEXT PRIMARY KEY NOT NULL,\n"
    "  value TEXT\n"
    ");\n"
    /* Which journal feeds this database; id is always 1. */
    "CREATE TABLE journal(\n"
    "  id INTEGER PRIMARY KEY CHECK (id = 1),\n"
    "  pid INTEGER NOT NULL,\n"
    "  start_wall_ns INTEGER NOT NULL,\n"
    "  start_mono_ns INTEGER NOT NULL,\n"
    "  torn INTEGER NOT NULL DEFAULT 0\n"
    ");\n"
    /* Per journal chunk, the offset just past the last record stored:
     * written in the same transaction as the rows. */
    "CREATE TABLE journal_progress(\n"
    "  chunk INTEGER PRIMARY KEY,\n"
    "  offset INTEGER NOT NULL\n"
    ");\n"
    "CREATE TABLE apis(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  name TEXT NOT NULL UNIQUE,\n"
    "  layer TEXT NOT NULL\n"
    ");\n"
    /* The names of status codes per layer (runtime cudaError_t, driver
     * CUresult), filled at creation from the build's table: SQL users name a
     * status without NVIDIA's headers, and the views show status_name. */
    "CREATE TABLE cuda_error_names(\n"
    "  layer TEXT NOT NULL,\n"
    "  code INTEGER NOT NULL,\n"
    "  name TEXT NOT NULL,\n"
    "  PRIMARY KEY (layer, code)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE stacks(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  hash INTEGER NOT NULL UNIQUE,\n"
    "  depth INTEGER,\n"
    "  frames BLOB,\n"
    "  pyframes BLOB\n"
    ");\n"
    /* Python code objects, keyed by the journal's key (which pyframes
     * name): no placeholder row is needed for one stored later. */
    "CREATE TABLE py_code(\n"
    "  key INTEGER PRIMARY KEY,\n"
    "  file TEXT NOT NULL,\n"
    "  name TEXT NOT NULL,\n"
    "  first_line INTEGER NOT NULL,\n"
    "  line_table BLOB,\n"
    "  py_version TEXT NOT NULL,\n"
    "  line_format INTEGER\n"
    ");\n"
    "CREATE TABLE modules(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  path TEXT NOT NULL,\n"
    "  base INTEGER NOT NULL,\n"
    "  size INTEGER NOT NULL,\n"
    "  low INTEGER NOT NULL,\n"
    "  build_id TEXT,\n"
    "  UNIQUE (path, base)\n"
    ");\n"
    "CREATE TABLE call_sites(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  api INTEGER NOT NULL,\n"
    "  status INTEGER NOT NULL,\n"
    "  device INTEGER NOT NULL,\n"
    "  tid INTEGER NOT NULL,\n"
    "  stream INTEGER NOT NULL,\n"
    "  stack INTEGER,\n"
    "  direction INTEGER NOT NULL,\n"
    "  host_mem INTEGER NOT NULL,\n"
    "  blocking INTEGER NOT NULL,\n"
    "  kind INTEGER NOT NULL\n"
    ");\n"
    "CREATE INDEX call_sites_key ON call_sites(api, status, device, tid, stream, stack,\n"
    "  direction, host_mem, blocking, kind);\n"
    /* fingerprint and fp_kind (1 full, 2 sampled) are NULL together when
     * the content is not known; kernel_seq is NULL only for a copy from a
     * version 1 journal, which did not count launches. */
    "CREATE TABLE copy_rows(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  site INTEGER NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  src INTEGER NOT NULL,\n"
    "  dst INTEGER NOT NULL,\n"
    "  start_ns INTEGER NOT NULL,\n"
    "  dur_ns INTEGER NOT NULL,\n"
    "  kernel_seq INTEGER,\n"
    "  fingerprint INTEGER,\n"
    "  fp_kind INTEGER,\n"
    "  nvtx_range INTEGER,\n"
    "  full_fp INTEGER,\n"
    "  graph_node INTEGER,\n"
    "  launch_stack INTEGER\n"
    ");\n"
    /* Memsets share call_sites with copies (direction 0, kind 255). */
    "CREATE TABLE memset_rows(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  site INTEGER NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  dst INTEGER NOT NULL,\n"
    "  value INTEGER NOT NULL,\n"
    "  kernel_seq INTEGER NOT NULL,\n"
    "  start_ns INTEGER NOT NULL,\n"
    "  dur_ns INTEGER NOT NULL,\n"
    "  nvtx_range INTEGER,\n"
    "  graph_node INTEGER,\n"
    "  launch_stack INTEGER\n"
    ");\n"
    /* copy_start_ns: the start of the asynchronous copy this sync completed
     * (the thread's previous recorded call, on the stream or device it
     * synchronized), NULL none; fingerprint/fp_kind: that D2H copy's
     * destination hashed once complete. */
    "CREATE TABLE sync_rows(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  site INTEGER NOT NULL,\n"
    "  start_ns INTEGER NOT NULL,\n"
    "  dur_ns INTEGER NOT NULL,\n"
    "  nvtx_range INTEGER,\n"
    "  copy_start_ns INTEGER,\n"
    "  fingerprint INTEGER,\n"
    "  fp_kind INTEGER\n"
    ");\n"
    /* id is the journal's alloc_id, which FREE records name. */
    "CREATE TABLE alloc_rows(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  api INTEGER NOT NULL,\n"
    "  kind INTEGER NOT NULL,\n"
    "  device INTEGER NOT NULL,\n"
    "  ptr INTEGER NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  alloc_ns INTEGER NOT NULL,\n"
    "  alloc_end_ns INTEGER NOT NULL,\n"
    "  tid INTEGER NOT NULL,\n"
    "  stack INTEGER\n"
    ");\n"
    "CREATE INDEX alloc_rows_ptr ON alloc_rows(ptr, alloc_ns);\n"
    "CREATE INDEX alloc_rows_time ON alloc_rows(alloc_ns);\n"
    /* One row per successful free of a known allocation, keyed by what it
     * freed: whichever of the two records is ingested first, the pair
     * meets in the allocations view, and a free stored twice is refused. */
    "CREATE TABLE free_rows(\n"
    "  alloc_id INTEGER PRIMARY KEY,\n"
    "  api INTEGER NOT NULL,\n"
    "  free_ns INTEGER NOT NULL,\n"
    "  free_end_ns INTEGER NOT NULL,\n"
    "  tid INTEGER NOT NULL,\n"
    "  stack INTEGER\n"
    ");\n"
    "CREATE TABLE unknown_free_rows(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  api INTEGER NOT NULL,\n"
    "  ptr INTEGER NOT NULL,\n"
    "  kind INTEGER NOT NULL,\n"
    "  device INTEGER NOT NULL,\n"
    "  tid INTEGER NOT NULL,\n"
    "  start_ns INTEGER NOT NULL,\n"
    "  end_ns INTEGER NOT NULL,\n"
    "  stack INTEGER\n"
    ");\n"
    "CREATE TABLE error_rows(\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  record INTEGER NOT NULL,\n"
    "  api INTEGER NOT NULL,\n"
    "  status INTEGER NOT NULL,\n"
    "  device INTEGER NOT NULL,\n"
    "  tid INTEGER NOT NULL,\n"
    "  start_ns INTEGER NOT NULL,\n"
    "  end_ns INTEGER NOT NULL,\n"
    "  stack INTEGER,\n"
    "  copy_id INTEGER,\n"
    "  detail TEXT NOT NULL\n"
    ");\n"
    "CREATE INDEX error_rows_api ON error_rows(api);\n"
    XP_SCHEMA_CALL_VIEWS_SQL
    "CREATE VIEW syncs AS\n"
    "SELECT y.id AS id,\n"
    "       coalesce(a.name, 'api#' || s.api) AS api,\n"
    "       a.layer AS layer,\n"
    "       s.stream AS stream, s.device AS device, s.tid AS tid,\n"
    "       y.start_ns AS start_ns, y.start_ns + y.dur_ns AS end_ns, y.dur_ns AS dur_ns,\n"
    "       s.status AS status, s.stack AS stack_id, y.site AS site,\n"
    "       y.nvtx_range AS nvtx_range, y.copy_start_ns AS copy_start_ns,\n"
    "       y.fingerprint AS fingerprint,\n"
    "       CASE y.fp_kind WHEN 1 THEN 'full' WHEN 2 THEN 'sampled' END AS fingerprint_kind,\n"
    "       " XP_STATUS_NAME_SQL("s")
    "FROM sync_rows y JOIN call_sites s ON s.id = y.site LEFT JOIN apis a ON a.id = s.api;\n"
    "CREATE VIEW allocations AS\n"
    "SELECT r.id AS id,\n"
    "       coalesce(a.name, 'api#' || r.api) AS api,\n"
    "       a.layer AS layer,\n"
    "       " XP_ALLOC_KIND_SQL("r") " AS kind,\n"
    "       r.device AS device, r.ptr AS ptr, r.bytes AS bytes,\n"
    "       r.alloc_ns AS alloc_ns, f.free_ns AS free_ns,\n"
    "       r.stack AS alloc_stack_id, f.stack AS free_stack_id,\n"
    "       r.alloc_end_ns AS alloc_end_ns, f.free_end_ns AS free_end_ns,\n"
    "       r.tid AS alloc_tid, f.tid AS free_tid,\n"
    "       CASE WHEN f.alloc_id IS NOT NULL THEN coalesce(fa.name, 'api#' || f.api) END\n"
    "         AS free_api\n"
    "FROM alloc_rows r LEFT JOIN free_rows f ON f.alloc_id = r.id\n"
    "     LEFT JOIN apis a ON a.id = r.api LEFT JOIN apis fa ON fa.id = f.api;\n"
    "CREATE VIEW unknown_frees AS\n"
    "SELECT u.id AS id,\n"
    "       coalesce(a.name, 'api#' || u.api) AS api,\n"
    "       a.layer AS layer, u.ptr AS ptr,\n"
    "       " XP_ALLOC_KIND_SQL("u") " AS kind,\n"
    "       u.device AS device, u.tid AS tid, u.start_ns AS start_ns, u.end_ns AS end_ns,\n"
    "       u.stack AS stack_id\n"
    "FROM unknown_free_rows u LEFT JOIN apis a ON a.id = u.api;\n"
    "CREATE VIEW errors AS\n"
    "SELECT e.id AS id,\n"
    "       coalesce(a.name, 'api#' || e.api) AS api,\n"
    "       a.layer AS layer,\n"
    "       e.status AS status, e.tid AS tid, e.start_ns AS start_ns, e.end_ns AS end_ns,\n"
    "       e.stack AS stack_id, e.detail AS detail, e.device AS device,\n"
    "       CASE e.record WHEN 4 THEN 'copy' WHEN 5 THEN 'alloc' WHEN 6 THEN 'free'\n"
    "                     WHEN 7 THEN 'sync' WHEN 8 THEN 'call' WHEN 9 THEN 'memset'\n"
    "       END AS record,\n"
    "       e.copy_id AS copy_id,\n"
    "       " XP_STATUS_NAME_SQL("e")
    "FROM error_rows e LEFT JOIN apis a ON a.id = e.api;\n"
    XP_SCHEMA_NVTX_SQL XP_SCHEMA_GRAPH_SQL XP_SCHEMA_BLOCKS_SQL XP_SCHEMA_FRAMES_SQL;

const char xp_schema_frames_sql[] = XP_SCHEMA_FRAMES_SQL;

static void set_err(char *err, size_t errlen, const char *path, const char *msg)
{
    if (err == NULL || errlen == 0)
        return;
    if (path != NULL)
        snprintf(err, errlen, "%s: %s", path, msg);
    else
        snprintf(err, errlen, "%s", msg);
}

/* Like set_err with sqlite's message for db's last error. */
static void set_db_err(char *err, size_t errlen, const char *path, sqlite3 *db)
{
    set_err(err, errlen, path, db != NULL ? sqlite3_errmsg(db) : "out of memory");
}

static int query_int(sqlite3 *db, const char *sql, long long *out);

static int exec(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
    if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK) {
        set_db_err(err, errlen, NULL, db);
        return -1;
    }
    return 0;
}

int xp_schema_add_apis(sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO apis(id, name, layer) VALUES (?1, ?2, ?3)",
                           -1, &st, NULL) != SQLITE_OK) {
        set_db_err(err, errlen, NULL, db);
        return -1;
    }
    int rc = 0;
    for (unsigned id = 1; id < XP_API_COUNT && rc == 0; id++) {
        sqlite3_bind_int(st, 1, (int)id);
        sqlite3_bind_text(st, 2, xp_api_name(id), -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, xp_api_layer(id), -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_DONE) {
            set_db_err(err, errlen, NULL, db);
            rc = -1;
        }
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Fills cuda_error_names from the generated table (xp_cuda_errors.h). */
static int xp_schema_add_error_names(sqlite3 *db, char *err, size_t errlen)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "INSERT INTO cuda_error_names(layer, code, name) VALUES (?1, ?2, ?3)",
                           -1, &st, NULL) != SQLITE_OK) {
        set_db_err(err, errlen, NULL, db);
        return -1;
    }
    int rc = 0;
    for (int driver = 0; driver <= 1 && rc == 0; driver++) {
        int64_t code = 0;
        const char *name;
        for (size_t i = 0; rc == 0 && (name = xp_cuda_status_at(driver, i, &code)) != NULL; i++) {
            sqlite3_bind_text(st, 1, driver ? "driver" : "runtime", -1, SQLITE_STATIC);
            sqlite3_bind_int64(st, 2, code);
            sqlite3_bind_text(st, 3, name, -1, SQLITE_STATIC);
            if (sqlite3_step(st) != SQLITE_DONE) {
                set_db_err(err, errlen, NULL, db);
                rc = -1;
            }
            sqlite3_reset(st);
        }
    }
    sqlite3_finalize(st);
    return rc;
}

int xp_schema_create(sqlite3 *db, char *err, size_t errlen)
{
    char sql[512];
    long long objects = 0;
    if (exec(db, "BEGIN IMMEDIATE", err, errlen) != 0)
        return -1;
    /* Another process may have created it since our check: leave theirs. */
    if (query_int(db, "SELECT count(*) FROM sqlite_schema", &objects) != SQLITE_ROW) {
        set_db_err(err, errlen, NULL, db);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    if (objects != 0)
        return exec(db, "COMMIT", err, errlen);
    snprintf(sql, sizeof sql,
             "PRAGMA application_id = %d;\n"
             "PRAGMA user_version = %d;\n"
             "INSERT INTO meta(key, value) VALUES ('schema_version', '%d'),\n"
             "  ('xferprof_version', '%s'), ('records_lost', '0');\n",
             XP_APPLICATION_ID, XP_SCHEMA_VERSION, XP_SCHEMA_VERSION, XP_VERSION_STRING);
    if (exec(db, xp_schema_sql, err, errlen) != 0 || exec(db, sql, err, errlen) != 0 ||
        xp_schema_add_apis(db, err, errlen) != 0 || xp_schema_add_error_names(db, err, errlen) != 0 ||
        exec(db, "COMMIT", err, errlen) != 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

/* Runs a query returning one integer.  Returns SQLITE_ROW with *out set
 * (OUT), SQLITE_DONE if it returned no row, or an error code. */
static int query_int(sqlite3 *db, const char *sql, long long *out)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_step(st);
    if (rc == SQLITE_ROW)
        *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return rc;
}

int xp_schema_has(sqlite3 *db, const char *name, int *has)
{
    sqlite3_stmt *st = NULL;
    *has = 0;
    int rc = sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_schema WHERE name = ?1 AND type IN "
                                    "('table', 'view')", -1, &st, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) {
        rc = sqlite3_step(st);
        *has = rc == SQLITE_ROW;
        rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? SQLITE_OK : rc;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The tables whose last page xp_schema_check touches: a file cut short
 * usually lost the pages written last, at the right edge of these trees. */
static const char *const right_edges[] = {
    "SELECT max(rowid) FROM copy_rows", "SELECT max(rowid) FROM memset_rows",
    "SELECT max(rowid) FROM sync_rows",
    "SELECT max(rowid) FROM alloc_rows", "SELECT max(rowid) FROM free_rows",
    "SELECT max(rowid) FROM error_rows", "SELECT max(rowid) FROM stacks",
    "SELECT max(rowid) FROM journal_progress", "SELECT max(rowid) FROM call_sites",
    "SELECT max(rowid) FROM nvtx_range_rows", "SELECT max(rowid) FROM nvtx_end_rows",
};
/* From the schema that made them on. */
static const struct {
    int since;
    const char *sql;
} later_edges[] = {
    {2, "SELECT max(rowid) FROM graph_node_rows"},
    {3, "SELECT max(rowid) FROM block_rows"},
};

int xp_schema_check(sqlite3 *db, int *version, char *err, size_t errlen)
{
    long long app = 0, objects = 0;
    /* The first read of the file: where a file that is not SQLite at all
     * ("file is not a database") or a damaged header shows. */
    if (query_int(db, "PRAGMA application_id", &app) != SQLITE_ROW ||
        query_int(db, "SELECT count(*) FROM sqlite_schema", &objects) != SQLITE_ROW) {
        set_db_err(err, errlen, NULL, db);
        return -1;
    }
    if (app != XP_APPLICATION_ID) {
        if (objects == 0 && app == 0)
            return 1;
        set_err(err, errlen, NULL, "not an xferprof database");
        return -1;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'schema_version'", -1, &st,
                           NULL) != SQLITE_OK) {
        /* Our application id but no meta table: not one we made. */
        if (sqlite3_errcode(db) == SQLITE_ERROR)
            set_err(err, errlen, NULL, "not an xferprof database (no meta table)");
        else
            set_db_err(err, errlen, NULL, db);
        return -1;
    }
    int rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        if (rc == SQLITE_DONE)
            set_err(err, errlen, NULL, "not an xferprof database (no schema_version)");
        else
            set_db_err(err, errlen, NULL, db);
        sqlite3_finalize(st);
        return -1;
    }
    const char *text = (const char *)sqlite3_column_text(st, 0);
    char *end = NULL;
    errno = 0;
    long v = text != NULL ? strtol(text, &end, 10) : 0;
    int ok = text != NULL && end != text && *end == '\0' && errno == 0 && v >= 1 && v <= 1000000;
    sqlite3_finalize(st);
    if (!ok) {
        set_err(err, errlen, NULL, "not an xferprof database (bad schema_version)");
        return -1;
    }
    if (v > XP_SCHEMA_VERSION) {
        char msg[128];
        snprintf(msg, sizeof msg, "database schema %ld is newer than this xferprof (%d)", v,
                 XP_SCHEMA_VERSION);
        set_err(err, errlen, NULL, msg);
        return -1;
    }
    size_t n_edges = sizeof right_edges / sizeof right_edges[0];
    for (size_t i = 0; i < n_edges + sizeof later_edges / sizeof later_edges[0]; i++) {
        long long unused = 0;
        if (i >= n_edges && v < later_edges[i - n_edges].since)
            continue;
        rc = query_int(db, i < n_edges ? right_edges[i] : later_edges[i - n_edges].sql, &unused);
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            set_db_err(err, errlen, NULL, db);
            return -1;
        }
    }
    if (version != NULL)
        *version = (int)v;
    return 0;
}

/* Open with flags, make errors readable, check.
 * Returns what xp_schema_check returns; on -1 *out is closed and NULL. */
static int open_checked(const char *path, int flags, sqlite3 **out, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    *out = NULL;
    if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
        set_db_err(err, errlen, path, db);
        sqlite3_close(db);
        return -1;
    }
    /* A reader waits for the ingest's short transactions rather than
     * failing with "database is locked". */
    sqlite3_busy_timeout(db, 5000);
    char why[256] = "";
    int rc = xp_schema_check(db, NULL, why, sizeof why);
    if (rc < 0) {
        set_err(err, errlen, path, why);
        sqlite3_close(db);
        return -1;
    }
    *out = db;
    return rc;
}

/* Schema 1 to 2 (issue 17): graph nodes, and the graph columns of copies and
 * memsets; 2 to 3: the blocks of caching allocators.  For a database an
 * older build made that this one writes again (a journal recovered into
 * it).  In one transaction, after looking again: two writers may meet here. */
static int upgrade(sqlite3 *db, char *err, size_t errlen)
{
    static const char to_2[] =
        "ALTER TABLE copy_rows ADD COLUMN graph_node INTEGER;\n"
        "ALTER TABLE copy_rows ADD COLUMN launch_stack INTEGER;\n"
        "ALTER TABLE memset_rows ADD COLUMN graph_node INTEGER;\n"
        "ALTER TABLE memset_rows ADD COLUMN launch_stack INTEGER;\n"
        "DROP VIEW copies;\n"
        "DROP VIEW memsets;\n" XP_SCHEMA_CALL_VIEWS_SQL XP_SCHEMA_GRAPH_SQL;
    static const char to_3[] = XP_SCHEMA_BLOCKS_SQL
        "PRAGMA user_version = 3;\n"
        "UPDATE meta SET value = '3' WHERE key = 'schema_version';\n";
    long long v = 0;
    if (exec(db, "BEGIN IMMEDIATE", err, errlen) != 0)
        return -1;
    if (query_int(db, "SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'schema_version'",
                  &v) != SQLITE_ROW) {
        set_db_err(err, errlen, NULL, db);
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    if ((v == 1 && exec(db, to_2, err, errlen) != 0) ||
        (v <= 2 && exec(db, to_3, err, errlen) != 0) || exec(db, "COMMIT", err, errlen) != 0) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

int xp_db_open_write(const char *path, sqlite3 **out, char *err, size_t errlen)
{
    sqlite3 *db = NULL;
    *out = NULL;
    /* SQLite would open a FIFO or a device and wait on it for ever. */
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        set_err(err, errlen, path, "not a regular file");
        return -1;
    }
    int rc = open_checked(path, XP_DB_WRITE_FLAGS, &db, err, errlen);
    if (rc < 0)
        return -1;
    char why[256] = "";
    long long known = 0;
    if (rc == 1) {
        /* A new file; or one another process was creating meanwhile, which
         * is then checked like any existing database. */
        if (xp_schema_create(db, why, sizeof why) != 0 ||
            xp_schema_check(db, NULL, why, sizeof why) != 0)
            goto fail;
    } else if (query_int(db, "SELECT CAST(value AS INTEGER) FROM meta "
                             "WHERE key = 'schema_version'", &known) != SQLITE_ROW ||
               (known < XP_SCHEMA_VERSION && upgrade(db, why, sizeof why) != 0)) {
        if (why[0] == '\0')
            snprintf(why, sizeof why, "%s", sqlite3_errmsg(db));
        goto fail;
    } else if (query_int(db, "SELECT count(*) FROM apis", &known) != SQLITE_ROW) {
        snprintf(why, sizeof why, "%s", sqlite3_errmsg(db));
        goto fail;
    } else if (known < XP_API_COUNT - 1 && xp_schema_add_apis(db, why, sizeof why) != 0) {
        goto fail;
    }
    *out = db;
    return 0;
fail:
    set_err(err, errlen, path, why);
    sqlite3_close(db);
    return -1;
}
