/* xp_driver_hooks.c: the interposed CUDA driver entry points, generated from
 * xp_driver_hooks.def.  Each forwards to the variant it stands for (its slot),
 * and hands what it saw to the engine; the caller gets the real function's
 * CUresult and errno untouched.  The same wrappers serve programs linked
 * against libcuda (exported symbols) and the lookups (dlsym on a libcuda
 * handle, cuGetProcAddress, cudaGetDriverEntryPoint) that hand them out. */
#include <cuda.h>
#include <dlfcn.h>   /* RTLD_NEXT */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "xp_driver_hooks.h"
#include "xp_engine.h"
#include "xp_graph.h"

/* cuda.h maps the old name to the new one; the table needs both. */
#undef cuGetProcAddress
#undef cuMemPrefetchAsync
#undef cuStreamBeginCapture
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuCtxCreate
#undef cuCtxDestroy
#undef cuCtxPushCurrent
#undef cuCtxPopCurrent
#undef cuIpcOpenMemHandle

_Atomic(void *) xp_drv_slots[XP_DRV_COUNT];

void *xp_drv_resolve(unsigned i)
{
    const char *name = xp_drv_entries[i].name;
    /* The next definition after libxferprof (libcuda when the program links
     * it, or another interposer loaded after us), else the libcuda.so.1 the
     * process has loaded (the runtime dlopen()s it with RTLD_LOCAL). */
    void *fn = xp_real_dlsym(RTLD_NEXT, name);
    if (fn == NULL)
        fn = xp_libcuda_export(i);
    if (fn == NULL || fn == xp_drv_entries[i].wrapper) {
        char line[256];
        int n = snprintf(line, sizeof line, "xferprof: %s: no CUDA driver to forward to\n", name);
        if (n > 0)
            xp_write_stderr(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
        return NULL;
    }
    void *expected = NULL;
    if (!atomic_compare_exchange_strong_explicit(&xp_drv_slots[i], &expected, fn,
                                                 memory_order_acq_rel, memory_order_acquire))
        fn = expected;   /* someone filled it first: that target stays */
    return fn;
}

bool xp_drv_offer(unsigned i, void *fn)
{
    void *expected = NULL;
    if (fn == NULL || fn == xp_drv_entries[i].wrapper)
        return false;
    if (atomic_compare_exchange_strong_explicit(&xp_drv_slots[i], &expected, fn,
                                                memory_order_acq_rel, memory_order_acquire))
        return true;
    return expected == fn;
}

/* ---- what each kind of wrapper hands the engine ------------------------- */

#define XP_U64(x) ((uint64_t)(uintptr_t)(x))

/* A typed copy names the memory of its sides: device memory even where the
 * registry does not know the address (a mapped virtual-memory range). */
static inline void drv_copy(const xp_scope *s, xp_api api, uint64_t dst, uint64_t src,
                            uint64_t bytes, int kind, unsigned arrays, uint64_t stream,
                            bool async, CUresult rc)
{
    static const unsigned sides[] = {
        [1] = XP_SIDE_DST_DEVICE, [2] = XP_SIDE_SRC_DEVICE,
        [3] = XP_SIDE_SRC_DEVICE | XP_SIDE_DST_DEVICE};
    xp_copy_call c = {.api = api, .dst = dst, .src = src, .bytes = bytes, .stream = stream,
                      .kind = kind, .async = async,
                      .device_sides = (uint8_t)((kind >= 1 && kind <= 3 ? sides[kind] : 0) |
                                                arrays)};
    xp_record_copy(s, &c, (int)rc);
}

/* One side of a 2D or 3D copy, as CUDA_MEMCPY2D / CUDA_MEMCPY3D name it. */
typedef struct drv_side {
    CUmemorytype type;
    const void *host;
    CUdeviceptr dev;
    CUarray array;
    size_t x, y, z, pitch, height;   /* height: rows per slice (3D) */
} drv_side;

/* The first byte of the box on one side, at (z * height + y) * pitch + x as
 * cuda.h has it; an array is device memory with no address of its own: its
 * handle stands for it, whatever the position. */
static inline uint64_t box_start(const drv_side *d)
{
    if (d->type == CU_MEMORYTYPE_ARRAY)
        return XP_U64(d->array);
    uint64_t base = d->type == CU_MEMORYTYPE_HOST ? XP_U64(d->host) : (uint64_t)d->dev;
    return base ? base + ((uint64_t)d->z * d->height + d->y) * d->pitch + d->x : 0;
}

/* depth slices of height rows of width bytes, and the kind the memory types
 * give (host, device; unified memory resolved by address; an array laid
 * out tight). */
static xp_copy_call drv_box(xp_api api, const drv_side *src, const drv_side *dst, size_t width,
                            size_t height, size_t depth, uint64_t stream, bool async)
{
    bool sh = src->type == CU_MEMORYTYPE_HOST, dh = dst->type == CU_MEMORYTYPE_HOST;
    bool sd = src->type == CU_MEMORYTYPE_DEVICE || src->type == CU_MEMORYTYPE_ARRAY;
    bool dd = dst->type == CU_MEMORYTYPE_DEVICE || dst->type == CU_MEMORYTYPE_ARRAY;
    bool sa = src->type == CU_MEMORYTYPE_ARRAY, da = dst->type == CU_MEMORYTYPE_ARRAY;
    uint64_t spitch = sa ? width : src->pitch, dpitch = da ? width : dst->pitch;
    xp_copy_call c = {
        .api = api, .dst = box_start(dst), .src = box_start(src),
        .bytes = (uint64_t)width * height * depth, .stream = stream,
        .kind = sh && dh ? 0 : sh && dd ? 1 : sd && dh ? 2 : sd && dd ? 3 : 4, .async = async,
        .width = width, .height = height, .depth = depth, .spitch = spitch, .dpitch = dpitch,
        .sslice = spitch * (sa ? height : src->height),
        .dslice = dpitch * (da ? height : dst->height),
        .device_sides = (sd ? XP_SIDE_SRC_DEVICE : 0u) | (dd ? XP_SIDE_DST_DEVICE : 0u) |
                        (sa ? XP_SIDE_SRC_ARRAY : 0u) | (da ? XP_SIDE_DST_ARRAY : 0u)};
    return c;
}

static inline void drv_copy2d(const xp_scope *s, xp_api api, const CUDA_MEMCPY2D *p,
                              uint64_t stream, bool async, CUresult rc)
{
    if (p == NULL) {
        drv_copy(s, api, 0, 0, 0, 4, 0, stream, async, rc);
        return;
    }
    drv_side src = {p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes,
                    p->srcY, 0, p->srcPitch, p->Height};
    drv_side dst = {p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes,
                    p->dstY, 0, p->dstPitch, p->Height};
    xp_copy_call c = drv_box(api, &src, &dst, p->WidthInBytes, p->Height, 1, stream, async);
    xp_record_copy(s, &c, (int)rc);
}

/* The copy a CUDA_MEMCPY3D describes (a copy call's or a graph node's). */
static xp_copy_call drv_box3d(xp_api api, const CUDA_MEMCPY3D *p, uint64_t stream, bool async)
{
    if (p == NULL)
        return (xp_copy_call){.api = api, .kind = 4, .stream = stream, .async = async};
    drv_side src = {p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray, p->srcXInBytes,
                    p->srcY, p->srcZ, p->srcPitch, p->srcHeight};
    drv_side dst = {p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray, p->dstXInBytes,
                    p->dstY, p->dstZ, p->dstPitch, p->dstHeight};
    return drv_box(api, &src, &dst, p->WidthInBytes, p->Height, p->Depth, stream, async);
}

static inline void drv_copy3d(const xp_scope *s, xp_api api, const CUDA_MEMCPY3D *p,
                              uint64_t stream, bool async, CUresult rc)
{
    xp_copy_call c = drv_box3d(api, p, stream, async);
    xp_record_copy(s, &c, (int)rc);
}

/* ---- graphs ------------------------------------------------------------------ */

/* A handle an add, instantiate or clone returned, read only on success. */
#define result_handle(rc, p) ((rc) == CUDA_SUCCESS && (p) != NULL ? XP_U64(*(p)) : 0)

static void drv_gnode_3d(const xp_scope *s, xp_api api, xp_gnode_target t, uint64_t owner,
                         uint64_t node, const CUDA_MEMCPY3D *p, CUresult rc)
{
    xp_copy_call c = drv_box3d(api, p, 0, true);
    xp_record_graph_copy_node(s, t, owner, node, &c, (int)rc);
}

/* elementSize bytes (1, 2 or 4) times width, height rows. */
static void drv_gnode_memset(const xp_scope *s, xp_api api, xp_gnode_target t, uint64_t owner,
                             uint64_t node, const CUDA_MEMSET_NODE_PARAMS *p, CUresult rc)
{
    xp_record_graph_memset_node(
        s, api, t, owner, node, p != NULL ? (uint64_t)p->dst : 0, p != NULL ? (int)p->value : 0,
        p != NULL ? (uint64_t)p->elementSize * p->width * (p->height ? p->height : 1) : 0,
        (int)rc);
}

/* A prefetch of managed memory: to a device (H2D) or to the host (D2H),
 * recorded as the traffic it is. */
static inline void drv_prefetch(const xp_scope *s, xp_api api, CUdeviceptr ptr, size_t count,
                                CUmemLocation loc, uint64_t stream, CUresult rc)
{
    bool to_device = loc.type == CU_MEM_LOCATION_TYPE_DEVICE && loc.id != CU_DEVICE_CPU;
    xp_copy_call c = {.api = api, .kind = 255, .dst = ptr, .src = ptr, .bytes = count,
                      .stream = stream, .async = true,
                      .migrate = to_device ? XP_DIR_H2D : XP_DIR_D2H,
                      .has_device = to_device, .device = to_device ? loc.id : 0};
    xp_record_copy(s, &c, (int)rc);
}

/* The CUDA 8 form names a device, or CU_DEVICE_CPU for the host. */
static inline CUmemLocation device_location(CUdevice dev)
{
    return (CUmemLocation){.type = dev == CU_DEVICE_CPU ? CU_MEM_LOCATION_TYPE_HOST
                                                        : CU_MEM_LOCATION_TYPE_DEVICE,
                           .id = dev};
}

/* The device a cuMemCreate allocation lives on (its properties' location). */
static inline int prop_device(const CUmemAllocationProp *prop)
{
    return prop != NULL && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE
               ? prop->location.id : XP_DEVICE_OF_KIND;
}

static inline uint64_t result_ptr(CUresult rc, uint64_t p)
{
    return rc == CUDA_SUCCESS ? p : 0;
}

/* What a CUDA array holds: its element (channels of the format's size) times
 * its dimensions, 0 counting as 1.  Formats other than the plain ones
 * (packed, compressed) count a byte a channel. */
static inline uint64_t array_bytes(CUarray_format f, unsigned channels, size_t w, size_t h,
                                   size_t d)
{
    unsigned size = f == CU_AD_FORMAT_UNSIGNED_INT16 || f == CU_AD_FORMAT_SIGNED_INT16 ||
                            f == CU_AD_FORMAT_HALF ? 2
                    : f == CU_AD_FORMAT_UNSIGNED_INT32 || f == CU_AD_FORMAT_SIGNED_INT32 ||
                            f == CU_AD_FORMAT_FLOAT ? 4 : 1;
    return (uint64_t)size * channels * w * (h ? h : 1) * (d ? d : 1);
}

/* A pitched allocation takes pitch x height bytes (the request when it failed). */
static inline uint64_t pitch_bytes(CUresult rc, const size_t *pitch, size_t width, size_t height)
{
    return (uint64_t)(rc == CUDA_SUCCESS && pitch != NULL ? *pitch : width) * height;
}

/* ---- the wrappers -------------------------------------------------------- */

/* The common frame of every recorded driver call (the runtime hooks' frame,
 * with CUresult): `record` runs only when the call is recorded (not nested
 * in a runtime call or in our own work); errno is saved around it. */
#define XP_DRV_BODY(name, params, args, record)                                         \
    CUresult xp_drv_##name params;                                                      \
    CUresult xp_drv_##name params                                                       \
    {                                                                                   \
        CUresult (*real) params = (CUresult (*) params)xp_drv_real(XP_DRV_##name);      \
        if (real == NULL)                                                               \
            return CUDA_ERROR_UNKNOWN;                                                  \
        xp_scope scope;                                                                 \
        scope.site.ret = (uintptr_t)__builtin_return_address(0);                        \
        scope.site.sp = (uintptr_t)&scope;                                              \
        xp_scope_enter(&scope, (uintptr_t)real);                                        \
        CUresult rc = real args;                                                        \
        int saved_errno = errno;                                                        \
        if (xp_scope_returned(&scope)) {                                                \
            xp_note_driver_call();                                                      \
            record;                                                                     \
        }                                                                               \
        errno = saved_errno;                                                            \
        xp_scope_leave(&scope);                                                         \
        return rc;                                                                      \
    }                                                                                   \
    XP_DRV_EXPORT(name)

#define XP_COPY(name, is_async, params, args, dst, src, count, kind, stream)            \
    XP_DRV_BODY(name, params, args,                                                     \
                drv_copy(&scope, XP_API_##name, XP_U64(dst), XP_U64(src), (count), (kind), \
                         0, XP_U64(stream), (is_async), rc))

#define XP_ARRAY_COPY(name, is_async, params, args, dst, src, count, kind, arrays, stream) \
    XP_DRV_BODY(name, params, args,                                                     \
                drv_copy(&scope, XP_API_##name, XP_U64(dst), XP_U64(src), (count), (kind), \
                         (arrays), XP_U64(stream), (is_async), rc))

#define XP_ALLOC(name, params, args, alloc_kind, ptr, bytes)                            \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_alloc(&scope, XP_API_##name, (alloc_kind),                    \
                                result_ptr(rc, XP_U64(ptr)), (bytes), (int)rc))

#define XP_REGISTER(name, params, args, ptr, bytes)                                     \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_alloc(&scope, XP_API_##name, XP_ALLOC_REGISTERED, XP_U64(ptr), \
                                (bytes), (int)rc))

#define XP_FREE(name, params, args, kinds, ptr)                                         \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_free(&scope, XP_API_##name, (kinds), XP_U64(ptr), (int)rc))

#define XP_SYNC(name, params, args, handle)                                             \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_sync(&scope, XP_API_##name, XP_U64(handle), (int)rc))

#define XP_COPY2D(name, is_async, params, args, desc, stream)                          \
    XP_DRV_BODY(name, params, args,                                                     \
                drv_copy2d(&scope, XP_API_##name, (desc), XP_U64(stream), (is_async), rc))

#define XP_COPY3D(name, is_async, params, args, desc, stream)                          \
    XP_DRV_BODY(name, params, args,                                                     \
                drv_copy3d(&scope, XP_API_##name, (desc), XP_U64(stream), (is_async), rc))

/* location: a CUmemLocation. */
#define XP_PREFETCH(name, params, args, ptr, count, location, stream)                   \
    XP_DRV_BODY(name, params, args,                                                     \
                drv_prefetch(&scope, XP_API_##name, (ptr), (count), (location),         \
                             XP_U64(stream), rc))

/* An allocation on a device the call names (not the current one). */
#define XP_ALLOC_ON(name, params, args, alloc_kind, ptr, bytes, device)                 \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_alloc_on(&scope, XP_API_##name, (alloc_kind),                 \
                                   result_ptr(rc, XP_U64(ptr)), (bytes), (device), (int)rc))

/* Ends every allocation of `kinds` from ptr up to ptr + span. */
#define XP_FREE_SPAN(name, params, args, kinds, ptr, span)                              \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_free_span(&scope, XP_API_##name, (kinds), XP_U64(ptr), (span), \
                                    (int)rc))

#define XP_MEMSET(name, is_async, params, args, dst, value, count, elem_size, stream)   \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_memset(&scope, XP_API_##name, XP_U64(dst), (int)(value),      \
                                 (uint64_t)(count) * (elem_size), XP_U64(stream),       \
                                 (is_async), (int)rc))

/* Counted, not recorded, unless it failed. */
#define XP_LAUNCH(name, params, args, func)                                             \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_launch(&scope, XP_API_##name, XP_U64(func), (int)rc))

#define XP_PROFILER(name, params, args, start)                                          \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_profiler(&scope, XP_API_##name, (start), (int)rc))

#define XP_GRAPH(name, params, args, op, a, b, c)                                       \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_graph_op(&scope, XP_API_##name, (op), XP_U64(a), XP_U64(b),   \
                                   XP_U64(c), (int)rc))

#define XP_GNODE_COPY3D(name, params, args, target, owner, node, desc)                  \
    XP_DRV_BODY(name, params, args,                                                     \
                drv_gnode_3d(&scope, XP_API_##name, (target), XP_U64(owner), XP_U64(node), \
                             (desc), rc))

#define XP_GNODE_MEMSET(name, params, args, target, owner, node, desc)                  \
    XP_DRV_BODY(name, params, args,                                                     \
                drv_gnode_memset(&scope, XP_API_##name, (target), XP_U64(owner),        \
                                 XP_U64(node), (desc), rc))

#define XP_CONTEXT(name, params, args)                                                  \
    XP_DRV_BODY(name, params, args, xp_record_context(&scope, XP_API_##name, (int)rc))

#define XP_CONTEXT_DESTROY(name, params, args)                                          \
    XP_DRV_BODY(name, params, args,                                                     \
                xp_record_context_destroy(&scope, XP_API_##name, (int)rc))

/* Lookups are defined in xp_lookup_hooks.c; declared here for the table. */
#define XP_PROCADDRESS(name, params, args, symbol, pfn) CUresult xp_drv_##name params;

#define XP_DRV_EACH(...)   /* every shape is defined above */
#include "xp_driver_each.h"

/* ---- the table ----------------------------------------------------------- */

const xp_drv_entry xp_drv_entries[XP_DRV_COUNT] = {
#define XP_DRV_EACH(name, ...) [XP_DRV_##name] = {#name, (void *)xp_drv_##name},
#include "xp_driver_each.h"
};

XP_NO_SANITIZE int xp_drv_find(const char *name)
{
    /* Every name in the table starts with "cu" and none with "cuda": most
     * lookups (runtime names, libc's) leave at the first test. */
    if (name == NULL || !xp_str_prefix(name, "cu") || xp_str_prefix(name, "cuda"))
        return -1;
    for (unsigned i = 0; i < XP_DRV_COUNT; i++)
        if (xp_str_eq(xp_drv_entries[i].name + 2, name + 2))
            return (int)i;
    return -1;
}
