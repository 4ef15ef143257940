/* run_finish.h: the manifest of `xferprof run` and what it does once CMD has ended. */
#ifndef RUN_FINISH_H
#define RUN_FINISH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The manifest: created empty in TMPDIR, named to every process through
 * XFERPROF_MANIFEST; path gets its name.  Returns its fd, or -1 after
 * printing why. */
int xp_run_make_manifest(char *path, size_t len);

/* After CMD (pid child) ended with the launcher's exit status `status`:
 * recovers the databases whose process died, records the exit status in
 * CMD's own, and prints one line per database (none with quiet), and one
 * per rank of the job that recorded nothing. */
void xp_run_finish(int manifest_fd, pid_t child, int status, bool quiet);

#endif
