/* xp_gzout.h: writing gzip through a stdio stream (xp_gzout.c). */
#ifndef XP_GZOUT_H
#define XP_GZOUT_H

#include <stdbool.h>
#include <stdio.h>

/* Whether an output named path is to be gzip-compressed: it ends in ".gz". */
bool xp_gz_wanted(const char *path);

/* A stream whose bytes reach under gzip-compressed (one gzip member).
 * fclose on it ends the member and fails (EOF, errno set) when writing to
 * under did; under stays open.  NULL with errno set when out of memory. */
FILE *xp_gz_open(FILE *under);

#endif
