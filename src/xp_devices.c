/* xp_devices.c: the facts that tell which physical GPU a process used, as
 * meta: its CUDA_VISIBLE_DEVICES and LOCAL_RANK, and the UUID of each device
 * ordinal it allocated or copied on (docs/schema.md, meta). */
#include "xp_devices.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include "xp_config.h"
#include "xp_engine.h"

/* One bit per ordinal below 64 whose UUID has been asked for.  Set by
 * whichever thread first records a call on that ordinal; cleared in a
 * forked child, whose database starts empty. */
_Atomic uint64_t xp_devices_asked;

static void forget_after_fork(void)
{
    atomic_store_explicit(&xp_devices_asked, 0, memory_order_relaxed);
}

__attribute__((constructor)) static void xp_devices_load(void)
{
    pthread_atfork(NULL, NULL, forget_after_fork);
}

void xp_devices_start_meta(xp_journal *j, uint32_t tid)
{
    /* Read at the first CUDA call, which starts the session: that is when
     * CUDA reads it too (cuInit), after a script set os.environ. Recorded
     * as it is, even empty (no device visible), absent when unset. */
    const char *visible = secure_getenv("CUDA_VISIBLE_DEVICES");
    if (visible)
        xp_journal_put_meta(j, tid, "cuda_visible_devices", visible);
    const char *local = xp_config_local_rank();
    if (local)
        xp_journal_put_meta(j, tid, "local_rank", local);
}

typedef CUresult (*xp_uuid_fn)(CUuuid *, CUdevice);

/* Asked once per ordinal, at the first recorded call on it, rather than at
 * exit or ingest: that call succeeded, so the program has initialised CUDA
 * itself (we never do it first); at exit the runtime may be torn down, and a
 * process killed with SIGKILL has no exit.  The cost is one driver query
 * per device per process.  The driver's own function, found where the
 * runtime loaded it, is called: never the runtime (whose last-error state
 * is the program's) and never a hook.  cuDeviceGetUuid needs no context
 * and leaves the sticky error state alone (tests/sim/test_symbols.cu). */
static void ask_uuid(int device)
{
    void *sym = xp_driver_symbol("cuDeviceGetUuid_v2");
    if (sym == NULL)
        sym = xp_driver_symbol("cuDeviceGetUuid");
    if (sym == NULL)
        return;
    xp_uuid_fn fn;
    memcpy(&fn, &sym, sizeof fn);
    CUuuid u;
    xp_guard g = xp_guard_enter((uintptr_t)fn);
    CUresult rc = fn(&u, (CUdevice)device);
    xp_guard_leave(g);
    if (rc != CUDA_SUCCESS)
        return;
    const unsigned char *b = (const unsigned char *)u.bytes;
    char key[32], text[48];
    snprintf(key, sizeof key, "device_uuid.%d", device);
    /* As nvidia-smi -L and CUDA_VISIBLE_DEVICES write it. */
    snprintf(text, sizeof text,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
             b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
    xp_engine_meta(key, text);
}

void xp_devices_first_use(int device)
{
    uint64_t bit = 1ull << device;
    if (atomic_fetch_or_explicit(&xp_devices_asked, bit, memory_order_relaxed) & bit)
        return;
    ask_uuid(device);
}
