/* xp_mkdirs.c: creating the missing folders above an output file, as mkdir -p does. */
#include "xp_mkdirs.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xp_config.h"

/* err (may be NULL) gets "WHAT DIR: reason", errno e is set; returns -1. */
static int xp_mkdirs_fail(int e, char *err, size_t errlen, const char *what, const char *dir)
{
    if (err)
        snprintf(err, errlen, "%s%s: %s", what, dir, strerror(e));
    errno = e;
    return -1;
}

/* Whether the symbolic link dir (lstat'ed into *ls) may be followed: the
 * kernel's rule with fs.protected_symlinks=1, applied whatever that setting
 * is (it is 0 on some machines): in a sticky world-writable folder (/tmp), a
 * link is followed only when it is ours or its owner owns the folder; a link
 * anywhere else was put there by someone who could write that folder. */
static bool xp_link_trusted(char *dir, const struct stat *ls)
{
    if (ls->st_uid == geteuid())
        return true;
    char *slash = strrchr(dir, '/');
    struct stat ps;
    int rc;
    if (slash == NULL) {
        rc = stat(".", &ps);
    } else if (slash == dir) {
        rc = stat("/", &ps);
    } else {
        *slash = '\0';
        rc = stat(dir, &ps);
        *slash = '/';
    }
    if (rc != 0)
        return false;
    bool sticky_shared = (ps.st_mode & S_ISVTX) && (ps.st_mode & S_IWOTH);
    return !sticky_shared || ps.st_uid == ls->st_uid;
}

int xp_make_parent_dirs(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    if ((size_t)snprintf(dir, sizeof dir, "%s", path) >= sizeof dir)
        return xp_mkdirs_fail(ENAMETOOLONG, err, errlen, "", path);
    char *last = strrchr(dir, '/');
    if (last == NULL || last == dir)
        return 0; /* in the current folder, or in / */
    *last = '\0';
    /* Each prefix in turn, from the top: made if missing, checked if not. */
    for (char *p = dir + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char saved = *p;
        *p = '\0';
        struct stat st;
        if (p[-1] != '/' && strcmp(dir, ".") != 0 && strcmp(dir, "..") != 0 &&
            mkdir(dir, 0777) != 0 && errno != EEXIST)
            return xp_mkdirs_fail(errno, err, errlen, "cannot create the folder ", dir);
        if (lstat(dir, &st) != 0)
            return xp_mkdirs_fail(errno, err, errlen, "", dir);
        if (S_ISLNK(st.st_mode)) {
            if (!xp_link_trusted(dir, &st)) {
                if (err)
                    snprintf(err, errlen, "%s is a symbolic link owned by another user "
                             "(uid %u), not followed", dir, (unsigned)st.st_uid);
                errno = ELOOP;
                return -1;
            }
            if (stat(dir, &st) != 0)
                return xp_mkdirs_fail(errno, err, errlen, "", dir);
        }
        if (!S_ISDIR(st.st_mode)) {
            if (err)
                snprintf(err, errlen, "%s is %s, not a folder", dir,
                         S_ISREG(st.st_mode) ? "a regular file" : xp_file_kind(st.st_mode));
            errno = ENOTDIR;
            return -1;
        }
        *p = saved;
        if (saved == '\0')
            return 0;
    }
}
