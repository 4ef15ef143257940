/* xp_torch_hooks.c: PyTorch's caching allocator, block by block.  The
 * allocator takes segments from CUDA (cudaMalloc, recorded as allocations)
 * and hands out blocks of them to tensors, which CUDA never sees; for
 * profilers it reports each block it hands out or takes back through
 * c10::reportMemoryUsageToProfiler, a function libc10.so exports and
 * libc10_cuda.so calls through its PLT.  The preload defines the same
 * symbol, so that call reaches it first: it forwards to libc10's own
 * definition (the program's profilers see what they saw) and records the
 * block with the calling thread's stack, whose Python frames name the
 * line that made the tensor.  How, and what it depends on:
 * docs/interposition.md. */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "xp_driver_hooks.h"
#include "xp_engine.h"

/* c10::Device: a DeviceType and a DeviceIndex, one byte each, passed by
 * value in one register (trivially copyable, two bytes). */
typedef struct xp_c10_device {
    int8_t type;
    int8_t index;
} xp_c10_device;
_Static_assert(sizeof(xp_c10_device) == 2, "c10::Device is two bytes");
#define XP_C10_DEVICE_CUDA 1   /* c10::DeviceType::CUDA */

/* void c10::reportMemoryUsageToProfiler(void *ptr, int64_t alloc_size,
 *     size_t total_allocated, size_t total_reserved, c10::Device device)
 * since PyTorch 1.10: alloc_size the block's size, negative when the block
 * is taken back; the totals the allocator's after the event.  (Older
 * PyTorch had another signature, hence another mangled name: not hooked.) */
#define XP_C10_REPORT "_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE"
typedef void report_fn(void *ptr, int64_t alloc_size, size_t total_allocated,
                       size_t total_reserved, xp_c10_device device);

/* Written once, by whichever thread resolves it first (the same answer). */
static _Atomic(report_fn *) real_report;

/* libc10's definition, looked up from the caller's library: torch's
 * libraries are loaded with RTLD_LOCAL (Python's default for extension
 * modules), so RTLD_NEXT, which searches the global scope, does not find
 * it; a lookup in the caller's own handle searches the caller and its
 * dependencies (libc10.so among them), never the preload. */
static report_fn *resolve(const void *caller)
{
    report_fn *fn = atomic_load_explicit(&real_report, memory_order_acquire);
    if (fn != NULL)
        return fn;
    Dl_info info;
    if (dladdr(caller, &info) != 0 && info.dli_fname != NULL) {
        void *h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
        if (h != NULL) {
            fn = (report_fn *)xp_real_dlsym(h, XP_C10_REPORT);
            dlclose(h);   /* NOLOAD took a reference of a library that stays loaded */
        }
    }
    if (fn == NULL)
        fn = (report_fn *)xp_real_dlsym(RTLD_NEXT, XP_C10_REPORT);
    if (fn != NULL) {
        atomic_store_explicit(&real_report, fn, memory_order_release);
    } else {
        static atomic_flag said = ATOMIC_FLAG_INIT;
        static const char line[] = "xferprof: " XP_C10_REPORT
                                   ": libc10's definition not found; PyTorch's memory reports "
                                   "to its own profilers are not passed on\n";
        if (!atomic_flag_test_and_set(&said))
            xp_write_stderr(line, sizeof line - 1);
    }
    return fn;
}

__attribute__((visibility("default"))) void
_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE(void *ptr, int64_t alloc_size,
                                                      size_t total_allocated,
                                                      size_t total_reserved, xp_c10_device device);
__attribute__((visibility("default"))) void
_ZN3c1027reportMemoryUsageToProfilerEPvlmmNS_6DeviceE(void *ptr, int64_t alloc_size,
                                                      size_t total_allocated,
                                                      size_t total_reserved, xp_c10_device device)
{
    report_fn *real = resolve(__builtin_return_address(0));
    /* The CPU allocator reports through the same function: only CUDA
     * blocks are device memory. */
    if (device.type != XP_C10_DEVICE_CUDA || alloc_size == 0 || ptr == NULL) {
        if (real != NULL)
            real(ptr, alloc_size, total_allocated, total_reserved, device);
        return;
    }
    xp_scope scope;
    scope.site.ret = (uintptr_t)__builtin_return_address(0);
    scope.site.sp = (uintptr_t)&scope;
    xp_scope_enter(&scope, (uintptr_t)real);
    if (real != NULL)
        real(ptr, alloc_size, total_allocated, total_reserved, device);
    int saved_errno = errno;
    if (xp_scope_returned(&scope)) {
        /* alloc_size is the block's size, negated when it is taken back
         * (INT64_MIN cannot be a size). */
        uint64_t bytes = alloc_size > 0 ? (uint64_t)alloc_size : -(uint64_t)alloc_size;
        xp_record_block(&scope, XP_BLOCKS_PYTORCH, alloc_size > 0, (uint64_t)(uintptr_t)ptr,
                        bytes, total_allocated, total_reserved, device.index);
    }
    errno = saved_errno;
    xp_scope_leave(&scope);
}
