/* xpt_ipc.h: what the two-process (IPC) scenario programs share: opaque handles as hex on a command line, descriptors over a Unix socket. */
#ifndef XPT_IPC_H
#define XPT_IPC_H

#include "xpt_check.h"

#include <sys/socket.h>

/* An opaque handle (IPC, pool export data) as hex, to pass to another
 * process on its command line (out holds 2 * n + 1 bytes), and back. */
static inline void xpt_to_hex(const void *h, size_t n, char *out)
{
    const unsigned char *p = (const unsigned char *)h;
    for (size_t i = 0; i < n; i++)
        sprintf(out + 2 * i, "%02x", p[i]);
}

static inline void xpt_from_hex(const char *s, void *h, size_t n)
{
    unsigned char *p = (unsigned char *)h;
    CHECK(strlen(s) == 2 * n);
    for (size_t i = 0; i < n; i++) {
        unsigned v;
        CHECK(sscanf(s + 2 * i, "%2x", &v) == 1);
        p[i] = (unsigned char)v;
    }
}

/* A descriptor to the process at the other end of sock (SCM_RIGHTS), as
 * NVIDIA's samples hand on a pool's shareable handle. */
static inline void xpt_send_fd(int sock, int fd)
{
    char byte = 'f';
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    CHECK(sendmsg(sock, &m, 0) == 1);
}

static inline int xpt_recv_fd(int sock)
{
    char byte;
    struct iovec iov = {.iov_base = &byte, .iov_len = 1};
    union {
        struct cmsghdr h;
        char buf[CMSG_SPACE(sizeof(int))];
    } u;
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    CHECK(recvmsg(sock, &m, 0) == 1);
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    CHECK(c != NULL && c->cmsg_type == SCM_RIGHTS);
    int fd;
    memcpy(&fd, CMSG_DATA(c), sizeof fd);
    return fd;
}

#endif
