/* xp_protowire.c: protobuf's wire format written by hand (xp_protowire.h): the few encodings the Perfetto trace needs, without a code generator or runtime. */
#include "xp_protowire.h"

#include <stdlib.h>
#include <string.h>

/* Room for n more bytes; false (and oom set) when there is none. */
static bool xp_pw_room(struct xp_pw *w, size_t n)
{
    if (w->oom)
        return false;
    if (w->len + n <= w->cap)
        return true;
    size_t ncap = w->cap ? w->cap : 256;
    while (ncap < w->len + n)
        ncap *= 2;
    uint8_t *np = realloc(w->p, ncap);
    if (np == NULL) {
        w->oom = true;
        return false;
    }
    w->p = np;
    w->cap = ncap;
    return true;
}

/* Encodes v at out (10 bytes of room); returns the bytes used. */
static size_t xp_pw_put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

void xp_pw_varint(struct xp_pw *w, uint64_t v)
{
    if (xp_pw_room(w, 10))
        w->len += xp_pw_put_varint(w->p + w->len, v);
}

void xp_pw_tag(struct xp_pw *w, uint32_t field, unsigned wire_type)
{
    xp_pw_varint(w, (uint64_t)field << 3 | wire_type);
}

void xp_pw_uint(struct xp_pw *w, uint32_t field, uint64_t v)
{
    xp_pw_tag(w, field, XP_PW_VARINT);
    xp_pw_varint(w, v);
}

void xp_pw_int(struct xp_pw *w, uint32_t field, int64_t v)
{
    xp_pw_uint(w, field, (uint64_t)v);
}

void xp_pw_fixed64(struct xp_pw *w, uint32_t field, uint64_t v)
{
    xp_pw_tag(w, field, XP_PW_I64);
    if (!xp_pw_room(w, 8))
        return;
    for (int i = 0; i < 8; i++) /* little-endian whatever the host */
        w->p[w->len++] = (uint8_t)(v >> (8 * i));
}

void xp_pw_raw(struct xp_pw *w, const void *data, size_t n)
{
    if (n && xp_pw_room(w, n)) {
        memcpy(w->p + w->len, data, n);
        w->len += n;
    }
}

void xp_pw_bytes(struct xp_pw *w, uint32_t field, const void *data, size_t n)
{
    xp_pw_tag(w, field, XP_PW_LEN);
    xp_pw_varint(w, n);
    xp_pw_raw(w, data, n);
}

size_t xp_pw_open(struct xp_pw *w, uint32_t field)
{
    xp_pw_tag(w, field, XP_PW_LEN);
    return w->len;
}

/* The length goes in front of the fields once known: they move up by the
 * varint's size (a packet is a few hundred bytes, so the move is cheap, and
 * the file has no padded lengths). */
void xp_pw_close(struct xp_pw *w, size_t mark)
{
    if (w->oom || mark > w->len)
        return;
    uint8_t v[10];
    size_t body = w->len - mark, n = xp_pw_put_varint(v, body);
    if (!xp_pw_room(w, n))
        return;
    memmove(w->p + mark + n, w->p + mark, body);
    memcpy(w->p + mark, v, n);
    w->len += n;
}

void xp_pw_reset(struct xp_pw *w)
{
    w->len = 0;
}

void xp_pw_free(struct xp_pw *w)
{
    free(w->p);
    *w = (struct xp_pw){0};
}
