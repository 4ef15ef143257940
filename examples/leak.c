/* leak.c: two kinds of device memory left allocated at exit.  A growing
 * leak: every step caches one more activation buffer and never frees it, so
 * memory rises until the device runs out.  And a one-time workspace held to
 * exit, which is harmless but shows in the live-at-exit total.
 *
 * xferprof report should say:
 *   leak (warning, kind growing) at cache_activation: STEPS allocations,
 *     STEPS * ACT_BYTES bytes live at exit (20 x 1 MiB = 20971520);
 *   leak (info, kind held-to-exit) at alloc_workspace: 1 allocation,
 *     WORKSPACE_BYTES bytes (8 MiB = 8388608);
 *   alloc-churn (warning) at alloc_scratch: no leak (freed every step), but
 *     STEPS cudaMalloc/cudaFree cycles of the same scratch buffer, each
 *     cudaFree a wait for the whole device (20 x 256 KiB = 5242880).
 * The steps take STEP_US each so that the growing allocations span most of
 * the run, as a real training loop's would. */
#include "example_util.h"

#include <time.h>

#define STEPS 20
#define ACT_BYTES (1u << 20)
#define SCRATCH_BYTES (256u << 10)
#define WORKSPACE_BYTES (8u << 20)
#define STEP_US 20000 /* 0.4 s of steps: far more than start-up and teardown, even on a busy machine */

static EX_SITE void *alloc_workspace(void)
{
    void *p;
    CHECK(cudaMalloc(&p, WORKSPACE_BYTES));
    return p;
}

static EX_SITE void *cache_activation(void)
{
    void *p;
    CHECK(cudaMalloc(&p, ACT_BYTES));
    return p;
}

static EX_SITE void *alloc_scratch(void)
{
    void *p;
    CHECK(cudaMalloc(&p, SCRATCH_BYTES));
    return p;
}

int main(void)
{
    ex_kernel k;
    ex_kernel_init(&k);
    void *workspace = alloc_workspace();
    void *cached[STEPS];
    for (int step = 0; step < STEPS; step++) {
        void *scratch = alloc_scratch();
        cached[step] = cache_activation(); /* kept "for later", never freed */
        ex_kernel_launch(&k, 0);
        CHECK(cudaDeviceSynchronize());
        struct timespec t = {0, STEP_US * 1000L};
        nanosleep(&t, NULL); /* the rest of the step's work */
        CHECK(cudaFree(scratch));
    }
    printf("workspace %p, last cached %p\n", workspace, cached[STEPS - 1]);
    ex_kernel_fini(&k);
    ex_expect("leak", "cache_activation", STEPS, (long long)STEPS * ACT_BYTES,
              " kind=growing live_count=20");
    ex_expect("leak", "alloc_workspace", 1, WORKSPACE_BYTES, " kind=held-to-exit live_count=1");
    ex_expect("alloc-churn", "alloc_scratch", STEPS, (long long)STEPS * SCRATCH_BYTES,
              " cycles=20 peak_live=1 memory=device");
    return 0;
}
