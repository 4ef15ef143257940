/* xp_gzout.c: a stdio stream that writes gzip (zlib's deflate) into another one, for `xferprof export -o NAME.gz`. */
/* fopencookie is a GNU extension: the build defines _GNU_SOURCE. */
#include "xp_gzout.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* The stream's state, owned by the cookie stream (freed when it closes). */
struct xp_gz {
    FILE *under;
    z_stream z;
    unsigned char buf[1 << 16];
};

/* Deflates what z holds as input with flush, writing every output block to
 * the underlying stream.  Returns 0, or -1 with errno set. */
static int xp_gz_pump(struct xp_gz *g, int flush)
{
    int zr;
    do {
        g->z.next_out = g->buf;
        g->z.avail_out = sizeof g->buf;
        zr = deflate(&g->z, flush);
        if (zr == Z_STREAM_ERROR) {
            errno = EIO;
            return -1;
        }
        size_t have = sizeof g->buf - g->z.avail_out;
        errno = 0;
        if (have && fwrite(g->buf, 1, have, g->under) != have) {
            if (!errno)
                errno = EIO;
            return -1;
        }
    } while (g->z.avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
    return 0;
}

static ssize_t xp_gz_write(void *cookie, const char *data, size_t n)
{
    struct xp_gz *g = cookie;
    size_t done = 0;
    /* avail_in is an unsigned int: feed a huge write in pieces. */
    while (done < n) {
        size_t part = n - done < (1u << 30) ? n - done : (1u << 30);
        g->z.next_in = (unsigned char *)(uintptr_t)(data + done);
        g->z.avail_in = (unsigned)part;
        if (xp_gz_pump(g, Z_NO_FLUSH) != 0)
            return -1;
        done += part;
    }
    return (ssize_t)n;
}

/* Ends the gzip member (the trailer's CRC and length); the underlying
 * stream stays open (xp_output closes it). */
static int xp_gz_close(void *cookie)
{
    struct xp_gz *g = cookie;
    g->z.next_in = NULL;
    g->z.avail_in = 0;
    int rc = xp_gz_pump(g, Z_FINISH);
    int e = errno;
    deflateEnd(&g->z);
    free(g);
    errno = e;
    return rc;
}

bool xp_gz_wanted(const char *path)
{
    size_t n = path ? strlen(path) : 0;
    return n > 3 && strcmp(path + n - 3, ".gz") == 0;
}

FILE *xp_gz_open(FILE *under)
{
    struct xp_gz *g = calloc(1, sizeof *g);
    if (!g) {
        errno = ENOMEM;
        return NULL;
    }
    g->under = under;
    /* 15 + 16: a gzip wrapper (not zlib's); level 1: the trace of a long run
     * is hundreds of MB, where the faster level is worth the larger file
     * (docs/performance.md). */
    if (deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
        free(g);
        errno = ENOMEM;
        return NULL;
    }
    FILE *f = fopencookie(g, "w", (cookie_io_functions_t){.write = xp_gz_write,
                                                          .close = xp_gz_close});
    if (!f) {
        deflateEnd(&g->z);
        free(g);
    }
    return f;
}
