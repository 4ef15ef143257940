/* xp_output.c: writing a document to stdout or, atomically, to a file. */
#include "xp_output.h"
#include "xp_mkdirs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int xp_output_open(struct xp_output *o, const char *path)
{
    *o = (struct xp_output){.f = stdout, .path = path};
    if (!path)
        return 0;
    /* The folder the user named is made if missing, as the preload does for
     * a database (mkdir -p). */
    if (xp_make_parent_dirs(path, NULL, 0) != 0)
        return -1;
    size_t n = strlen(path) + sizeof ".tmpXXXXXX";
    if (!(o->tmp = malloc(n)))
        return -1;
    snprintf(o->tmp, n, "%s.tmpXXXXXX", path);
    int fd = mkstemp(o->tmp);
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
            unlink(o->tmp);
        }
        free(o->tmp);
        *o = (struct xp_output){0};
        errno = e;
        return -1;
    }
    /* mkstemp makes 0600; a report is as readable as any file the user makes. */
    mode_t mask = umask(0);
    umask(mask);
    (void)fchmod(fd, 0666 & ~mask);
    return 0;
}

int xp_output_close(struct xp_output *o, bool keep)
{
    if (!o->f)
        return 0;
    if (!o->tmp) {
        o->f = NULL;
        return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
    }
    errno = 0;
    bool ok = keep && fflush(o->f) == 0 && !ferror(o->f) && fsync(fileno(o->f)) == 0;
    int e = errno ? errno : EIO;
    if (fclose(o->f) != 0 && ok)
        ok = false, e = errno;
    if (ok && rename(o->tmp, o->path) != 0)
        ok = false, e = errno;
    if (!ok)
        unlink(o->tmp);
    free(o->tmp);
    *o = (struct xp_output){0};
    if (ok)
        return 0;
    errno = keep ? e : 0;
    return keep ? -1 : 0;
}
