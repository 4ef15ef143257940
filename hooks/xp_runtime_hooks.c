/* xp_runtime_hooks.c: the interposed CUDA runtime entry points, generated
 * from xp_runtime_hooks.def.  Each resolves the real function once, calls
 * it, and hands what it saw to the engine; the program gets the real
 * function's return value and errno untouched. */
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "xp_engine.h"
#include "xp_graph.h"
#include "xp_runtime_export.h"

/* Versions the runtime's symbols carry (libcudart.so.13 exports
 * cudaMalloc@@libcudart.so.13, and so on; CUDA 11's runtime is
 * libcudart.so.11.0, its node too), indexed by XP_RT_V*. */
static const char *const runtime_versions[] = {"libcudart.so.13", "libcudart.so.12",
                                               "libcudart.so.11.0"};
#define N_VERSIONS (sizeof runtime_versions / sizeof runtime_versions[0])

/* dl_iterate_phdr's search for a loaded runtime of one version. */
typedef struct runtime_search {
    const char *version;      /* "libcudart.so.12": also the file name's start */
    char path[4096];          /* OUT: the first such object's path, "" if none */
} runtime_search;

static int find_runtime_file(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    runtime_search *rs = data;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    size_t n = strlen(rs->version);
    if (strncmp(base, rs->version, n) != 0 || (base[n] != '\0' && base[n] != '.') ||
        strlen(name) >= sizeof rs->path)
        return 0;
    memcpy(rs->path, name, strlen(name) + 1);
    return 1;
}

/* name at `version` in the loaded runtime of that version itself: a
 * runtime that came with a library dlopen()ed with RTLD_LOCAL (a plugin
 * built against another CUDA) is in no scope RTLD_NEXT searches.  A lookup
 * in its handle searches it first (then its own dependencies, never the
 * preload). */
static void *loaded_runtime_symbol(const char *name, const char *version)
{
    runtime_search rs = {.version = version, .path = ""};
    /* The path first, the lookup after: no dlopen inside the iteration. */
    if (dl_iterate_phdr(find_runtime_file, &rs) == 0)
        return NULL;
    void *h = dlopen(rs.path, RTLD_LAZY | RTLD_NOLOAD);
    if (h == NULL)
        return NULL;
    void *fn = dlvsym(h, name, version);
    dlclose(h);   /* NOLOAD took a reference of a library that stays loaded */
    return fn;
}

/* The version its caller was linked against first (the next definition
 * after libxferprof, else the loaded runtime of that version), then the
 * newest loaded one, and a runtime without versions by plain name. */
__attribute__((noinline)) void *xp_find_runtime(_Atomic(void *) *slot, const char *name,
                                                unsigned prefer, bool say)
{
    void *fn = NULL;
    if (prefer < N_VERSIONS) {
        fn = dlvsym(RTLD_NEXT, name, runtime_versions[prefer]);
        if (fn == NULL)
            fn = loaded_runtime_symbol(name, runtime_versions[prefer]);
    }
    for (size_t i = 0; fn == NULL && i < N_VERSIONS; i++)
        fn = dlvsym(RTLD_NEXT, name, runtime_versions[i]);
    if (fn == NULL)
        fn = dlsym(RTLD_NEXT, name);
    if (fn != NULL) {
        atomic_store_explicit(slot, fn, memory_order_release);
        xp_note_runtime_resolved();
    } else if (say) {
        char line[256];
        int n = snprintf(line, sizeof line, "xferprof: %s: no CUDA runtime to forward to\n", name);
        if (n > 0)
            xp_write_stderr(line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    }
    return fn;
}

extern const xp_rt_hook __start_xp_rt_hooks[] __attribute__((visibility("hidden")));
extern const xp_rt_hook __stop_xp_rt_hooks[] __attribute__((visibility("hidden")));

const xp_rt_hook *xp_rt_hook_find(const char *name, unsigned version)
{
    for (const xp_rt_hook *h = __start_xp_rt_hooks; h < __stop_xp_rt_hooks; h++)
        if (h->version == version && strcmp(h->name, name) == 0)
            return h;
    return NULL;
}

/* The common frame of every hook: `always` runs after the real call (with
 * `rc` its result) whether or not the call is recorded, `record` only when
 * it is; errno is saved around both.  One per runtime version (`version`,
 * XP_RT_V*), each forwarding to that version's function. */
#define XP_HOOK_FN(fn, version, name, params, args, always, record)                     \
    static _Atomic(void *) fn##_real;                                                   \
    __attribute__((visibility("default"))) cudaError_t fn params;                       \
    __attribute__((visibility("default"))) cudaError_t fn params                        \
    {                                                                                   \
        const unsigned hook_version = (version); /* for `record` (hook_symbol) */       \
        (void)hook_version;                                                             \
        cudaError_t (*real) params =                                                    \
            (cudaError_t (*) params)resolve_runtime(&fn##_real, #name, hook_version);   \
        if (real == NULL)                                                               \
            return cudaErrorUnknown;                                                    \
        xp_scope scope;                                                                 \
        scope.site.ret = (uintptr_t)__builtin_return_address(0);                        \
        scope.site.sp = (uintptr_t)&scope;                                              \
        xp_scope_enter(&scope, (uintptr_t)real);                                        \
        cudaError_t rc = real args;                                                     \
        int saved_errno = errno;                                                        \
        always;                                                                         \
        if (xp_scope_returned(&scope))                                                  \
            record;                                                                     \
        errno = saved_errno;                                                            \
        xp_scope_leave(&scope);                                                         \
        return rc;                                                                      \
    }                                                                                   \
    XP_RT_HOOK_ROW(fn, version, name)

/* vers: the versions this entry's signature is the one of (XP_V13, ...). */
#define XP_HOOK_BODY(vers, name, params, args, always, record)                          \
    XP_RUNTIME_VERSIONS_AT(vers, XP_HOOK_FN, xp_hook_, name, params, args, always, record)

/* What each kind of hook hands the engine (functions, so the macros below
 * pass plain argument lists). */
static inline void hook_copy(const xp_scope *s, xp_api api, const void *dst, const void *src,
                             size_t count, int kind, cudaStream_t stream, bool async,
                             cudaError_t rc)
{
    /* Field by field, not a designated initializer: the hottest hook (see
     * xp_copy_call). */
    xp_copy_call c;
    c.api = api;
    c.kind = kind;
    c.dst = (uint64_t)(uintptr_t)dst;
    c.src = (uint64_t)(uintptr_t)src;
    c.bytes = count;
    c.stream = (uint64_t)(uintptr_t)stream;
    c.width = c.height = c.spitch = c.dpitch = 0;
    c.depth = 0;   /* sslice and dslice are not read */
    c.migrate = 0;
    c.async = async;
    c.device_sides = 0;
    c.has_device = false;
    c.device = 0;
    xp_record_copy(s, &c, (int)rc);
}

static inline void hook_copy2d(const xp_scope *s, xp_api api, const void *dst, size_t dpitch,
                               const void *src, size_t spitch, size_t width, size_t height,
                               int kind, cudaStream_t stream, bool async, cudaError_t rc)
{
    xp_copy_call c = {.api = api, .dst = (uint64_t)(uintptr_t)dst,
                      .src = (uint64_t)(uintptr_t)src, .bytes = (uint64_t)width * height,
                      .stream = (uint64_t)(uintptr_t)stream, .kind = kind, .async = async,
                      .width = width, .height = height, .spitch = spitch, .dpitch = dpitch};
    xp_record_copy(s, &c, (int)rc);
}

/* A copy with a CUDA array on the sides `arrays` (XP_SIDE_*_ARRAY): the
 * array's address is its handle, its rows the copy's width apart; height 0
 * is a linear copy of width bytes. */
static inline void hook_array_copy(const xp_scope *s, xp_api api, const void *dst, size_t dpitch,
                                   const void *src, size_t spitch, size_t width, size_t height,
                                   unsigned arrays, int kind, cudaStream_t stream, bool async,
                                   cudaError_t rc)
{
    xp_copy_call c = {.api = api, .dst = (uint64_t)(uintptr_t)dst,
                      .src = (uint64_t)(uintptr_t)src,
                      .bytes = height ? (uint64_t)width * height : width,
                      .stream = (uint64_t)(uintptr_t)stream, .kind = kind, .async = async,
                      .width = height ? width : 0, .height = height, .spitch = spitch,
                      .dpitch = dpitch,
                      .device_sides =
                          (uint8_t)(arrays | (arrays & XP_SIDE_SRC_ARRAY ? XP_SIDE_SRC_DEVICE : 0) |
                                    (arrays & XP_SIDE_DST_ARRAY ? XP_SIDE_DST_DEVICE : 0))};
    xp_record_copy(s, &c, (int)rc);
}

/* What a CUDA array holds: channel bits / 8 bytes an element, dimensions of
 * 0 counting as 1 (a 1D array has height 0, a 2D one depth 0). */
static inline uint64_t array_bytes(const struct cudaChannelFormatDesc *d, size_t w, size_t h,
                                   size_t depth)
{
    if (d == NULL)
        return 0;
    uint64_t elem = ((uint64_t)(unsigned)d->x + (unsigned)d->y + (unsigned)d->z +
                     (unsigned)d->w) / 8;
    return elem * w * (h ? h : 1) * (depth ? depth : 1);
}

/* Bytes of one element of `array`, from the runtime that copied it
 * (cudaArrayGetInfo, which succeeds, leaving the last error alone, for the
 * array the copy just used: asked only after it succeeded); 1 otherwise. */
static uint64_t array_elem(cudaError_t rc, const void *array, unsigned version)
{
    static _Atomic(void *) slots[XP_RT_V11 + 1];
    if (rc != cudaSuccess || array == NULL || version > XP_RT_V11)
        return 1;
    cudaError_t (*info)(struct cudaChannelFormatDesc *, struct cudaExtent *, unsigned *,
                        cudaArray_t) =
        (cudaError_t (*)(struct cudaChannelFormatDesc *, struct cudaExtent *, unsigned *,
                         cudaArray_t))lookup_runtime(&slots[version], "cudaArrayGetInfo", version);
    struct cudaChannelFormatDesc d;
    if (info == NULL || info(&d, NULL, NULL, (cudaArray_t)(uintptr_t)array) != cudaSuccess)
        return 1;
    uint64_t elem = array_bytes(&d, 1, 1, 1);
    return elem ? elem : 1;
}

/* One side of a 3D copy: the first byte of its box, its row and slice
 * pitches.  An array is device memory with no address, laid out tight: its
 * handle stands for it, the box's width (bytes) for its pitch. */
static inline void pitched_side(const void *array, struct cudaPitchedPtr p, struct cudaPos pos,
                                struct cudaExtent e, uint64_t *addr, uint64_t *pitch,
                                uint64_t *slice)
{
    if (array != NULL || p.ptr == NULL) {
        *addr = (uint64_t)(uintptr_t)array;
        *pitch = e.width;
        *slice = (uint64_t)e.width * e.height;
        return;
    }
    *addr = (uint64_t)(uintptr_t)p.ptr + ((uint64_t)pos.z * p.ysize + pos.y) * p.pitch + pos.x;
    *pitch = p.pitch;
    *slice = (uint64_t)p.pitch * p.ysize;
}

/* A cudaMemcpy3D without arrays takes positions and the extent's width in
 * bytes (with arrays, in elements: bytes are then the extent as given). */
static inline void box_copy(xp_copy_call *c, xp_api api, struct cudaExtent e,
                            cudaStream_t stream, bool async)
{
    c->api = api;
    c->bytes = (uint64_t)e.width * e.height * e.depth;
    c->stream = (uint64_t)(uintptr_t)stream;
    c->async = async;
    c->width = e.width;
    c->height = e.height;
    c->depth = e.depth;
}

/* The copy a cudaMemcpy3DParms describes (a copy call's or a graph node's).
 * With an array, the extent's width is in the array's elements: the bytes
 * are width x element size (the array's, asked of the runtime once the call
 * succeeded). */
static xp_copy_call parms_copy(xp_api api, unsigned version, const struct cudaMemcpy3DParms *p,
                               cudaStream_t stream, bool async, cudaError_t rc)
{
    xp_copy_call c = {.kind = 4};
    if (p != NULL) {
        struct cudaExtent e = p->extent;
        if (p->srcArray != NULL || p->dstArray != NULL)
            e.width *= array_elem(rc, p->srcArray ? (const void *)p->srcArray
                                                  : (const void *)p->dstArray, version);
        box_copy(&c, api, e, stream, async);
        c.kind = p->kind;
        pitched_side(p->srcArray, p->srcPtr, p->srcPos, e, &c.src, &c.spitch, &c.sslice);
        pitched_side(p->dstArray, p->dstPtr, p->dstPos, e, &c.dst, &c.dpitch, &c.dslice);
        c.device_sides = (p->srcArray ? XP_SIDE_SRC_DEVICE | XP_SIDE_SRC_ARRAY : 0u) |
                         (p->dstArray ? XP_SIDE_DST_DEVICE | XP_SIDE_DST_ARRAY : 0u);
    } else {
        box_copy(&c, api, (struct cudaExtent){0, 0, 0}, stream, async);
    }
    return c;
}

static void hook_copy3d_parms(const xp_scope *s, xp_api api, unsigned version,
                              const struct cudaMemcpy3DParms *p, cudaStream_t stream, bool async,
                              cudaError_t rc)
{
    xp_copy_call c = parms_copy(api, version, p, stream, async, rc);
    xp_record_copy(s, &c, (int)rc);
}

/* A peer copy: device to device, on the destination's device. */
static void hook_copy3d_peer(const xp_scope *s, xp_api api, unsigned version,
                             const struct cudaMemcpy3DPeerParms *p, cudaStream_t stream,
                             bool async, cudaError_t rc)
{
    (void)version;
    xp_copy_call c = {.kind = 255, .device_sides = XP_SIDE_SRC_DEVICE | XP_SIDE_DST_DEVICE,
                      .has_device = p != NULL, .device = p != NULL ? p->dstDevice : 0};
    box_copy(&c, api, p != NULL ? p->extent : (struct cudaExtent){0, 0, 0}, stream, async);
    if (p != NULL) {
        pitched_side(p->srcArray, p->srcPtr, p->srcPos, p->extent, &c.src, &c.spitch, &c.sslice);
        pitched_side(p->dstArray, p->dstPtr, p->dstPos, p->extent, &c.dst, &c.dpitch, &c.dslice);
    }
    xp_record_copy(s, &c, (int)rc);
}

/* Each copy of a batch is a row of its own, as the same cudaMemcpyAsync
 * would be (the batch takes no kind: sides by address).  Read from the
 * program's arrays after the call, which leaves them alone; a batch the
 * runtime refused for its arrays is one empty row (the failure is seen). */
static void hook_batch(const xp_scope *s, xp_api api, void *const *dsts, const void *const *srcs,
                       const size_t *sizes, size_t count, cudaStream_t stream, cudaError_t rc)
{
    bool arrays = dsts != NULL && srcs != NULL && sizes != NULL && count > 0;
    for (size_t i = 0; i < (arrays ? count : 1); i++)
        hook_copy(s, api, arrays ? dsts[i] : NULL, arrays ? srcs[i] : NULL,
                  arrays ? sizes[i] : 0, 255, stream, true, rc);
}

/* A prefetch of managed memory to a device (H2D) or to the host (D2H):
 * recorded as the traffic it is. */
static void hook_prefetch(const xp_scope *s, xp_api api, const void *ptr, size_t count,
                          struct cudaMemLocation loc, cudaStream_t stream, cudaError_t rc)
{
    bool to_device = loc.type == cudaMemLocationTypeDevice && loc.id != cudaCpuDeviceId;
    xp_copy_call c = {.api = api, .kind = 255, .dst = (uint64_t)(uintptr_t)ptr,
                      .src = (uint64_t)(uintptr_t)ptr, .bytes = count,
                      .stream = (uint64_t)(uintptr_t)stream, .async = true,
                      .migrate = to_device ? XP_DIR_H2D : XP_DIR_D2H,
                      .has_device = to_device, .device = to_device ? loc.id : 0};
    xp_record_copy(s, &c, (int)rc);
}

/* CUDA 12's (and 11's) prefetch target: a device ordinal, or
 * cudaCpuDeviceId for the host. */
static inline struct cudaMemLocation device_location(int device)
{
    struct cudaMemLocation loc = {.type = device == cudaCpuDeviceId ? cudaMemLocationTypeHost
                                                                    : cudaMemLocationTypeDevice,
                                  .id = device};
    return loc;
}

/* Device to device whatever the addresses say (a peer copy takes no kind),
 * recorded on the destination's device. */
static inline void hook_peer(const xp_scope *s, xp_api api, const void *dst, int dst_device,
                             const void *src, size_t count, cudaStream_t stream, bool async,
                             cudaError_t rc)
{
    xp_copy_call c = {.api = api, .dst = (uint64_t)(uintptr_t)dst,
                      .src = (uint64_t)(uintptr_t)src, .bytes = count,
                      .stream = (uint64_t)(uintptr_t)stream, .kind = 255, .async = async,
                      .device_sides = XP_SIDE_SRC_DEVICE | XP_SIDE_DST_DEVICE,
                      .has_device = true, .device = dst_device};
    xp_record_copy(s, &c, (int)rc);
}

/* The device side of a symbol copy: the variable's device address (plus
 * offset), from the real cudaGetSymbolAddress.  That call fails, and so sets
 * the thread's last error, only for a symbol the copy itself refuses, so it
 * is made only after a copy of at least one byte succeeded (the runtime
 * resolved the same symbol on the same device a moment before).  Otherwise
 * (a failed or empty copy) the symbol's own address as passed, its host
 * shadow, plus offset.  Called with the hook's scope entered: whatever the
 * runtime does inside is not recorded. */
static uint64_t symbol_side(cudaError_t rc, const void *symbol, size_t offset, size_t count,
                            unsigned version)
{
    /* The copy's own runtime: the one that registered the symbol. */
    static _Atomic(void *) slots[XP_RT_V11 + 1];
    if (rc == cudaSuccess && count > 0 && version <= XP_RT_V11) {
        cudaError_t (*get)(void **, const void *) = (cudaError_t (*)(void **, const void *))
            lookup_runtime(&slots[version], "cudaGetSymbolAddress", version);
        void *p = NULL;
        if (get != NULL && get(&p, symbol) == cudaSuccess && p != NULL)
            return (uint64_t)(uintptr_t)p + offset;
    }
    return (uint64_t)(uintptr_t)symbol + offset;
}

/* The copy to (or from) a module variable (a copy call's or a graph node's). */
static xp_copy_call symbol_copy(xp_api api, unsigned version, bool to_symbol, const void *symbol,
                                const void *mem, size_t count, size_t offset, int kind,
                                cudaStream_t stream, bool async, cudaError_t rc)
{
    uint64_t var = symbol_side(rc, symbol, offset, count, version);
    uint64_t host = (uint64_t)(uintptr_t)mem;
    xp_copy_call c = {.api = api, .dst = to_symbol ? var : host, .src = to_symbol ? host : var,
                      .bytes = count, .stream = (uint64_t)(uintptr_t)stream, .kind = kind,
                      .async = async,
                      .device_sides = to_symbol ? XP_SIDE_DST_DEVICE : XP_SIDE_SRC_DEVICE};
    return c;
}

static inline void hook_symbol(const xp_scope *s, xp_api api, unsigned version, bool to_symbol,
                               const void *symbol, const void *mem, size_t count, size_t offset,
                               int kind, cudaStream_t stream, bool async, cudaError_t rc)
{
    xp_copy_call c = symbol_copy(api, version, to_symbol, symbol, mem, count, offset, kind,
                                 stream, async, rc);
    xp_record_copy(s, &c, (int)rc);
}

/* ---- graphs ---------------------------------------------------------------- */

/* What an add, instantiate or clone returned, read only when it succeeded. */
static inline uint64_t new_node(cudaError_t rc, const cudaGraphNode_t *p)
{
    return rc == cudaSuccess && p != NULL ? (uint64_t)(uintptr_t)*p : 0;
}

static inline uint64_t new_exec(cudaError_t rc, const cudaGraphExec_t *p)
{
    return rc == cudaSuccess && p != NULL ? (uint64_t)(uintptr_t)*p : 0;
}

static inline uint64_t new_graph(cudaError_t rc, const cudaGraph_t *p)
{
    return rc == cudaSuccess && p != NULL ? (uint64_t)(uintptr_t)*p : 0;
}

static void hook_gnode_1d(const xp_scope *s, xp_api api, xp_gnode_target t, uint64_t owner,
                          uint64_t node, const void *dst, const void *src, size_t count, int kind,
                          cudaError_t rc)
{
    xp_copy_call c = {.api = api, .dst = (uint64_t)(uintptr_t)dst,
                      .src = (uint64_t)(uintptr_t)src, .bytes = count, .kind = kind,
                      .async = true};
    xp_record_graph_copy_node(s, t, owner, node, &c, (int)rc);
}

static void hook_gnode_3d(const xp_scope *s, xp_api api, unsigned version, xp_gnode_target t,
                          uint64_t owner, uint64_t node, const struct cudaMemcpy3DParms *p,
                          cudaError_t rc)
{
    xp_copy_call c = parms_copy(api, version, p, NULL, true, rc);
    xp_record_graph_copy_node(s, t, owner, node, &c, (int)rc);
}

static void hook_gnode_symbol(const xp_scope *s, xp_api api, unsigned version, bool to_symbol,
                              xp_gnode_target t, uint64_t owner, uint64_t node,
                              const void *symbol, const void *mem, size_t count, size_t offset,
                              int kind, cudaError_t rc)
{
    xp_copy_call c = symbol_copy(api, version, to_symbol, symbol, mem, count, offset, kind, NULL,
                                 true, rc);
    xp_record_graph_copy_node(s, t, owner, node, &c, (int)rc);
}

/* elementSize bytes (1, 2 or 4) times width, height rows. */
static void hook_gnode_memset(const xp_scope *s, xp_api api, xp_gnode_target t, uint64_t owner,
                              uint64_t node, const struct cudaMemsetParams *p, cudaError_t rc)
{
    xp_record_graph_memset_node(
        s, api, t, owner, node, p != NULL ? (uint64_t)(uintptr_t)p->dst : 0,
        p != NULL ? (int)p->value : 0,
        p != NULL ? (uint64_t)p->elementSize * p->width * (p->height ? p->height : 1) : 0,
        (int)rc);
}

static inline uint64_t result_ptr(cudaError_t rc, const void *p)
{
    return rc == cudaSuccess ? (uint64_t)(uintptr_t)p : 0;
}

/* A 1D copy hook's first call: its real function looked up, then the call
 * made (out of the hook, whose common case then needs no frame). */
__attribute__((noinline, cold)) static cudaError_t
copy_first(_Atomic(void *) *slot, const char *name, unsigned version, void *dst, const void *src,
           size_t count, int kind, void *stream, unsigned how, uintptr_t ret)
{
    void *real = xp_find_runtime(slot, name, version, true);
    if (real == NULL)
        return cudaErrorUnknown;
    return (cudaError_t)xp_copy_1d(dst, src, count, kind, stream, (void (*)(void))real, how, ret);
}

/* The hottest hooks: the whole call, the real one included, is one call
 * into the engine (xp_copy_1d), not XP_HOOK_FN's three; the hook's own
 * arguments stay in the registers they came in. */
#define XP_COPY_FN(fn, version, name, params, args, is_async, dst, src, count, kind, stream) \
    static _Atomic(void *) fn##_real;                                                   \
    __attribute__((visibility("default"))) cudaError_t fn params;                       \
    __attribute__((visibility("default"))) cudaError_t fn params                        \
    {                                                                                   \
        void *real = atomic_load_explicit(&fn##_real, memory_order_acquire);            \
        unsigned how = XP_API_##name | ((is_async) ? XP_COPY_1D_ASYNC : 0);             \
        uintptr_t ret = (uintptr_t)__builtin_return_address(0);                         \
        if (__builtin_expect(real == NULL, 0))                                          \
            return copy_first(&fn##_real, #name, (version), (void *)(dst),              \
                              (const void *)(src), (count), (int)(kind),                \
                              (void *)(stream), how, ret);                              \
        return (cudaError_t)xp_copy_1d((void *)(dst), (const void *)(src), (count),     \
                                       (int)(kind), (void *)(stream),                   \
                                       (void (*)(void))real, how, ret);                 \
    }                                                                                   \
    XP_RT_HOOK_ROW(fn, version, name)

#define XP_COPY_AT(vers, name, is_async, params, args, dst, src, count, kind, stream)   \
    XP_RUNTIME_VERSIONS_AT(vers, XP_COPY_FN, xp_hook_, name, params, args, is_async, dst, src, \
                           count, kind, stream)

#define XP_COPY2D_AT(vers, name, is_async, params, args, dst, dpitch, src, spitch, width,  \
                     height, kind, stream)                                              \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_copy2d(&scope, XP_API_##name, (dst), (dpitch), (src), (spitch),   \
                             (width), (height), (int)(kind), (stream), (is_async), rc))

#define XP_PEER_AT(vers, name, is_async, params, args, dst, dst_device, src, count, stream) \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_peer(&scope, XP_API_##name, (dst), (dst_device), (src), (count),  \
                           (stream), (is_async), rc))

/* desc: a cudaMemcpy3DParms or a cudaMemcpy3DPeerParms. */
#define XP_COPY3D_AT(vers, name, is_async, params, args, desc, stream)                  \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 _Generic((desc), const struct cudaMemcpy3DParms *: hook_copy3d_parms,  \
                          const struct cudaMemcpy3DPeerParms *: hook_copy3d_peer)(      \
                     &scope, XP_API_##name, hook_version, (desc), (stream), (is_async), rc))

#define XP_ARRAY_COPY_AT(vers, name, is_async, params, args, dst, dpitch, src, spitch, width, \
                         height, arrays, kind, stream)                                  \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_array_copy(&scope, XP_API_##name, (dst), (dpitch), (src), (spitch),  \
                                 (width), (height), (arrays), (int)(kind), (stream),    \
                                 (is_async), rc))

#define XP_BATCH_AT(vers, name, params, args, dsts, srcs, sizes, count, stream)         \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_batch(&scope, XP_API_##name, (dsts), (srcs), (sizes), (count),    \
                            (stream), rc))

#define XP_PREFETCH_AT(vers, name, params, args, ptr, count, location, stream)          \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_prefetch(&scope, XP_API_##name, (ptr), (count), (location),       \
                               (stream), rc))

/* to_symbol: mem is the source and the symbol the destination. */
#define XP_SYMBOL_AT(vers, name, is_async, to_symbol, params, args, symbol, mem, count,   \
                     offset, kind, stream)                                              \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_symbol(&scope, XP_API_##name, hook_version, (to_symbol), (symbol), \
                             (mem), (count), (offset), (int)(kind), (stream), (is_async), rc))

#define XP_MEMSET_AT(vers, name, is_async, params, args, ptr, value, count, stream)     \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 xp_record_memset(&scope, XP_API_##name, (uint64_t)(uintptr_t)(ptr),    \
                                  (value), (count), (uint64_t)(uintptr_t)(stream),      \
                                  (is_async), (int)rc))

/* Counted, not recorded, unless it failed. */
#define XP_LAUNCH_AT(vers, name, params, args, func)                                    \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 xp_record_launch(&scope, XP_API_##name, (uint64_t)(uintptr_t)(func), (int)rc))

#define XP_ALLOC_AT(vers, name, params, args, alloc_kind, ptr, bytes)                   \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 xp_record_alloc(&scope, XP_API_##name, (alloc_kind), result_ptr(rc, (ptr)), \
                                 (bytes), (int)rc))

#define XP_REGISTER_AT(vers, name, params, args, ptr, bytes)                            \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 xp_record_alloc(&scope, XP_API_##name, XP_ALLOC_REGISTERED,            \
                                 (uint64_t)(uintptr_t)(ptr), (bytes), (int)rc))

#define XP_FREE_AT(vers, name, params, args, kinds, ptr)                                \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 xp_record_free(&scope, XP_API_##name, (kinds), (uint64_t)(uintptr_t)(ptr), \
                                (int)rc))

#define XP_SYNC_AT(vers, name, params, args, handle)                                    \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 xp_record_sync(&scope, XP_API_##name, (uint64_t)(uintptr_t)(handle), (int)rc))

#define XP_PROFILER_AT(vers, name, params, args, start)                                 \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 xp_record_profiler(&scope, XP_API_##name, (start), (int)rc))

/* `after` keeps the engine's view of the thread right (the current
 * device), so it runs whether or not the call is recorded. */
#define XP_CALL_AT(vers, name, params, args, arg0, after)                               \
    XP_HOOK_BODY(vers, name, params, args, if (rc == cudaSuccess) after,                \
                 xp_record_call(&scope, XP_API_##name, (arg0), (int)rc))

#define XP_GRAPH_AT(vers, name, params, args, op, a, b, c)                              \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 xp_record_graph_op(&scope, XP_API_##name, (op), (uint64_t)(uintptr_t)(a), \
                                    (uint64_t)(uintptr_t)(b), (uint64_t)(uintptr_t)(c),  \
                                    (int)rc))

#define XP_GNODE_COPY1D_AT(vers, name, params, args, target, owner, node, dst, src, count, \
                           kind)                                                        \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_gnode_1d(&scope, XP_API_##name, (target), (uint64_t)(uintptr_t)(owner), \
                               (uint64_t)(uintptr_t)(node), (dst), (src), (count),      \
                               (int)(kind), rc))

#define XP_GNODE_COPY3D_AT(vers, name, params, args, target, owner, node, desc)         \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_gnode_3d(&scope, XP_API_##name, hook_version, (target),           \
                               (uint64_t)(uintptr_t)(owner), (uint64_t)(uintptr_t)(node), \
                               (desc), rc))

#define XP_GNODE_SYMBOL_AT(vers, name, to_symbol, params, args, target, owner, node, symbol, \
                           mem, count, offset, kind)                                    \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_gnode_symbol(&scope, XP_API_##name, hook_version, (to_symbol),    \
                                   (target), (uint64_t)(uintptr_t)(owner),              \
                                   (uint64_t)(uintptr_t)(node), (symbol), (mem), (count), \
                                   (offset), (int)(kind), rc))

#define XP_GNODE_MEMSET_AT(vers, name, params, args, target, owner, node, desc)         \
    XP_HOOK_BODY(vers, name, params, args, (void)0,                                     \
                 hook_gnode_memset(&scope, XP_API_##name, (target),                     \
                                   (uint64_t)(uintptr_t)(owner), (uint64_t)(uintptr_t)(node), \
                                   (desc), rc))

/* Most entries are the same at every version. */
#define XP_COPY(...) XP_COPY_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_COPY2D(...) XP_COPY2D_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_PEER(...) XP_PEER_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_COPY3D(...) XP_COPY3D_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_ARRAY_COPY(...) XP_ARRAY_COPY_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_BATCH(...) XP_BATCH_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_PREFETCH(...) XP_PREFETCH_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_SYMBOL(...) XP_SYMBOL_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_MEMSET(...) XP_MEMSET_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_LAUNCH(...) XP_LAUNCH_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_ALLOC(...) XP_ALLOC_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_REGISTER(...) XP_REGISTER_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_FREE(...) XP_FREE_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_SYNC(...) XP_SYNC_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_CALL(...) XP_CALL_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_PROFILER(...) XP_PROFILER_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_GRAPH(...) XP_GRAPH_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_GNODE_COPY1D(...) XP_GNODE_COPY1D_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_GNODE_COPY3D(...) XP_GNODE_COPY3D_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_GNODE_SYMBOL(...) XP_GNODE_SYMBOL_AT(XP_ALL_VERSIONS, __VA_ARGS__)
#define XP_GNODE_MEMSET(...) XP_GNODE_MEMSET_AT(XP_ALL_VERSIONS, __VA_ARGS__)

#include "xp_runtime_hooks.def"
