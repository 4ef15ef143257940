/* xp_outfile.h: the preload's output files: which name a process's database
 * gets, and creating it without ever replacing what is not ours. */
#ifndef XP_OUTFILE_H
#define XP_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What the name of a process's database depends on. */
typedef struct xp_outfile_req {
    const char *pattern;      /* XFERPROF_OUTPUT (see xp_expand_output) */
    const char *manifest;     /* XFERPROF_MANIFEST, "" without `xferprof run` */
    const char *host;
    const char *rank;         /* NULL when none */
    pid_t pid;
    bool forked;              /* forked (not exec'd) from a process that had the preload */
    uint64_t start_wall_ns;
} xp_outfile_req;

/* The absolute path of this process's database, its folder made if missing
 * (xp_make_parent_dirs: as `mkdir -p`).  The name the pattern
 * gives is taken unless it belongs to another process: one of the same
 * `xferprof run` (manifest), the parent this process was forked from (a
 * pattern without %p gives both the same name), a process that is still
 * recording into it (its journal names a live pid), or the parent or an
 * earlier program image of this pid (its meta pid).  Then the process gets
 * NAME-PID.EXT (NAME-PID-2.EXT, ... if that is taken too) and *note says
 * why, for the one line the preload prints.  A name that exists and is not
 * a regular file (a FIFO, a device, a directory, a symbolic link), or whose
 * companions (-wal, -shm, .xpj) are such, is refused.  Returns 0 with out
 * set (and note "" when the name was the pattern's), or -1 with a reason in
 * err. */
int xp_outfile_choose(const xp_outfile_req *q, char *out, size_t outlen, char *note,
                      size_t notelen, char *err, size_t errlen);

/* Removes what an earlier run left under path's companion names (-wal,
 * -shm, .xpj, .xpr): regular files and symbolic links only (a link is removed,
 * never followed).  Returns 0, or -1 with a reason in err. */
int xp_outfile_clear_companions(const char *path, char *err, size_t errlen);

/* Creates the database at path with its schema: written first under a new
 * name beside it (O_CREAT|O_EXCL|O_NOFOLLOW) and renamed over path only when
 * complete, so that an earlier database there is replaced whole or not at
 * all, and nothing but a regular file or nothing is ever replaced.  Returns
 * 0, or -1 with a reason in err (nothing is left behind). */
int xp_outfile_create_db(const char *path, char *err, size_t errlen);

/* The reserve beside a database (PATH XP_RESERVE_SUFFIX, xp_format.h): disk
 * space set aside at start and given back at exit, so that on a full disk
 * the database can still say how many records did not fit, and the closing
 * checkpoint has room to fold the WAL into the database file (see
 * xp_engine.c). */
#define XP_RESERVE_BYTES (512 * 1024)

/* Makes path's reserve (O_EXCL|O_NOFOLLOW, its blocks allocated).  Returns
 * 0, or -1 when it could not (no room: there is then none to give back). */
int xp_outfile_make_reserve(const char *path);

/* Removes path's reserve, giving its blocks back to the file system. */
void xp_outfile_drop_reserve(const char *path);

/* Removes the database at path and its companions (after a failed start:
 * only files this process created). */
void xp_outfile_remove(const char *path);

/* Appends "PID PPID PATH" to the manifest of `xferprof run`.  Returns 0, or
 * -1 with a reason in err (a manifest that is not a regular file, a write
 * error). */
int xp_outfile_manifest_add(const char *manifest, pid_t pid, const char *path, char *err,
                            size_t errlen);

/* Says in the manifest that this process of rank `rank` ends without having
 * recorded anything ("PID PPID - RANK"; a database path never starts with
 * '-'), so that `xferprof run` can name a rank that made no CUDA call.
 * Best effort, silent. */
void xp_outfile_manifest_silent(const char *manifest, pid_t pid, const char *rank);

#endif
