/* 3D copies and memsets: cudaMalloc3D's pitched layout, cudaMemcpy3D(Async) between pitched host and device boxes with offsets on every axis moves exactly the box (the bytes around it, padding included, stay as they were), cudaMemset3D, and the documented argument errors. */
#include "xpt_check.h"

#include <stdbool.h>

/* driver_functions.h's make_cuda* are for C++ and nvcc; the same in C. */
static struct cudaExtent make_cudaExtent(size_t w, size_t h, size_t d)
{
    return (struct cudaExtent){.width = w, .height = h, .depth = d};
}

static struct cudaPos make_cudaPos(size_t x, size_t y, size_t z)
{
    return (struct cudaPos){.x = x, .y = y, .z = z};
}

static struct cudaPitchedPtr make_cudaPitchedPtr(void *p, size_t pitch, size_t xsize, size_t ysize)
{
    return (struct cudaPitchedPtr){.ptr = p, .pitch = pitch, .xsize = xsize, .ysize = ysize};
}

/* A pitched box in host memory: the bytes of slice z, row y, column x are at
 * z * pitch * rows + y * pitch + x. */
typedef struct box {
    unsigned char *p;
    size_t pitch, rows, depth;
} box;

static size_t box_bytes(box b)
{
    return b.pitch * b.rows * b.depth;
}

static size_t at(box b, size_t x, size_t y, size_t z)
{
    return (z * b.rows + y) * b.pitch + x;
}

/* dst must hold src's box of extent e moved from spos to dpos, and `fill`
 * everywhere else. */
static void check_moved(box dst, struct cudaPos dpos, box src, struct cudaPos spos,
                        struct cudaExtent e, unsigned char fill, const char *what)
{
    for (size_t z = 0; z < dst.depth; z++)
        for (size_t y = 0; y < dst.rows; y++)
            for (size_t x = 0; x < dst.pitch; x++) {
                bool inside = x >= dpos.x && x < dpos.x + e.width && y >= dpos.y &&
                              y < dpos.y + e.height && z >= dpos.z && z < dpos.z + e.depth;
                unsigned char want =
                    inside ? src.p[at(src, x - dpos.x + spos.x, y - dpos.y + spos.y,
                                      z - dpos.z + spos.z)]
                           : fill;
                unsigned char got = dst.p[at(dst, x, y, z)];
                CHECK_MSG(got == want, "%s: byte (x %zu, y %zu, z %zu) is 0x%02x, expected 0x%02x",
                          what, x, y, z, got, want);
            }
}

static struct cudaMemcpy3DParms parms(struct cudaPitchedPtr s, struct cudaPos sp,
                                      struct cudaPitchedPtr d, struct cudaPos dp,
                                      struct cudaExtent e, enum cudaMemcpyKind kind)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof p);
    p.srcPtr = s;
    p.srcPos = sp;
    p.dstPtr = d;
    p.dstPos = dp;
    p.extent = e;
    p.kind = kind;
    return p;
}

int main(void)
{
    /* cudaMalloc3D: rows on the device's pitch alignment, slices of
     * `height` rows. */
    struct cudaExtent whole = make_cudaExtent(100, 7, 5);
    struct cudaPitchedPtr dev;
    CHECK_OK(cudaMalloc3D(&dev, whole));
    CHECK(dev.ptr != NULL);
    CHECK_EQ(dev.pitch, 512);
    CHECK_EQ(dev.xsize, 100);
    CHECK_EQ(dev.ysize, 7);
    box dbox = {.p = malloc(512 * 7 * 5), .pitch = 512, .rows = 7, .depth = 5};
    CHECK(dbox.p);

    /* cudaMemset3D over the whole allocation, padding included. */
    CHECK_OK(cudaMemset3D(dev, 0xee, make_cudaExtent(dev.pitch, 7, 5)));
    CHECK_OK(cudaMemcpy(dbox.p, dev.ptr, box_bytes(dbox), cudaMemcpyDeviceToHost));
    CHECK_BYTES(dbox.p, box_bytes(dbox), 0xee);

    /* Host to device, offsets on every axis, source slices taller than the
     * copy and rows wider. */
    box hsrc = {.p = malloc(128 * 9 * 6), .pitch = 128, .rows = 9, .depth = 6};
    CHECK(hsrc.p);
    xpt_fill(hsrc.p, box_bytes(hsrc), 3);
    struct cudaPos spos = make_cudaPos(3, 1, 1), dpos = make_cudaPos(10, 2, 1);
    struct cudaExtent e = make_cudaExtent(50, 4, 3);
    struct cudaMemcpy3DParms p =
        parms(make_cudaPitchedPtr(hsrc.p, hsrc.pitch, 120, hsrc.rows), spos, dev, dpos, e,
              cudaMemcpyHostToDevice);
    CHECK_OK(cudaMemcpy3D(&p));
    CHECK_OK(cudaMemcpy(dbox.p, dev.ptr, box_bytes(dbox), cudaMemcpyDeviceToHost));
    check_moved(dbox, dpos, hsrc, spos, e, 0xee, "H2D");

    /* Device to host into yet another layout; the host bytes around the box
     * keep their sentinel. */
    box hdst = {.p = malloc(64 * 6 * 4), .pitch = 64, .rows = 6, .depth = 4};
    CHECK(hdst.p);
    memset(hdst.p, 0x11, box_bytes(hdst));
    struct cudaPos back = make_cudaPos(5, 1, 0);
    p = parms(dev, dpos, make_cudaPitchedPtr(hdst.p, hdst.pitch, 60, hdst.rows), back, e,
              cudaMemcpyDeviceToHost);
    CHECK_OK(cudaMemcpy3D(&p));
    /* hdst now holds what dev held at dpos, which is hsrc's box from spos. */
    check_moved(hdst, back, hsrc, spos, e, 0x11, "D2H");

    /* Device to device on a stream, with cudaMemcpyDefault (unified
     * addressing): the box lands in a second allocation. */
    struct cudaPitchedPtr dev2;
    CHECK_OK(cudaMalloc3D(&dev2, whole));
    CHECK_OK(cudaMemset3D(dev2, 0x22, make_cudaExtent(dev2.pitch, 7, 5)));
    cudaStream_t s;
    CHECK_OK(cudaStreamCreate(&s));
    struct cudaPos d2pos = make_cudaPos(0, 3, 2);
    p = parms(dev, dpos, dev2, d2pos, e, cudaMemcpyDefault);
    CHECK_OK(cudaMemcpy3DAsync(&p, s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaMemcpy(dbox.p, dev2.ptr, box_bytes(dbox), cudaMemcpyDeviceToHost));
    check_moved(dbox, d2pos, hsrc, spos, e, 0x22, "D2D async");

    /* cudaMemset3D of a box smaller than the slices: only the box changes. */
    unsigned char *prev = malloc(box_bytes(dbox));
    CHECK(prev);
    memcpy(prev, dbox.p, box_bytes(dbox));
    struct cudaPitchedPtr inner = dev2;
    inner.ptr = (char *)dev2.ptr + 2;
    CHECK_OK(cudaMemset3DAsync(inner, 0x5a, make_cudaExtent(20, 2, 3), s));
    CHECK_OK(cudaStreamSynchronize(s));
    CHECK_OK(cudaMemcpy(dbox.p, dev2.ptr, box_bytes(dbox), cudaMemcpyDeviceToHost));
    for (size_t z = 0; z < dbox.depth; z++)
        for (size_t y = 0; y < dbox.rows; y++)
            for (size_t x = 0; x < dbox.pitch; x++) {
                size_t i = at(dbox, x, y, z);
                bool inside = x >= 2 && x < 22 && y < 2 && z < 3;
                CHECK_MSG(dbox.p[i] == (inside ? 0x5a : prev[i]),
                          "memset3D: byte (x %zu, y %zu, z %zu) is 0x%02x", x, y, z, dbox.p[i]);
            }
    free(prev);

    /* Errors. */
    /* A row that does not fit its pitch. */
    p = parms(make_cudaPitchedPtr(hsrc.p, hsrc.pitch, 120, hsrc.rows), make_cudaPos(100, 0, 0),
              dev, dpos, e, cudaMemcpyHostToDevice);
    CHECK_CUDA(cudaMemcpy3D(&p), cudaErrorInvalidPitchValue);
    /* Slices shorter than the copy's rows. */
    p = parms(make_cudaPitchedPtr(hsrc.p, hsrc.pitch, 120, 3), spos, dev, dpos, e,
              cudaMemcpyHostToDevice);
    CHECK_CUDA(cudaMemcpy3D(&p), cudaErrorInvalidValue);
    /* A box running past the end of the device allocation. */
    p = parms(make_cudaPitchedPtr(hsrc.p, hsrc.pitch, 120, hsrc.rows), spos, dev,
              make_cudaPos(0, 0, 3), e, cudaMemcpyHostToDevice);
    CHECK_CUDA(cudaMemcpy3D(&p), cudaErrorInvalidValue);
    /* The kind must match the pointers. */
    p = parms(make_cudaPitchedPtr(hsrc.p, hsrc.pitch, 120, hsrc.rows), spos,
              make_cudaPitchedPtr(hdst.p, hdst.pitch, 60, hdst.rows), back, e,
              cudaMemcpyHostToDevice);
    CHECK_CUDA(cudaMemcpy3D(&p), cudaErrorInvalidValue);
    p.kind = (enum cudaMemcpyKind)42;
    CHECK_CUDA(cudaMemcpy3D(&p), cudaErrorInvalidMemcpyDirection);
    /* A handle that names no array (arrays themselves: test_arrays.c). */
    p = parms(dev, dpos, dev2, d2pos, e, cudaMemcpyDeviceToDevice);
    p.srcArray = (cudaArray_t)(uintptr_t)0x1000;
    CHECK_CUDA(cudaMemcpy3D(&p), cudaErrorInvalidResourceHandle);
    CHECK_CUDA(cudaMemcpy3D(NULL), cudaErrorInvalidValue);
    /* An empty extent copies nothing and succeeds. */
    p = parms(dev, dpos, dev2, d2pos, make_cudaExtent(0, 4, 3), cudaMemcpyDeviceToDevice);
    CHECK_OK(cudaMemcpy3D(&p));
    CHECK_CUDA(cudaGetLastError(), cudaErrorInvalidValue);

    CHECK_OK(cudaStreamDestroy(s));
    CHECK_OK(cudaFree(dev.ptr));
    CHECK_OK(cudaFree(dev2.ptr));
    free(dbox.p);
    free(hsrc.p);
    free(hdst.p);
    CHECK_CUDA(cudaGetLastError(), cudaSuccess);
    return 0;
}
