/* drv_copy.c: cuMemcpy* (1D, 2D, 3D, peer, batches) and cuMemset*:
 * validation, the time model, and NVIDIA's documented host synchronization
 * behaviour for each case. */
#include "xpsim_driver.h"
#include "xpsim_graph.h"
#include "xpsim_stream.h"
#include "xpsim_time.h"

#include <stdlib.h>
#include <string.h>

/* What a copy expects of each pointer: the typed APIs (HtoD, DtoH, ...) and
 * CU_MEMORYTYPE_HOST/DEVICE in 2D copies insist, unified ones classify. */
typedef enum side_expect { EXPECT_ANY, EXPECT_HOST, EXPECT_DEVICE } side_expect;

typedef enum copy_dir { DIR_H2D, DIR_D2H, DIR_D2D, DIR_H2H } copy_dir;

static const char *const dir_names[] = {"HtoD", "DtoH", "DtoD", "HtoH"};

/* The size of a copy: depth slices of height rows of width bytes (1D: one
 * row of one slice; 2D: one slice). */
typedef struct extent3 {
    size_t width, height, depth;
} extent3;

/* Where one side's bytes start, and how far apart its rows and its slices
 * are (unused where the copy has only one). */
typedef struct rect {
    uint64_t addr;
    size_t pitch;
    size_t slice;
} rect;

typedef struct copy_job {
    void *dst;
    const void *src;
    extent3 e;
    size_t dpitch, dslice, spitch, sslice;
    void *staging;            /* owned: pageable bytes captured at call time */
} copy_job;

static void copy_box(void *dst, size_t dpitch, size_t dslice, const void *src, size_t spitch,
                     size_t sslice, extent3 e)
{
    for (size_t z = 0; z < e.depth; z++)
        for (size_t y = 0; y < e.height; y++)
            memcpy((char *)dst + z * dslice + y * dpitch,
                   (const char *)src + z * sslice + y * spitch, e.width);
}

static void run_copy(void *arg)
{
    copy_job *j = arg;
    copy_box(j->dst, j->dpitch, j->dslice, j->src, j->spitch, j->sslice, j->e);
}

static void release_copy(void *arg)
{
    copy_job *j = arg;
    free(j->staging);
    free(j);
}

static bool is_device_side(const xpdrv_ptr *p)
{
    return p->kind == XPDRV_MEM_DEVICE || p->kind == XPDRV_MEM_MANAGED;
}

/* Checks one side of a copy of `extent` bytes starting at addr, which the
 * copy writes (write) or reads. */
static CUresult check_side(uint64_t addr, size_t extent, side_expect expect, bool write,
                           xpdrv_ptr *info)
{
    if (addr == 0)
        return CUDA_ERROR_INVALID_VALUE;
    xpdrv_classify(addr, info);
    switch (info->kind) {
    case XPDRV_MEM_DEVICE_HOLE:
        /* Also reserved VMM addresses with nothing mapped there. */
        return CUDA_ERROR_INVALID_VALUE;
    case XPDRV_MEM_DEVICE:
    case XPDRV_MEM_MANAGED:
        if (expect == EXPECT_HOST && info->kind == XPDRV_MEM_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        /* A VMM mapping its device was given no access to (cuMemSetAccess),
         * or only read access to, is not there for the copy engine either. */
        if (info->kind == XPDRV_MEM_DEVICE &&
            (write ? info->access != CU_MEM_ACCESS_FLAGS_PROT_READWRITE
                   : info->access == CU_MEM_ACCESS_FLAGS_PROT_NONE))
            return CUDA_ERROR_INVALID_VALUE;
        /* The whole extent must lie inside the one allocation (or run of
         * adjacent mappings). */
        if (extent > info->limit - addr)
            return CUDA_ERROR_INVALID_VALUE;
        return CUDA_SUCCESS;
    case XPDRV_MEM_PINNED:
        if (expect == EXPECT_DEVICE)
            return CUDA_ERROR_INVALID_VALUE;
        /* A copy that runs off the end of a pinned range is staged. */
        if (extent > info->limit - addr)
            info->kind = XPDRV_MEM_PAGEABLE;
        return CUDA_SUCCESS;
    case XPDRV_MEM_PAGEABLE:
        return expect == EXPECT_DEVICE ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    }
    return CUDA_ERROR_INVALID_VALUE;
}

static double rate_for(copy_dir dir, const xpdrv_ptr *s, const xpdrv_ptr *d, bool pageable)
{
    const xpsim_config *cfg = xpsim_config_get();
    switch (dir) {
    case DIR_H2D:
    case DIR_D2H:
        return pageable ? cfg->pageable_bps : cfg->pinned_bps;
    case DIR_D2D:
        return s->device == d->device ? cfg->device_bps : cfg->peer_bps;
    case DIR_H2H:
        return cfg->host_bps;
    }
    return cfg->pinned_bps;
}

static uint64_t transfer_ns(uint64_t bytes, double bps)
{
    return (uint64_t)((double)bytes * 1e9 / bps);
}

/* Bytes from the first to one past the last a box touches; SIZE_MAX when
 * that does not even fit in the address space. */
static size_t extent_of(extent3 e, size_t pitch, size_t slice)
{
    if (e.width == 0 || e.height == 0 || e.depth == 0)
        return 0;
    size_t rows, slices, total;
    if (__builtin_mul_overflow(e.height - 1, pitch, &rows) ||
        __builtin_mul_overflow(e.depth - 1, slice, &slices) ||
        __builtin_add_overflow(rows, slices, &total) ||
        __builtin_add_overflow(total, e.width, &total))
        return SIZE_MAX;
    return total;
}

static extent3 line(size_t n)
{
    return (extent3){.width = n, .height = 1, .depth = 1};
}

/* The common path of every copy.  `async` is the API's nature (an *Async
 * entry point); the function decides from the pointers how long the caller
 * is held, following "API synchronization behavior" in the CUDA docs.
 * `in_batch`: an entry of cuMemcpyBatchAsync, whose batch "as a whole
 * executes in stream order", host-to-host entries included. */
/* Both sides of a copy of a non-empty box, checked against the driver's
 * tables. */
static CUresult check_copy(rect dst, side_expect dexp, rect src, side_expect sexp, extent3 e,
                           xpdrv_ptr *s, xpdrv_ptr *d, const char *api)
{
    CUresult rc;
    if ((e.height > 1 || e.depth > 1) && (dst.pitch < e.width || src.pitch < e.width))
        return CUDA_ERROR_INVALID_VALUE;
    if ((rc = check_side(src.addr, extent_of(e, src.pitch, src.slice), sexp, false, s)) !=
            CUDA_SUCCESS ||
        (rc = check_side(dst.addr, extent_of(e, dst.pitch, dst.slice), dexp, true, d)) !=
            CUDA_SUCCESS)
        xpsim_debug("%s: invalid pointers (src %#llx, dst %#llx)", api,
                    (unsigned long long)src.addr, (unsigned long long)dst.addr);
    return rc;
}

/* One side of a memcpy node as the copy named it. */
#define NODE_SIDE(c, side, r, exp, rows)                                       \
    do {                                                                       \
        (c).side##MemoryType = (exp) == EXPECT_HOST     ? CU_MEMORYTYPE_HOST   \
                               : (exp) == EXPECT_DEVICE ? CU_MEMORYTYPE_DEVICE \
                                                        : CU_MEMORYTYPE_UNIFIED; \
        if ((exp) == EXPECT_HOST)                                              \
            (c).side##Host = (void *)(uintptr_t)(r).addr;                      \
        else                                                                   \
            (c).side##Device = (r).addr;                                       \
        (c).side##Pitch = (r).pitch;                                           \
        (c).side##Height = (r).pitch ? (r).slice / (r).pitch : (rows);         \
    } while (0)

/* What a capture makes of a copy: a memcpy node with these parameters. */
static CUDA_MEMCPY3D node_params_of(rect dst, side_expect dexp, rect src, side_expect sexp,
                                    extent3 e)
{
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    NODE_SIDE(c, src, src, sexp, e.height);
    NODE_SIDE(c, dst, dst, dexp, e.height);
    c.WidthInBytes = e.width;
    c.Height = e.height;
    c.Depth = e.depth;
    return c;
}

static CUresult do_copy_entry(rect dst, side_expect dexp, rect src, side_expect sexp, extent3 e,
                              bool async, bool in_batch, CUstream hstream, bool ptds,
                              const char *api)
{
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (e.width == 0 || e.height == 0 || e.depth == 0)
        return CUDA_SUCCESS;
    xpdrv_ptr s, d;
    if ((rc = check_copy(dst, dexp, src, sexp, e, &s, &d, api)) != CUDA_SUCCESS)
        return rc;
    CUstream stream;
    if ((rc = xpsim_stream_resolve(hstream, ptds, cur, &stream)) != CUDA_SUCCESS)
        return rc;
    /* Stream capture: an asynchronous copy becomes a memcpy node; a
     * synchronous one may not run on a capturing stream. */
    if (!async) {
        if ((rc = xpsim_capture_sync(stream)) != CUDA_SUCCESS)
            return rc;
    } else {
        xpsim_node_params np = {.type = CU_GRAPH_NODE_TYPE_MEMCPY,
                                .u.copy = node_params_of(dst, dexp, src, sexp, e)};
        bool captured;
        rc = xpsim_capture_work(stream, &np, &captured);
        if (captured)
            return rc;
    }

    copy_dir dir = is_device_side(&s) ? (is_device_side(&d) ? DIR_D2D : DIR_D2H)
                                      : (is_device_side(&d) ? DIR_H2D : DIR_H2H);
    bool pageable = (dir != DIR_D2D) && (s.kind == XPDRV_MEM_PAGEABLE || d.kind == XPDRV_MEM_PAGEABLE);
    uint64_t bytes = (uint64_t)e.width * e.height * e.depth;
    const xpsim_config *cfg = xpsim_config_get();
    uint64_t move_ns = transfer_ns(bytes, rate_for(dir, &s, &d, pageable));

    copy_job *job = calloc(1, sizeof *job);
    if (job == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *job = (copy_job){.dst = xpdrv_view(&d, dst.addr), .src = xpdrv_view(&s, src.addr), .e = e,
                      .dpitch = dst.pitch, .dslice = dst.slice, .spitch = src.pitch,
                      .sslice = src.slice};
    xpsim_work w = {.run = run_copy, .release = release_copy, .ctx = job,
                    .duration_ns = cfg->latency_ns + move_ns, .fault = CUDA_SUCCESS,
                    .lane = dir == DIR_H2D ? XPSIM_LANE_H2D
                          : dir == DIR_D2H ? XPSIM_LANE_D2H : XPSIM_LANE_NONE,
                    .what = api};

    bool wait;
    if (dir == DIR_H2D && pageable) {
        /* Pageable to device: the driver copies the bytes into a pinned
         * staging buffer before returning (cudaMemcpy first synchronizes the
         * stream; the Async form does not), and the caller is held while it
         * does; only the final DMA from the staging buffer is left queued
         * (its device time is the latency). */
        if (!async) {
            /* The synchronize comes first; the legacy stream's ordering
             * reaches every blocking stream, so wait for the whole device.
             * The bytes still go through staging and the stream: another
             * thread may queue work on the stream once this returns, and
             * only the stream orders it after this copy (writing the
             * destination from here would race with it). */
            if (xpsim_stream_is_default(stream))
                xpsim_device_synchronize(xpsim_stream_device(stream));
            else
                xpsim_stream_synchronize(stream);
        }
        job->staging = malloc(bytes);
        if (job->staging == NULL) {
            free(job);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        uint64_t t0 = xpsim_now_ns();
        copy_box(job->staging, e.width, e.width * e.height, job->src, src.pitch, src.slice, e);
        job->src = job->staging;
        job->spitch = e.width;
        job->sslice = e.width * e.height;
        xpsim_sleep_until(t0 + move_ns);
        w.duration_ns = cfg->latency_ns;
        wait = false;
    } else if (dir == DIR_D2D) {
        /* Device to device never holds the host, even through cuMemcpy. */
        wait = false;
    } else if (!async) {
        wait = true;
    } else {
        /* Async to pageable memory (DtoH) returns only once the copy is
         * complete; host to host is fully synchronous whatever the memory
         * (NVIDIA's "API synchronization behavior"), except in a batch. */
        wait = pageable || (dir == DIR_H2H && !in_batch);
    }
    uint64_t ticket = xpsim_stream_enqueue(stream, &w);
    xpsim_debug("%s %s %llu bytes %s stream %p%s", api, dir_names[dir], (unsigned long long)bytes,
                pageable ? "pageable" : "pinned", (void *)stream, wait ? " (waiting)" : "");
    if (wait) {
        xpsim_stream_wait_ticket(stream, ticket);
        return xpsim_device_sticky_error(xpsim_stream_device(stream));
    }
    return CUDA_SUCCESS;
}

static CUresult do_copy(rect dst, side_expect dexp, rect src, side_expect sexp, extent3 e,
                        bool async, CUstream hstream, bool ptds, const char *api)
{
    return do_copy_entry(dst, dexp, src, sexp, e, async, false, hstream, ptds, api);
}

static rect r1(uint64_t addr)
{
    return (rect){.addr = addr, .pitch = 0, .slice = 0};
}

static rect rh(const void *p)
{
    return r1((uint64_t)(uintptr_t)p);
}

XPDRV_TWINS(cuMemcpy, cuMemcpy_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n),
            do_copy(r1(dst), EXPECT_ANY, r1(src), EXPECT_ANY, line(n), false, NULL, ptds, "cuMemcpy"))
XPDRV_TWINS(cuMemcpyAsync, cuMemcpyAsync_ptsz,
            (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h),
            do_copy(r1(dst), EXPECT_ANY, r1(src), EXPECT_ANY, line(n), true, h, ptds, "cuMemcpyAsync"))
XPDRV_TWINS(cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds, (CUdeviceptr dst, const void *src, size_t n),
            do_copy(r1(dst), EXPECT_DEVICE, rh(src), EXPECT_HOST, line(n), false, NULL, ptds,
                    "cuMemcpyHtoD_v2"))
XPDRV_TWINS(cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds, (void *dst, CUdeviceptr src, size_t n),
            do_copy(rh(dst), EXPECT_HOST, r1(src), EXPECT_DEVICE, line(n), false, NULL, ptds,
                    "cuMemcpyDtoH_v2"))
XPDRV_TWINS(cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds, (CUdeviceptr dst, CUdeviceptr src, size_t n),
            do_copy(r1(dst), EXPECT_DEVICE, r1(src), EXPECT_DEVICE, line(n), false, NULL, ptds,
                    "cuMemcpyDtoD_v2"))
XPDRV_TWINS(cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz,
            (CUdeviceptr dst, const void *src, size_t n, CUstream h),
            do_copy(r1(dst), EXPECT_DEVICE, rh(src), EXPECT_HOST, line(n), true, h, ptds,
                    "cuMemcpyHtoDAsync_v2"))
XPDRV_TWINS(cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz,
            (void *dst, CUdeviceptr src, size_t n, CUstream h),
            do_copy(rh(dst), EXPECT_HOST, r1(src), EXPECT_DEVICE, line(n), true, h, ptds,
                    "cuMemcpyDtoHAsync_v2"))
XPDRV_TWINS(cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz,
            (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream h),
            do_copy(r1(dst), EXPECT_DEVICE, r1(src), EXPECT_DEVICE, line(n), true, h, ptds,
                    "cuMemcpyDtoDAsync_v2"))

/* Makes `waiter` wait for all work enqueued so far on `target`. */
static void stream_waits_for(CUstream waiter, CUstream target)
{
    CUevent e = xpsim_event_create(CU_EVENT_DISABLE_TIMING);
    if (e == NULL)
        return;
    if (xpsim_event_record(e, target) == CUDA_SUCCESS)
        xpsim_stream_wait_event(waiter, e);
    xpsim_event_destroy(e);
}

/* Peer copies name the contexts; with unified addressing the pointers alone
 * identify the devices, so the contexts are only validated.  The synchronous
 * form is "serialized with respect to all pending and future asynchronous
 * work in the current device, srcDevice, and dstDevice": the copy waits for
 * the other devices' legacy streams, and they wait for the copy. */
static CUresult peer_copy(rect dst, side_expect dexp, CUcontext dctx, rect src, side_expect sexp,
                          CUcontext sctx, extent3 e, bool async, CUstream h, bool ptds,
                          const char *api)
{
    if (dctx == NULL || sctx == NULL)
        return CUDA_ERROR_INVALID_CONTEXT;
    xpdrv_ptr d, s;
    xpdrv_classify(dst.addr, &d);
    xpdrv_classify(src.addr, &s);
    if ((d.kind == XPDRV_MEM_DEVICE && d.device != dctx->device) ||
        (s.kind == XPDRV_MEM_DEVICE && s.device != sctx->device))
        return CUDA_ERROR_INVALID_VALUE;
    int cur;
    CUstream here;
    if (async || xpdrv_enter(&cur) != CUDA_SUCCESS ||
        xpsim_stream_resolve(NULL, ptds, cur, &here) != CUDA_SUCCESS)
        return do_copy(dst, dexp, src, sexp, e, async, h, ptds, api);
    CUstream others[2] = {NULL, NULL};
    int devs[2] = {sctx->device, dctx->device};
    for (int i = 0; i < 2; i++)
        if (devs[i] != cur && (i == 0 || devs[1] != devs[0]))
            xpsim_stream_resolve(NULL, false, devs[i], &others[i]);
    for (int i = 0; i < 2; i++)
        if (others[i])
            stream_waits_for(here, others[i]);
    CUresult rc = do_copy(dst, dexp, src, sexp, e, false, NULL, ptds, api);
    for (int i = 0; i < 2; i++)
        if (others[i])
            stream_waits_for(others[i], here);
    return rc;
}

XPDRV_TWINS(cuMemcpyPeer, cuMemcpyPeer_ptds,
            (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n),
            peer_copy(r1(dst), EXPECT_DEVICE, dctx, r1(src), EXPECT_DEVICE, sctx, line(n), false,
                      NULL, ptds, "cuMemcpyPeer"))
XPDRV_TWINS(cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz,
            (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream h),
            peer_copy(r1(dst), EXPECT_DEVICE, dctx, r1(src), EXPECT_DEVICE, sctx, line(n), true, h,
                      ptds, "cuMemcpyPeerAsync"))

/* One side of a 2D or 3D copy, as CUDA_MEMCPY2D and CUDA_MEMCPY3D(_PEER)
 * describe it. */
typedef struct side_spec {
    CUmemorytype type;
    const void *host;
    CUdeviceptr dev;
    CUarray array;
    size_t x, y, z;           /* x in bytes */
    size_t pitch;             /* bytes per row */
    size_t height;            /* rows per slice (3D) */
} side_spec;

/* Where the box of an array side is: x (bytes) a whole number of elements,
 * the box inside the array's rows and slices ("an array's" width, height and
 * depth), rows and slices as tight as the array lays them out. */
static CUresult array_side(const side_spec *sp, extent3 e, rect *out)
{
    xpdrv_array_geom g;
    if (!xpdrv_array_get(sp->array, &g))
        return CUDA_ERROR_INVALID_VALUE;
    if (sp->x % g.elem != 0 || e.width % g.elem != 0 || sp->x > g.row ||
        e.width > g.row - sp->x || sp->y > g.rows || e.height > g.rows - sp->y ||
        sp->z > g.slices || e.depth > g.slices - sp->z)
        return CUDA_ERROR_INVALID_VALUE;
    *out = (rect){.addr = g.mem + sp->z * g.slice + sp->y * g.row + sp->x, .pitch = g.row,
                  .slice = g.slice};
    return CUDA_SUCCESS;
}

/* Where a side's bytes are.  Its memory type says which field holds the
 * address and how strictly to check it; the documented limits apply where
 * the copy has more than one row ("srcPitch must be greater than or equal to
 * WidthInBytes + srcXInBytes") or more than one slice ("srcHeight must be
 * greater than or equal to Height + srcY"). */
static CUresult side_at(const side_spec *sp, extent3 e, rect *out, side_expect *expect)
{
    uint64_t base;
    switch (sp->type) {
    case CU_MEMORYTYPE_HOST: base = (uint64_t)(uintptr_t)sp->host; *expect = EXPECT_HOST; break;
    case CU_MEMORYTYPE_DEVICE: base = sp->dev; *expect = EXPECT_DEVICE; break;
    case CU_MEMORYTYPE_UNIFIED: base = sp->dev; *expect = EXPECT_ANY; break;
    case CU_MEMORYTYPE_ARRAY: *expect = EXPECT_DEVICE; return array_side(sp, e, out);
    default: return CUDA_ERROR_INVALID_VALUE;
    }
    if (base == 0)
        return CUDA_ERROR_INVALID_VALUE;
    bool rows = e.height > 1 || e.depth > 1;
    if (rows && (sp->pitch < sp->x || sp->pitch - sp->x < e.width))
        return CUDA_ERROR_INVALID_VALUE;
    if (e.depth > 1 && (sp->height < sp->y || sp->height - sp->y < e.height))
        return CUDA_ERROR_INVALID_VALUE;
    /* Start = base + (z * height + y) * pitch + x, as the header spells it. */
    size_t row, off;
    if (__builtin_mul_overflow(sp->z, sp->height, &row) ||
        __builtin_add_overflow(row, sp->y, &row) ||
        __builtin_mul_overflow(row, sp->pitch, &off) ||
        __builtin_add_overflow(off, sp->x, &off) || off > UINT64_MAX - base)
        return CUDA_ERROR_INVALID_VALUE;
    /* A single row needs no pitch, a single slice no height. */
    size_t pitch = rows || sp->pitch != 0 ? sp->pitch : e.width;
    size_t slice = 0;
    if (e.depth > 1 && __builtin_mul_overflow(pitch, sp->height, &slice))
        return CUDA_ERROR_INVALID_VALUE;
    *out = (rect){.addr = base + off, .pitch = pitch, .slice = slice};
    return CUDA_SUCCESS;
}

/* Resolves both sides of a 2D/3D copy; peer copies also pass the contexts. */
static CUresult copy_sides(const side_spec *src, CUcontext sctx, const side_spec *dst,
                           CUcontext dctx, extent3 e, bool peer, bool async, CUstream h, bool ptds,
                           const char *api)
{
    rect s, d;
    side_expect se, de;
    CUresult rc;
    if ((rc = side_at(src, e, &s, &se)) != CUDA_SUCCESS ||
        (rc = side_at(dst, e, &d, &de)) != CUDA_SUCCESS)
        return rc;
    if (peer)
        return peer_copy(d, de, dctx, s, se, sctx, e, async, h, ptds, api);
    return do_copy(d, de, s, se, e, async, h, ptds, api);
}

static CUresult copy_2d(const CUDA_MEMCPY2D *p, bool async, CUstream h, bool ptds, const char *api)
{
    if (p == NULL)
        return CUDA_ERROR_INVALID_VALUE;
    side_spec s = {.type = p->srcMemoryType, .host = p->srcHost, .dev = p->srcDevice,
                   .array = p->srcArray, .x = p->srcXInBytes, .y = p->srcY,
                   .pitch = p->srcPitch};
    side_spec d = {.type = p->dstMemoryType, .host = p->dstHost, .dev = p->dstDevice,
                   .array = p->dstArray, .x = p->dstXInBytes, .y = p->dstY,
                   .pitch = p->dstPitch};
    extent3 e = {.width = p->WidthInBytes, .height = p->Height, .depth = 1};
    return copy_sides(&s, NULL, &d, NULL, e, false, async, h, ptds, api);
}

XPDRV_TWINS(cuMemcpy2D_v2, cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *p),
            copy_2d(p, false, NULL, ptds, "cuMemcpy2D_v2"))
XPDRV_TWINS(cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *p),
            copy_2d(p, false, NULL, ptds, "cuMemcpy2DUnaligned_v2"))
XPDRV_TWINS(cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *p, CUstream h),
            copy_2d(p, true, h, ptds, "cuMemcpy2DAsync_v2"))

/* CUDA_MEMCPY3D and CUDA_MEMCPY3D_PEER share these fields' names; LODs are
 * for arrays and must be 0. */
#define SIDE_3D(p, side)                                                       \
    ((side_spec){.type = (p)->side##MemoryType, .host = (p)->side##Host,       \
                 .dev = (p)->side##Device, .array = (p)->side##Array,          \
                 .x = (p)->side##XInBytes,                                     \
                 .y = (p)->side##Y, .z = (p)->side##Z, .pitch = (p)->side##Pitch, \
                 .height = (p)->side##Height})
#define EXTENT_3D(p)                                                           \
    ((extent3){.width = (p)->WidthInBytes, .height = (p)->Height, .depth = (p)->Depth})

static CUresult copy_3d(const CUDA_MEMCPY3D *p, bool async, CUstream h, bool ptds, const char *api)
{
    if (p == NULL || p->srcLOD != 0 || p->dstLOD != 0 || p->reserved0 != NULL ||
        p->reserved1 != NULL)
        return CUDA_ERROR_INVALID_VALUE;
    side_spec s = SIDE_3D(p, src), d = SIDE_3D(p, dst);
    return copy_sides(&s, NULL, &d, NULL, EXTENT_3D(p), false, async, h, ptds, api);
}

static CUresult copy_3d_peer(const CUDA_MEMCPY3D_PEER *p, bool async, CUstream h, bool ptds,
                             const char *api)
{
    if (p == NULL || p->srcLOD != 0 || p->dstLOD != 0)
        return CUDA_ERROR_INVALID_VALUE;
    side_spec s = SIDE_3D(p, src), d = SIDE_3D(p, dst);
    return copy_sides(&s, p->srcContext, &d, p->dstContext, EXTENT_3D(p), true, async, h, ptds,
                      api);
}

/* Memcpy nodes of graphs (drv_graph.c): checked when added or set, run as
 * cuMemcpy3DAsync at each launch. */
CUresult xpdrv_copy3d_check(const CUDA_MEMCPY3D *p)
{
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (p->srcLOD != 0 || p->dstLOD != 0 || p->reserved0 != NULL || p->reserved1 != NULL)
        return CUDA_ERROR_INVALID_VALUE;
    side_spec ss = SIDE_3D(p, src), ds = SIDE_3D(p, dst);
    extent3 e = EXTENT_3D(p);
    rect s, d;
    side_expect se, de;
    if ((rc = side_at(&ss, e, &s, &se)) != CUDA_SUCCESS ||
        (rc = side_at(&ds, e, &d, &de)) != CUDA_SUCCESS)
        return rc;
    if (e.width == 0 || e.height == 0 || e.depth == 0)
        return CUDA_SUCCESS;
    xpdrv_ptr sp, dp;
    return check_copy(d, de, s, se, e, &sp, &dp, "memcpy node");
}

CUresult xpdrv_copy3d_enqueue(const CUDA_MEMCPY3D *p, CUstream h, bool ptds)
{
    return copy_3d(p, true, h, ptds, "graph memcpy node");
}

XPDRV_TWINS(cuMemcpy3D_v2, cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *p),
            copy_3d(p, false, NULL, ptds, "cuMemcpy3D_v2"))
XPDRV_TWINS(cuMemcpy3DAsync_v2, cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *p, CUstream h),
            copy_3d(p, true, h, ptds, "cuMemcpy3DAsync_v2"))
XPDRV_TWINS(cuMemcpy3DPeer, cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER *p),
            copy_3d_peer(p, false, NULL, ptds, "cuMemcpy3DPeer"))
XPDRV_TWINS(cuMemcpy3DPeerAsync, cuMemcpy3DPeerAsync_ptsz,
            (const CUDA_MEMCPY3D_PEER *p, CUstream h),
            copy_3d_peer(p, true, h, ptds, "cuMemcpy3DPeerAsync"))

/* The linear array copies (cuMemcpyHtoA, ...) name a byte offset into the
 * array's tight layout: the range may run across rows, not past the end. */
static CUresult array_line(CUarray h, size_t offset, size_t n, rect *out)
{
    xpdrv_array_geom g;
    if (!xpdrv_array_get(h, &g))
        return CUDA_ERROR_INVALID_VALUE;
    if (offset > g.bytes || n > g.bytes - offset)
        return CUDA_ERROR_INVALID_VALUE;
    *out = r1(g.mem + offset);
    return CUDA_SUCCESS;
}

/* dst and src: an array with an offset (a != NULL) or an address. */
static CUresult copy_line(CUarray da, size_t doff, uint64_t dst, side_expect dexp, CUarray sa,
                          size_t soff, uint64_t src, side_expect sexp, size_t n, bool async,
                          CUstream h, bool ptds, const char *api)
{
    rect d = r1(dst), s = r1(src);
    CUresult rc;
    if ((da != NULL && (rc = array_line(da, doff, n, &d)) != CUDA_SUCCESS) ||
        (sa != NULL && (rc = array_line(sa, soff, n, &s)) != CUDA_SUCCESS))
        return rc;
    return do_copy(d, dexp, s, sexp, line(n), async, h, ptds, api);
}

#define HOST(p) ((uint64_t)(uintptr_t)(p))
XPDRV_TWINS(cuMemcpyHtoA_v2, cuMemcpyHtoA_v2_ptds,
            (CUarray dst, size_t off, const void *src, size_t n),
            copy_line(dst, off, 0, EXPECT_DEVICE, NULL, 0, HOST(src), EXPECT_HOST, n, false, NULL,
                      ptds, "cuMemcpyHtoA_v2"))
XPDRV_TWINS(cuMemcpyAtoH_v2, cuMemcpyAtoH_v2_ptds,
            (void *dst, CUarray src, size_t off, size_t n),
            copy_line(NULL, 0, HOST(dst), EXPECT_HOST, src, off, 0, EXPECT_DEVICE, n, false, NULL,
                      ptds, "cuMemcpyAtoH_v2"))
XPDRV_TWINS(cuMemcpyHtoAAsync_v2, cuMemcpyHtoAAsync_v2_ptsz,
            (CUarray dst, size_t off, const void *src, size_t n, CUstream h),
            copy_line(dst, off, 0, EXPECT_DEVICE, NULL, 0, HOST(src), EXPECT_HOST, n, true, h,
                      ptds, "cuMemcpyHtoAAsync_v2"))
XPDRV_TWINS(cuMemcpyAtoHAsync_v2, cuMemcpyAtoHAsync_v2_ptsz,
            (void *dst, CUarray src, size_t off, size_t n, CUstream h),
            copy_line(NULL, 0, HOST(dst), EXPECT_HOST, src, off, 0, EXPECT_DEVICE, n, true, h,
                      ptds, "cuMemcpyAtoHAsync_v2"))
XPDRV_TWINS(cuMemcpyDtoA_v2, cuMemcpyDtoA_v2_ptds,
            (CUarray dst, size_t off, CUdeviceptr src, size_t n),
            copy_line(dst, off, 0, EXPECT_DEVICE, NULL, 0, src, EXPECT_DEVICE, n, false, NULL,
                      ptds, "cuMemcpyDtoA_v2"))
XPDRV_TWINS(cuMemcpyAtoD_v2, cuMemcpyAtoD_v2_ptds,
            (CUdeviceptr dst, CUarray src, size_t off, size_t n),
            copy_line(NULL, 0, dst, EXPECT_DEVICE, src, off, 0, EXPECT_DEVICE, n, false, NULL,
                      ptds, "cuMemcpyAtoD_v2"))
XPDRV_TWINS(cuMemcpyAtoA_v2, cuMemcpyAtoA_v2_ptds,
            (CUarray dst, size_t doff, CUarray src, size_t soff, size_t n),
            copy_line(dst, doff, 0, EXPECT_DEVICE, src, soff, 0, EXPECT_DEVICE, n, false, NULL,
                      ptds, "cuMemcpyAtoA_v2"))
#undef HOST

/* Batches: "The batch as a whole executes in stream order but copies within
 * a batch are not guaranteed to execute in any specific order"; here each is
 * queued on the stream in turn, as if issued one by one with cuMemcpyAsync.
 * Every entry and attribute is checked before any copy is queued, so a bad
 * one leaves the stream untouched (and is named by failIdx, where given). */
static CUresult copy_batch(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
                           CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs,
                           size_t *failIdx, CUstream h, bool ptds, const char *api)
{
    if (failIdx)
        *failIdx = SIZE_MAX;
    if (dsts == NULL || srcs == NULL || sizes == NULL || count == 0 || attrs == NULL ||
        attrsIdxs == NULL || numAttrs == 0 || numAttrs > count || attrsIdxs[0] != 0)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t k = 0; k < numAttrs; k++) {
        CUmemcpySrcAccessOrder order = attrs[k].srcAccessOrder;
        if ((k > 0 && attrsIdxs[k] <= attrsIdxs[k - 1]) || attrsIdxs[k] >= count ||
            (order != CU_MEMCPY_SRC_ACCESS_ORDER_STREAM &&
             order != CU_MEMCPY_SRC_ACCESS_ORDER_DURING_API_CALL &&
             order != CU_MEMCPY_SRC_ACCESS_ORDER_ANY) ||
            (attrs[k].flags & ~(unsigned)CU_MEMCPY_FLAG_PREFER_OVERLAP_WITH_COMPUTE))
            return CUDA_ERROR_INVALID_VALUE;
    }
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    /* "Must not be legacy NULL stream." */
    if (h == CU_STREAM_LEGACY || (h == NULL && !ptds))
        return CUDA_ERROR_INVALID_VALUE;
    CUstream stream;
    if ((rc = xpsim_stream_resolve(h, ptds, cur, &stream)) != CUDA_SUCCESS)
        return rc;
    for (size_t i = 0; i < count; i++) {
        xpdrv_ptr s, d;
        if (sizes[i] != 0 &&
            ((rc = check_side(srcs[i], sizes[i], EXPECT_ANY, false, &s)) != CUDA_SUCCESS ||
             (rc = check_side(dsts[i], sizes[i], EXPECT_ANY, true, &d)) != CUDA_SUCCESS)) {
            if (failIdx)
                *failIdx = i;
            return rc;
        }
    }
    for (size_t i = 0; i < count; i++) {
        rc = do_copy_entry(r1(dsts[i]), EXPECT_ANY, r1(srcs[i]), EXPECT_ANY, line(sizes[i]), true,
                           true, h, ptds, api);
        if (rc != CUDA_SUCCESS) {
            if (failIdx)
                *failIdx = i;
            return rc;
        }
    }
    return CUDA_SUCCESS;
}

XPDRV_TWINS(cuMemcpyBatchAsync_v2, cuMemcpyBatchAsync_v2_ptsz,
            (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
             CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, CUstream h),
            copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, NULL, h, ptds,
                       "cuMemcpyBatchAsync_v2"))

/* Memsets. */
typedef struct memset_job {
    void *dst;
    size_t pitch, width_elems, height;
    unsigned int value;
    unsigned int elem;        /* 1, 2 or 4 bytes */
} memset_job;

static void run_memset(void *arg)
{
    memset_job *j = arg;
    for (size_t y = 0; y < j->height; y++) {
        char *row = (char *)j->dst + y * j->pitch;
        if (j->elem == 1) {
            memset(row, (int)(j->value & 0xff), j->width_elems);
        } else if (j->elem == 2) {
            uint16_t v = (uint16_t)j->value;
            for (size_t i = 0; i < j->width_elems; i++)
                memcpy(row + 2 * i, &v, 2);
        } else {
            uint32_t v = j->value;
            for (size_t i = 0; i < j->width_elems; i++)
                memcpy(row + 4 * i, &v, 4);
        }
    }
}

/* The destination of a non-empty memset: aligned to its element, rows
 * pitch apart, inside one allocation of memory the device can reach. */
static CUresult check_memset(CUdeviceptr dst, size_t pitch, unsigned int elem, size_t width,
                             size_t height, xpdrv_ptr *d)
{
    if (dst % elem != 0 || (height > 1 && (pitch < width * elem || pitch % elem != 0)))
        return CUDA_ERROR_INVALID_VALUE;
    size_t row = width * elem;
    size_t stride = height > 1 ? pitch : row;
    extent3 e = {.width = row, .height = height, .depth = 1};
    CUresult rc = check_side(dst, extent_of(e, stride, 0), EXPECT_ANY, true, d);
    if (rc == CUDA_SUCCESS && d->kind == XPDRV_MEM_PAGEABLE)
        rc = CUDA_ERROR_INVALID_VALUE;
    return rc;
}

/* "The synchronous memset functions are asynchronous with respect to the
 * host except when the target is pinned host memory or a Unified Memory
 * region, in which case they are fully synchronous." */
static CUresult do_memset(CUdeviceptr dst, size_t pitch, unsigned int value, unsigned int elem,
                          size_t width, size_t height, bool async, CUstream h, bool ptds,
                          const char *api)
{
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (width == 0 || height == 0)
        return CUDA_SUCCESS;
    xpdrv_ptr d;
    if ((rc = check_memset(dst, pitch, elem, width, height, &d)) != CUDA_SUCCESS)
        return rc;
    size_t row = width * elem;
    size_t stride = height > 1 ? pitch : row;
    CUstream stream;
    if ((rc = xpsim_stream_resolve(h, ptds, cur, &stream)) != CUDA_SUCCESS)
        return rc;
    if (!async) {
        if ((rc = xpsim_capture_sync(stream)) != CUDA_SUCCESS)
            return rc;
    } else {
        xpsim_node_params np = {.type = CU_GRAPH_NODE_TYPE_MEMSET,
                                .u.memset = {.dst = dst, .pitch = pitch, .value = value,
                                             .elementSize = elem, .width = width,
                                             .height = height}};
        bool captured;
        rc = xpsim_capture_work(stream, &np, &captured);
        if (captured)
            return rc;
    }
    memset_job *job = malloc(sizeof *job);
    if (job == NULL)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *job = (memset_job){.dst = xpdrv_view(&d, dst), .pitch = stride, .width_elems = width,
                        .height = height, .value = value, .elem = elem};
    const xpsim_config *cfg = xpsim_config_get();
    xpsim_work w = {.run = run_memset, .release = free, .ctx = job,
                    .duration_ns = cfg->latency_ns + transfer_ns((uint64_t)row * height, cfg->device_bps),
                    .lane = XPSIM_LANE_NONE, .fault = CUDA_SUCCESS, .what = api};
    uint64_t ticket = xpsim_stream_enqueue(stream, &w);
    xpsim_debug("%s %zu x %zu x %u bytes stream %p", api, width, height, elem, (void *)stream);
    if (!async && d.kind != XPDRV_MEM_DEVICE) {
        xpsim_stream_wait_ticket(stream, ticket);
        return xpsim_device_sticky_error(xpsim_stream_device(stream));
    }
    return CUDA_SUCCESS;
}

XPDRV_TWINS(cuMemsetD8_v2, cuMemsetD8_v2_ptds, (CUdeviceptr d, unsigned char v, size_t n),
            do_memset(d, 0, v, 1, n, 1, false, NULL, ptds, "cuMemsetD8_v2"))
XPDRV_TWINS(cuMemsetD16_v2, cuMemsetD16_v2_ptds, (CUdeviceptr d, unsigned short v, size_t n),
            do_memset(d, 0, v, 2, n, 1, false, NULL, ptds, "cuMemsetD16_v2"))
XPDRV_TWINS(cuMemsetD32_v2, cuMemsetD32_v2_ptds, (CUdeviceptr d, unsigned int v, size_t n),
            do_memset(d, 0, v, 4, n, 1, false, NULL, ptds, "cuMemsetD32_v2"))
XPDRV_TWINS(cuMemsetD8Async, cuMemsetD8Async_ptsz,
            (CUdeviceptr d, unsigned char v, size_t n, CUstream h),
            do_memset(d, 0, v, 1, n, 1, true, h, ptds, "cuMemsetD8Async"))
XPDRV_TWINS(cuMemsetD16Async, cuMemsetD16Async_ptsz,
            (CUdeviceptr d, unsigned short v, size_t n, CUstream h),
            do_memset(d, 0, v, 2, n, 1, true, h, ptds, "cuMemsetD16Async"))
XPDRV_TWINS(cuMemsetD32Async, cuMemsetD32Async_ptsz,
            (CUdeviceptr d, unsigned int v, size_t n, CUstream h),
            do_memset(d, 0, v, 4, n, 1, true, h, ptds, "cuMemsetD32Async"))
XPDRV_TWINS(cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds,
            (CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t hgt),
            do_memset(d, pitch, v, 1, w, hgt, false, NULL, ptds, "cuMemsetD2D8_v2"))
XPDRV_TWINS(cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds,
            (CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t hgt),
            do_memset(d, pitch, v, 2, w, hgt, false, NULL, ptds, "cuMemsetD2D16_v2"))
XPDRV_TWINS(cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds,
            (CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t hgt),
            do_memset(d, pitch, v, 4, w, hgt, false, NULL, ptds, "cuMemsetD2D32_v2"))
XPDRV_TWINS(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz,
            (CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t hgt, CUstream h),
            do_memset(d, pitch, v, 1, w, hgt, true, h, ptds, "cuMemsetD2D8Async"))
XPDRV_TWINS(cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz,
            (CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t hgt, CUstream h),
            do_memset(d, pitch, v, 2, w, hgt, true, h, ptds, "cuMemsetD2D16Async"))
XPDRV_TWINS(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz,
            (CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t hgt, CUstream h),
            do_memset(d, pitch, v, 4, w, hgt, true, h, ptds, "cuMemsetD2D32Async"))

/* CUDA 12.8's form of the batch, which also names the entry that failed.
 * cuda.h maps the name to _v2 and no longer declares it. */
#undef cuMemcpyBatchAsync
XPDRV_TWINS(cuMemcpyBatchAsync, cuMemcpyBatchAsync_ptsz,
            (CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes, size_t count,
             CUmemcpyAttributes *attrs, size_t *attrsIdxs, size_t numAttrs, size_t *failIdx,
             CUstream h),
            copy_batch(dsts, srcs, sizes, count, attrs, attrsIdxs, numAttrs, failIdx, h, ptds,
                       "cuMemcpyBatchAsync"))

/* Memset nodes of graphs: "elementSize must be 1, 2, or 4". */
CUresult xpdrv_memset_check(const CUDA_MEMSET_NODE_PARAMS *p)
{
    int cur;
    CUresult rc = xpdrv_enter(&cur);
    if (rc != CUDA_SUCCESS)
        return rc;
    if (p->elementSize != 1 && p->elementSize != 2 && p->elementSize != 4)
        return CUDA_ERROR_INVALID_VALUE;
    if (p->width == 0 || p->height == 0)
        return CUDA_SUCCESS;
    xpdrv_ptr d;
    return check_memset(p->dst, p->pitch, p->elementSize, p->width, p->height, &d);
}

CUresult xpdrv_memset_enqueue(const CUDA_MEMSET_NODE_PARAMS *p, CUstream h, bool ptds)
{
    return do_memset(p->dst, p->pitch, p->value, p->elementSize, p->width, p->height, true, h,
                     ptds, "graph memset node");
}
