/* xp_nvtx_hooks.c: NVTX's injection entry point.  A program's first NVTX
 * call (the NVTX3 header-only API, or libnvToolsExt) dlopens the library
 * NVTX_INJECTION64_PATH names, which `xferprof run` sets to this preload,
 * and calls its InitializeInjectionNvtx2; that fills NVTX's function tables
 * with the handlers below.  Callbacks not handled stay NVTX's no-ops.  How:
 * docs/interposition.md. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* Types and callback ids only: NVTX's implementation is the program's. */
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>

#include "xp_format.h"
#include "xp_nvtx.h"

/* ---- messages ------------------------------------------------------------
 * A name is the interned hash of the message (cut to XP_NVTX_NAME_MAX
 * bytes); 0, no name, for a NULL message or one of a type not known here.
 * The string and domain handles this library hands out are name hashes
 * themselves: nothing to allocate, nothing to look up. */

static uint64_t name_ascii(const char *s)
{
    return s != NULL ? xp_nvtx_intern(s, xp_nvtx_cut(s)) : 0;
}

static uint64_t name_wide(const wchar_t *w)
{
    if (w == NULL)
        return 0;
    char buf[XP_NVTX_NAME_MAX];
    return xp_nvtx_intern(buf, xp_nvtx_from_wide(w, buf, sizeof buf));
}

static uint64_t name_attr(const nvtxEventAttributes_t *a)
{
    /* size: how much of the structure the program filled in. */
    if (a == NULL || a->size < offsetof(nvtxEventAttributes_t, message) + sizeof a->message)
        return 0;
    switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: return name_ascii(a->message.ascii);
    case NVTX_MESSAGE_TYPE_UNICODE: return name_wide(a->message.unicode);
    case NVTX_MESSAGE_TYPE_REGISTERED: return (uint64_t)(uintptr_t)a->message.registered;
    default: return 0;
    }
}

static uint64_t domain_of(nvtxDomainHandle_t d)
{
    return (uint64_t)(uintptr_t)d;   /* NULL: the default domain, 0 */
}

/* ---- handlers: NVTX's semantics, the program's errno untouched ------------ */

#define XP_KEEP_ERRNO(type, expr)                                              \
    do {                                                                       \
        int saved_ = errno;                                                    \
        type r_ = (expr);                                                      \
        errno = saved_;                                                        \
        return r_;                                                             \
    } while (0)

static int push_a(const char *m) { XP_KEEP_ERRNO(int, xp_nvtx_push(0, name_ascii(m))); }
static int push_w(const wchar_t *m) { XP_KEEP_ERRNO(int, xp_nvtx_push(0, name_wide(m))); }
static int push_ex(const nvtxEventAttributes_t *a)
{
    XP_KEEP_ERRNO(int, xp_nvtx_push(0, name_attr(a)));
}
static int pop(void) { XP_KEEP_ERRNO(int, xp_nvtx_pop(0)); }
static nvtxRangeId_t start_a(const char *m)
{
    XP_KEEP_ERRNO(nvtxRangeId_t, xp_nvtx_start(0, name_ascii(m)));
}
static nvtxRangeId_t start_w(const wchar_t *m)
{
    XP_KEEP_ERRNO(nvtxRangeId_t, xp_nvtx_start(0, name_wide(m)));
}
static nvtxRangeId_t start_ex(const nvtxEventAttributes_t *a)
{
    XP_KEEP_ERRNO(nvtxRangeId_t, xp_nvtx_start(0, name_attr(a)));
}
static void end(nvtxRangeId_t id)
{
    int saved = errno;
    xp_nvtx_end(0, id);
    errno = saved;
}
static int domain_push_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    XP_KEEP_ERRNO(int, xp_nvtx_push(domain_of(d), name_attr(a)));
}
static int domain_pop(nvtxDomainHandle_t d) { XP_KEEP_ERRNO(int, xp_nvtx_pop(domain_of(d))); }
static nvtxRangeId_t domain_start_ex(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
    XP_KEEP_ERRNO(nvtxRangeId_t, xp_nvtx_start(domain_of(d), name_attr(a)));
}
static void domain_end(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
    int saved = errno;
    xp_nvtx_end(domain_of(d), id);
    errno = saved;
}
static nvtxDomainHandle_t domain_create_a(const char *name)
{
    XP_KEEP_ERRNO(nvtxDomainHandle_t, (nvtxDomainHandle_t)(uintptr_t)name_ascii(name));
}
static nvtxDomainHandle_t domain_create_w(const wchar_t *name)
{
    XP_KEEP_ERRNO(nvtxDomainHandle_t, (nvtxDomainHandle_t)(uintptr_t)name_wide(name));
}
static nvtxStringHandle_t register_a(nvtxDomainHandle_t d, const char *s)
{
    (void)d;
    XP_KEEP_ERRNO(nvtxStringHandle_t, (nvtxStringHandle_t)(uintptr_t)name_ascii(s));
}
static nvtxStringHandle_t register_w(nvtxDomainHandle_t d, const wchar_t *s)
{
    (void)d;
    XP_KEEP_ERRNO(nvtxStringHandle_t, (nvtxStringHandle_t)(uintptr_t)name_wide(s));
}

/* ---- installing them ------------------------------------------------------- */

/* module, callback id (NvtxCallbackIdCore / NvtxCallbackIdCore2), handler */
#define XP_NVTX_HANDLERS(X)                                                    \
    X(CORE, RangePushA, push_a)                                                \
    X(CORE, RangePushW, push_w)                                                \
    X(CORE, RangePushEx, push_ex)                                              \
    X(CORE, RangePop, pop)                                                     \
    X(CORE, RangeStartA, start_a)                                              \
    X(CORE, RangeStartW, start_w)                                              \
    X(CORE, RangeStartEx, start_ex)                                            \
    X(CORE, RangeEnd, end)                                                     \
    X(CORE2, DomainRangePushEx, domain_push_ex)                                \
    X(CORE2, DomainRangePop, domain_pop)                                       \
    X(CORE2, DomainRangeStartEx, domain_start_ex)                              \
    X(CORE2, DomainRangeEnd, domain_end)                                       \
    X(CORE2, DomainCreateA, domain_create_a)                                   \
    X(CORE2, DomainCreateW, domain_create_w)                                   \
    X(CORE2, DomainRegisterStringA, register_a)                                \
    X(CORE2, DomainRegisterStringW, register_w)

static const struct {
    NvtxCallbackModule module;
    unsigned id;
    NvtxFunctionPointer fn;
} handlers[] = {
#define XP_NVTX_ENTRY(mod, name, fn)                                           \
    {NVTX_CB_MODULE_##mod, NVTX_CBID_##mod##_##name, (NvtxFunctionPointer)(void (*)(void))fn},
    XP_NVTX_HANDLERS(XP_NVTX_ENTRY)
#undef XP_NVTX_ENTRY
};

/* Fills module's slots from handlers; false if NVTX has no such table. */
static int install(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module)
{
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb->GetModuleFunctionTable(module, &table, &size) || table == NULL)
        return 0;
    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        if (handlers[i].module == module && handlers[i].id <= size && table[handlers[i].id])
            *table[handlers[i].id] = handlers[i].fn;
    return 1;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get);

/* Returns 1 (NVTX then uses the handlers) or 0 (NVTX falls back to no-ops
 * and unloads nothing of ours: we are preloaded). */
__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
    int saved = errno;
    const NvtxExportTableCallbacks *cb =
        get != NULL ? (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS) : NULL;
    int ok = cb != NULL && cb->struct_size >= sizeof *cb && cb->GetModuleFunctionTable != NULL &&
             install(cb, NVTX_CB_MODULE_CORE);
    if (ok) {
        install(cb, NVTX_CB_MODULE_CORE2);   /* domains: an older NVTX may lack them */
        xp_nvtx_injected();
    }
    errno = saved;
    return ok;
}
