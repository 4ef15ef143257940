/* xp_output.h: where a command's document goes: stdout, or -o FILE written beside it and renamed over it once complete. */
#ifndef XP_OUTPUT_H
#define XP_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

struct xp_output {
    FILE *f;        /* stdout, or the temporary file */
    char *tmp;      /* NULL for stdout */
    const char *path;
};

/* Opens the output for path (NULL: stdout).  A file is created as
 * path.tmpXXXXXX in the same folder, so a reader (CI, a dashboard) never sees
 * half a document and a failed command leaves an existing file as it was.
 * Its folder is made if missing (as `mkdir -p`).  Opened before the work
 * is done, an unwritable path fails at once.
 * Returns 0, or -1 with errno set. */
int xp_output_open(struct xp_output *o, const char *path);

/* Ends the output: with keep, flushes and renames the temporary file over
 * the path (mode 0666 less the umask, like any file the user makes); without,
 * or when writing failed, removes it.  Returns 0, or -1 with errno set. */
int xp_output_close(struct xp_output *o, bool keep);

#endif
