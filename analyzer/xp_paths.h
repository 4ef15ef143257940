/* xp_paths.h: the databases named on a command line, a folder standing for its *.db files. */
#ifndef XP_PATHS_H
#define XP_PATHS_H

#include <stddef.h>

/* A growable list of owned paths. */
struct xp_paths {
    char **v;
    size_t n, cap;
};

/* Appends a copy of s[0..len).  Returns 0, or -1 when out of memory. */
int xp_paths_add(struct xp_paths *p, const char *s, size_t len);
void xp_paths_free(struct xp_paths *p);

/* Appends arg, or when arg is a folder its *.db files (regular files,
 * sorted by name; none is an error).  Returns 0, or -1 with err set. */
int xp_paths_expand(const char *arg, struct xp_paths *out, char *err, size_t errlen);

/* The same for each entry of a comma-separated list (diff's BASE and NEW);
 * an empty result is an error.  Returns 0, or -1 with err set. */
int xp_paths_expand_list(const char *arg, struct xp_paths *out, char *err, size_t errlen);

#endif
