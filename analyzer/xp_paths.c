/* xp_paths.c: the databases named on a command line, a folder standing for
 * its *.db files (the processes of one job), for report and diff. */
#include "xp_paths.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xp_report.h"

int xp_paths_add(struct xp_paths *p, const char *s, size_t len)
{
    if (xp_grow(&p->v, &p->cap, p->n + 1, sizeof *p->v) != 0)
        return -1;
    char *c = strndup(s, len);
    if (!c)
        return -1;
    p->v[p->n++] = c;
    return 0;
}

void xp_paths_free(struct xp_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    *p = (struct xp_paths){0};
}

static int xp_strptr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool xp_is_db_name(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".db") == 0;
}

/* A directory's *.db files, sorted (so that "by order" pairing is stable). */
static int xp_expand_dir(const char *dir, struct xp_paths *out, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t first = out->n;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!xp_is_db_name(e->d_name))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (!path) {
            rc = -1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            rc = xp_paths_add(out, path, strlen(path));
        free(path);
    }
    closedir(d);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (out->n == first) {
        snprintf(err, errlen, "%s: no databases (*.db) in this directory", dir);
        return -1;
    }
    xp_sort(out->v + first, out->n - first, sizeof *out->v, xp_strptr_cmp);
    return 0;
}

int xp_paths_expand(const char *arg, struct xp_paths *out, char *err, size_t errlen)
{
    struct stat sb;
    int rc = stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode) ? xp_expand_dir(arg, out, err, errlen)
                                                          : xp_paths_add(out, arg, strlen(arg));
    if (rc != 0 && !err[0])
        snprintf(err, errlen, "out of memory");
    return rc;
}

int xp_paths_expand_list(const char *arg, struct xp_paths *out, char *err, size_t errlen)
{
    const char *p = arg;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len > 0) {
            char *one = strndup(p, len);
            if (!one) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            int rc = xp_paths_expand(one, out, err, errlen);
            free(one);
            if (rc != 0)
                return -1;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    if (out->n == 0) {
        snprintf(err, errlen, "'%s': no database given", arg);
        return -1;
    }
    return 0;
}

