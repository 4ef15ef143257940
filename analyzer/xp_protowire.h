/* xp_protowire.h: protobuf's wire format (varints, tags, length-delimited fields) written into a growable buffer. */
#ifndef XP_PROTOWIRE_H
#define XP_PROTOWIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Wire types (protobuf's encoding reference). */
enum { XP_PW_VARINT = 0, XP_PW_I64 = 1, XP_PW_LEN = 2 };

/* One message being built.  A failed allocation sets oom and makes every
 * later write a no-op, so callers check once, at the end. */
struct xp_pw {
    uint8_t *p;
    size_t len, cap;
    bool oom;
};

void xp_pw_varint(struct xp_pw *w, uint64_t v);
void xp_pw_tag(struct xp_pw *w, uint32_t field, unsigned wire_type);

/* Scalar fields: uint32/uint64/enum/bool (varint), int32/int64 (varint of
 * the two's complement, ten bytes when negative), fixed64. */
void xp_pw_uint(struct xp_pw *w, uint32_t field, uint64_t v);
void xp_pw_int(struct xp_pw *w, uint32_t field, int64_t v);
void xp_pw_fixed64(struct xp_pw *w, uint32_t field, uint64_t v);

/* n bytes as they are (the body of a field whose tag and length the
 * caller wrote). */
void xp_pw_raw(struct xp_pw *w, const void *data, size_t n);

/* A string or bytes field. */
void xp_pw_bytes(struct xp_pw *w, uint32_t field, const void *data, size_t n);

/* A nested message: xp_pw_open writes its tag and returns a mark; the
 * message's fields follow; xp_pw_close(mark) puts its length (the shortest
 * varint) in front of them.  Nest as deep as needed, closing inner first. */
size_t xp_pw_open(struct xp_pw *w, uint32_t field);
void xp_pw_close(struct xp_pw *w, size_t mark);

/* Empties w for the next message, keeping its memory. */
void xp_pw_reset(struct xp_pw *w);
void xp_pw_free(struct xp_pw *w);

#endif
