/* test_rules_memory.c: the memory rules over hand-built models (leak, invalid-free,
 * fragmentation, oom): what each finds and what none may. */
#include "rules_fixture.h"

/* ---- leak ---- */

static void test_leak_growing_and_held(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[20];
    size_t n = 0;
    /* Site 1: one allocation every 100 ms, none freed: growing. */
    for (size_t i = 0; i < 10; i++)
        a[n++] = alloc(0x10000 * (i + 1), MiB, (int64_t)i * 100 * MS, -1, 1);
    /* Site 2: three buffers at start-up, held: held-to-exit. */
    for (size_t i = 0; i < 3; i++)
        a[n++] = alloc(0x1000000 + 0x10000 * i, 2 * MiB, (int64_t)i, -1, 2);
    /* Site 3: two allocations only, across the run: held-to-exit. */
    a[n++] = alloc(0x3000000, 100, 0, -1, 3);
    a[n++] = alloc(0x3001000, 100, 900 * MS, -1, 3);
    /* Site 4: freed: nothing. */
    a[n++] = alloc(0x4000000, 100, 0, 5 * MS, 4);
    a[n - 1].kind = XP_AK_PINNED;
    p.allocs = a;
    p.n_allocs = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "leak"), 3);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_string_equal(text(f, "kind"), "growing");
    assert_int_equal(f->count, 10);
    assert_int_equal(num(f, "live_count"), 10);
    assert_int_equal(f->bytes, 10 * MiB);
    assert_int_equal(num(f, "rising_windows"), 8);
    assert_int_equal(num(f, "windows"), 8);
    assert_int_equal(num(f, "run_ns"), 1000 * MS);
    assert_string_equal(text(f, "memory"), "device");
    assert_string_equal(text(f, "api"), "cudaMalloc");
    f = at_site(&r, 2);
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_string_equal(text(f, "kind"), "held-to-exit");
    assert_int_equal(f->count, 3);
    assert_int_equal(f->bytes, 6 * MiB);
    f = at_site(&r, 3);
    assert_string_equal(text(f, "kind"), "held-to-exit");
    assert_int_equal(num(f, "rising_windows"), 2);
    /* Two rises in eight windows are growth only when asked for a quarter,
     * and two live allocations only once the minimum is two. */
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "leak.growing_fraction=0.25", err, sizeof err), 0);
    run(&r, "leak");
    assert_string_equal(text(at_site(&r, 3), "kind"), "held-to-exit");
    assert_int_equal(xp_thresholds_set(&r.th, "leak.min_count=2", err, sizeof err), 0);
    run(&r, "leak");
    assert_string_equal(text(at_site(&r, 3), "kind"), "growing");
    report_free(&r);
    (void)state;
}

/* Caches: live bytes that rose once and stayed flat are not growth, however
 * far apart the allocations lie. */
static void test_leak_bounded_cache_is_not_growing(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[96];
    size_t n = 0;
    /* Site 1: a cache that fills in the first 100 ms, then one more entry at
     * 900 ms (an evaluation pass); none freed.  Its allocations span 90% of
     * the run and it holds more at exit than at the middle, yet it rose in
     * two windows of eight. */
    for (size_t i = 0; i < 10; i++)
        a[n++] = alloc(0x100000 * (i + 1), MiB, (int64_t)i * 10 * MS, -1, 1);
    a[n++] = alloc(0x2000000, MiB, 900 * MS, -1, 1);
    /* Site 2: an LRU cache of 4 entries replacing its oldest every 50 ms:
     * as many live at exit as all along. */
    for (size_t i = 0; i < 20; i++)
        a[n++] = alloc(0x4000000 + 0x10000 * i, MiB, (int64_t)i * 50 * MS,
                       i + 4 < 20 ? (int64_t)(i + 4) * 50 * MS : -1, 2);
    /* Site 3: fills over the first half, then flat: rose in four windows,
     * not in the last quarter. */
    for (size_t i = 0; i < 5; i++)
        a[n++] = alloc(0x8000000 + 0x10000 * i, MiB, (int64_t)i * 100 * MS + 50 * MS, -1, 3);
    /* Site 4: pinned blocks taken as a loader got ahead, 15 over the first
     * fifth, then one at 610 ms and one at 900 ms: rising in four windows
     * and in the last quarter, but the second half added 2 where the first
     * added 15: a cache that warmed up, not a leak keeping its pace. */
    for (size_t i = 0; i < 15; i++)
        a[n++] = alloc(0x9000000 + 0x10000 * i, MiB, (int64_t)(i / 5) * 100 * MS + 20 * MS, -1, 4);
    a[n++] = alloc(0x9f00000, MiB, 610 * MS, -1, 4);
    a[n++] = alloc(0x9f80000, MiB, 900 * MS, -1, 4);
    p.allocs = a;
    p.n_allocs = n;
    p.end_mono_ns = 1000 * MS;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "leak"), 4);
    for (uint32_t site = 1; site <= 4; site++)
        assert_string_equal(text(at_site(&r, site), "kind"), "held-to-exit");
    assert_int_equal(num(at_site(&r, 1), "rising_windows"), 2);
    assert_int_equal(num(at_site(&r, 2), "rising_windows"), 2); /* filling up */
    assert_int_equal(num(at_site(&r, 3), "rising_windows"), 4);
    assert_int_equal(num(at_site(&r, 4), "rising_windows"), 4);
    /* The same cache, leaking one more entry every 50 ms from the middle on:
     * rising in the last four windows and at the end: growing. */
    for (size_t i = 0; i < 10; i++)
        a[n++] = alloc(0xa000000 + 0x10000 * i, MiB, 500 * MS + (int64_t)i * 50 * MS, -1, 3);
    p.n_allocs = n;
    run(&r, "leak");
    assert_string_equal(text(at_site(&r, 3), "kind"), "growing");
    report_free(&r);
    (void)state;
}

/* Segments of a caching allocator held to exit are said to be that, by the
 * allocator's frames or by virtual-memory mapping; growing ones still warn. */
static void test_leak_caching_allocator(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_frame torch_frames[2] = {
        {.addr = 0x10, .module = "libc10_cuda.so", .function = "_ZN3c104cuda20CUDACachingAllocator6Native5mallocEv",
         .demangled = "c10::cuda::CUDACachingAllocator::Native::malloc()"},
        {.addr = 0x20, .module = "train.py", .function = "step", .file = "train.py", .line = 40},
    };
    struct xp_frame torch_frames2[2] = {torch_frames[0],
        {.addr = 0x28, .module = "train.py", .function = "evaluate", .file = "train.py", .line = 77}};
    struct xp_frame user_frame = {.addr = 0x30, .module = "app", .function = "main", .file = "app.c", .line = 9};
    /* .pin_memory(): a pinned host block from PyTorch's pinned-memory cache. */
    struct xp_frame pin_frames[2] = {
        {.addr = 0x40, .module = "libtorch_cuda.so",
         .function = "_ZN2at4cuda12_GLOBAL__N_124CUDACachingHostAllocator8allocateEm"},
        {.addr = 0x48, .module = "train.py", .function = "loader", .file = "train.py", .line = 12}};
    struct xp_stack stacks[5] = {{.id = 1, .nframes = 2, .frames = torch_frames},
                                 {.id = 2, .nframes = 1, .frames = &user_frame},
                                 {.id = 3, .nframes = 1, .frames = &user_frame},
                                 {.id = 6, .nframes = 2, .frames = torch_frames2},
                                 {.id = 7, .nframes = 2, .frames = pin_frames}};
    p.stacks = stacks;
    p.n_stacks = 5;
    struct xp_alloc a[48];
    size_t n = 0;
    /* PyTorch's segments: 2 MiB and 20 MiB ones in the first steps, then flat. */
    for (size_t i = 0; i < 6; i++)
        a[n++] = alloc(0x10000000 + 0x2000000 * i, i % 2 ? 2 * MiB : 20 * MiB, (int64_t)i * 20 * MS, -1, 1);
    a[n++] = alloc(0x30000000, 20 * MiB, 950 * MS, -1, 1); /* an evaluation pass at the end */
    /* The pool ran short at another line too: the same allocator, one finding. */
    a[n++] = alloc(0x38000000, 2 * MiB, 500 * MS, -1, 6);
    /* Expandable segments: physical memory (site 2) mapped (site 4) into a
     * reserved range (site 5); only the physical memory is held. */
    a[n] = alloc(0x40000000, 1024 * MiB, 0, -1, 5);
    a[n++].kind = XP_AK_RESERVED;
    for (size_t i = 0; i < 3; i++) {
        a[n] = alloc(0x70000000 + 0x2000000 * i, 20 * MiB, (int64_t)i * 30 * MS, -1, 2);
        a[n++].kind = XP_AK_PHYSICAL;
        a[n] = alloc(0x40000000 + 0x2000000 * i, 20 * MiB, (int64_t)i * 30 * MS, -1, 4);
        a[n++].kind = XP_AK_MAPPED;
    }
    /* A plain cudaMalloc held to exit. */
    a[n++] = alloc(0x50000000, MiB, 0, -1, 3);
    /* Four pinned blocks, taken as the loader got ahead early on. */
    for (size_t i = 0; i < 4; i++) {
        a[n] = alloc(0x7f0000000000 + MiB * i, MiB, (int64_t)i * 10 * MS, -1, 7);
        a[n++].kind = XP_AK_PINNED;
    }
    p.allocs = a;
    p.n_allocs = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "leak"), 4);
    assert_string_equal(text(at_site(&r, 7), "allocator"), "PyTorch's pinned-memory cache");
    assert_string_equal(text(at_site(&r, 7), "kind"), "caching-allocator");
    assert_int_equal(at_site(&r, 7)->count, 4);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_string_equal(text(f, "kind"), "caching-allocator");
    assert_string_equal(text(f, "allocator"), "PyTorch's caching allocator");
    assert_non_null(strstr(f->message, "not a leak"));
    assert_int_equal(f->count, 8);              /* both sites' segments */
    assert_int_equal(num(f, "sites"), 2);
    for (size_t i = 0; i < r.n_findings; i++)
        assert_int_not_equal(r.findings[i].stack_id, 6);
    f = at_site(&r, 2);
    assert_string_equal(text(f, "kind"), "caching-allocator");
    assert_non_null(strstr(text(f, "allocator"), "expandable segments"));
    assert_int_equal(f->bytes, 60 * MiB);
    f = at_site(&r, 3);
    assert_string_equal(text(f, "kind"), "held-to-exit");
    assert_null(fact(f, "allocator"));
    /* Segments added in every part of the run: tensors kept alive. */
    for (size_t i = 0; i < 10; i++)
        a[n++] = alloc(0x60000000 + 0x2000000 * i, 2 * MiB, 100 * MS + (int64_t)i * 100 * MS, -1, 1);
    p.n_allocs = n;
    run(&r, "leak");
    f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_string_equal(text(f, "kind"), "growing");
    assert_string_equal(text(f, "allocator"), "PyTorch's caching allocator");
    assert_non_null(strstr(f->message, "where the allocator's pool ran short"));
    report_free(&r);
    (void)state;
}

/* PyTorch's blocks recorded (block_rows): the tensors a line keeps are the
 * leak, at that line; the segments the pool grew by are the cache, whatever
 * their curve; tensors held flat to the end (the model) and tensors made
 * and dropped every step are nothing; blocks the interpreter's teardown
 * returned after the program's last work were held to the end. */
static void test_leak_pytorch_blocks(void **state)
{
    struct xp_process p;
    proc_init(&p);   /* the program's last CUDA event: 1000 ms */
    struct xp_frame torch_frame = {.addr = 0x10, .module = "libc10_cuda.so",
                                   .function = "_ZN3c104cuda20CUDACachingAllocator6Native5mallocEv",
                                   .demangled = "c10::cuda::CUDACachingAllocator::Native::malloc()"};
    struct xp_stack stacks[1] = {{.id = 1, .nframes = 1, .frames = &torch_frame}};
    p.stacks = stacks;
    p.n_stacks = 1;
    /* Segments taken in every part of the run: growing, without the blocks. */
    struct xp_alloc a[10];
    for (size_t i = 0; i < 10; i++)
        a[i] = alloc(0x60000000 + 0x200000 * i, 2 * MiB, (int64_t)i * 100 * MS, -1, 1);
    p.allocs = a;
    p.n_allocs = 10;
    struct xp_alloc b[200];
    size_t n = 0;
    b[n++] = alloc(0x60000000, 512 * 1024, 0, -1, 10);   /* the model: held, flat */
    for (size_t i = 0; i < 20; i++) {
        int64_t t = 10 * MS + (int64_t)i * 49 * MS;
        /* A step's activations, dropped at the step's end. */
        b[n++] = alloc(0x60080000 + 0x40000 * (i % 2), 256 * 1024, t, t + 20 * MS, 11);
        /* The output it keeps: returned only by the teardown, after 1000 ms. */
        b[n++] = alloc(0x60100000 + 0x40000 * i, 256 * 1024, t + 5 * MS, 1200 * MS, 12);
    }
    p.blocks = b;
    p.n_blocks = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "leak"), 2);
    const struct xp_finding *f = at_site(&r, 12);
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_string_equal(text(f, "kind"), "growing");
    assert_string_equal(text(f, "allocator"), "PyTorch's caching allocator");
    assert_int_equal(f->count, 20);
    assert_int_equal(f->bytes, 20 * 256 * 1024);
    assert_null(f->fix_pytorch);
    assert_non_null(strstr(f->fix, ".detach()"));
    f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_string_equal(text(f, "kind"), "caching-allocator");
    assert_non_null(strstr(f->message, "grew with the tensors the program kept"));
    for (size_t i = 0; i < r.n_findings; i++)
        assert_true(r.findings[i].stack_id != 10 && r.findings[i].stack_id != 11);
    /* The program let go of its outputs itself before its last work: no
     * longer growing at the end. */
    for (size_t i = 0; i < n; i++)
        if (b[i].alloc_stack == 12)
            b[i].free_ns = 990 * MS;
    assert_int_equal(run(&r, "leak"), 1);
    assert_int_equal(r.findings[0].stack_id, 1);
    /* A script that spends most of its time setting up (the model on the
     * GPU at once, then the optimizer, the data) before a short loop that
     * keeps its losses: the parts of the run are the allocator's events,
     * not equal times, and the loop is most of them. */
    n = 0;
    for (size_t i = 0; i < 10; i++)
        b[n++] = alloc(0x70000000 + 0x100000 * i, MiB, (int64_t)i * MS, -1, 10);
    for (size_t i = 0; i < 25; i++) {
        int64_t t = 900 * MS + (int64_t)i * 4 * MS;
        b[n++] = alloc(0x70a00000 + 0x1000 * (i % 2), 4096, t, t + 2 * MS, 11);
        b[n++] = alloc(0x70b00000 + 0x200 * i, 512, t + MS, 1200 * MS, 12);
    }
    /* And a list of 100 tensors made in one comprehension at the end, held:
     * a burst, one turn of the allocator's events, not growth. */
    for (size_t i = 0; i < 100; i++)
        b[n++] = alloc(0x70c00000 + 0x200 * i, 512, 1000 * MS + (int64_t)i * 1000, -1, 13);
    p.n_blocks = n;
    p.end_mono_ns = 1001 * MS;
    assert_int_equal(run(&r, "leak"), 2);
    assert_string_equal(text(at_site(&r, 12), "kind"), "growing");
    assert_int_equal(at_site(&r, 12)->count, 25);
    for (size_t i = 0; i < r.n_findings; i++)
        assert_int_not_equal(r.findings[i].stack_id, 13);
    p.end_mono_ns = 1000 * MS;
    /* Without blocks the segments are all there is to show. */
    p.n_blocks = 0;
    run(&r, "leak");
    assert_string_equal(text(at_site(&r, 1), "kind"), "growing");
    report_free(&r);
    (void)state;
}

/* A pinned-memory cache whose live blocks rise through a short run: blocks
 * staging batch after batch are a cache still warming up; blocks each
 * copied once and never handed out again are tensors kept alive. */
static void test_leak_pinned_cache_reuse(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_frame pin_frames[2] = {
        {.addr = 0x40, .module = "libtorch_cuda.so",
         .function = "_ZN2at4cuda12_GLOBAL__N_124CUDACachingHostAllocator8allocateEm"},
        {.addr = 0x48, .module = "train.py", .function = "loader", .file = "train.py", .line = 12}};
    struct xp_stack stacks[1] = {{.id = 7, .nframes = 2, .frames = pin_frames}};
    p.stacks = stacks;
    p.n_stacks = 1;
    /* One more 1 MiB block every 100 ms: rising in every part of the run. */
    struct xp_alloc a[10];
    for (size_t i = 0; i < 10; i++) {
        a[i] = alloc(0x7f0000000000 + MiB * i, MiB, (int64_t)i * 100 * MS, -1, 7);
        a[i].kind = XP_AK_PINNED;
    }
    p.allocs = a;
    p.n_allocs = 10;
    p.end_mono_ns = 1000 * MS;
    /* 100 batches, one every 10 ms, each staged in one of the blocks taken
     * so far (round robin): each block stages about ten. */
    struct xp_copy c[100];
    for (size_t k = 0; k < 100; k++) {
        size_t have = k / 10 + 1;
        c[k] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, (int64_t)k * 10 * MS + MS, 100, 9);
        c[k].src = 0x7f0000000000 + MiB * (k % have) + 4096;
    }
    p.copies = c;
    p.n_copies = 100;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "leak"), 1);
    assert_string_equal(text(at_site(&r, 7), "kind"), "caching-allocator");
    /* The same blocks, each copied once when taken and then kept. */
    for (size_t k = 0; k < 10; k++)
        c[k].src = 0x7f0000000000 + MiB * k, c[k].start_ns = (int64_t)k * 100 * MS + MS;
    p.n_copies = 10;
    run(&r, "leak");
    assert_string_equal(text(at_site(&r, 7), "kind"), "growing");
    assert_int_equal(at_site(&r, 7)->severity, XP_SEV_WARNING);
    report_free(&r);
    (void)state;
}

/* ---- alloc-churn ---- */

/* Memory made and dropped every iteration from one site, throughout the
 * run, is churn; a burst at set-up, a collection that grows and shrinks,
 * stream-ordered allocations and buffers a re-upload finding already
 * covers are not. */
static void test_alloc_churn(void **state)
{
    struct xp_process p;
    proc_init(&p);
    static char *names[] = {"cudaMemcpy", "cudaMemcpyAsync", "cudaMalloc", "cudaFree",
                            "cudaMallocAsync", "cudaMallocHost"};
    p.api_names = names;
    p.n_api = 6;
    struct xp_alloc a[200];
    size_t n = 0;
    /* Site 1: a device buffer per step, 40 steps over the run. */
    for (size_t i = 0; i < 40; i++)
        a[n++] = alloc(0x10000000, MiB, (int64_t)i * 25 * MS, (int64_t)i * 25 * MS + 20 * MS, 1);
    /* Site 2: the same, pinned (cudaMallocHost). */
    for (size_t i = 0; i < 40; i++) {
        a[n] = alloc(0x7f0000000000, 4 * MiB, (int64_t)i * 25 * MS + MS, (int64_t)i * 25 * MS + 19 * MS, 2);
        a[n].kind = XP_AK_PINNED;
        a[n++].api = 5;
    }
    /* Site 3: 30 temporaries at start-up, in a burst. */
    for (size_t i = 0; i < 30; i++)
        a[n++] = alloc(0x20000000 + 0x100000 * i, 4096, (int64_t)i * MS, 40 * MS, 3);
    /* Site 4: cudaMallocAsync per step. */
    for (size_t i = 0; i < 40; i++) {
        a[n] = alloc(0x30000000, MiB, (int64_t)i * 25 * MS + 2 * MS, (int64_t)i * 25 * MS + 18 * MS, 4);
        a[n++].api = 4;
    }
    /* Site 5: a collection that fills and empties twice (up to 20 live). */
    for (size_t i = 0; i < 40; i++)
        a[n++] = alloc(0x40000000 + 0x100000 * (i % 20), 4096, (int64_t)i * 25 * MS,
                       (int64_t)(i / 20) * 500 * MS + 490 * MS, 5);
    p.allocs = a;
    p.n_allocs = n;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "alloc-churn"), 2);
    const struct xp_finding *f = at_site(&r, 1);
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_int_equal(num(f, "cycles"), 40);
    assert_int_equal(num(f, "peak_live"), 1);
    assert_int_equal(num(f, "windows"), 8);
    assert_string_equal(text(f, "memory"), "device");
    assert_non_null(strstr(f->fix_pytorch, "empty_cache"));
    f = at_site(&r, 2);
    assert_string_equal(text(f, "memory"), "pinned");
    assert_string_equal(text(f, "api"), "cudaMallocHost");
    assert_non_null(strstr(f->fix, "page-lock"));
    assert_null(f->fix_pytorch);
    /* Fewer cycles than the minimum: quiet. */
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "alloc-churn.min_count=41", err, sizeof err), 0);
    assert_int_equal(run(&r, "alloc-churn"), 0);
    xp_thresholds_default(&r.th);
    /* Site 1's buffers each filled by a copy a rule before reported (the
     * same table re-sent into a fresh buffer): that finding tells it. */
    static struct xp_copy c[40];
    for (size_t i = 0; i < 40; i++) {
        c[i] = copy(XP_DIR_H2D, XP_HM_PINNED, XP_BL_ASYNC, MiB, (int64_t)i * 25 * MS + 5 * MS, 100, 9);
        c[i].dst = 0x10000000;
        c[i].claimed = true;
    }
    p.copies = c;
    p.n_copies = 40;
    report_free(&r);   /* the claims stay: as a rule before left them */
    rule("alloc-churn")->run(&r);
    assert_int_equal(r.n_findings, 1);
    assert_int_equal(r.findings[0].stack_id, 2);
    report_free(&r);
    (void)state;
}

/* ---- invalid-free ---- */

static void test_invalid_free(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_unknown_free u[2] = {
        {.start_ns = 1, .ptr = 0xdead0000, .stack_id = 5, .api = 3, .kind = XP_AK_DEVICE},
        {.start_ns = 2, .ptr = 0xdead1000, .stack_id = 5, .api = 3, .kind = XP_AK_DEVICE},
    };
    struct xp_error e[4] = {
        {.start_ns = 3, .stack_id = 5, .api = 3, .status = 1, .record = "free", .detail = "ptr 0xbeef"},
        {.start_ns = 4, .stack_id = 6, .api = 3, .status = 1, .record = "free", .detail = NULL},
        {.start_ns = 5, .stack_id = 6, .api = 3, .status = 1, .record = "sync", .detail = "stream 0x1"},
        {.start_ns = 6, .stack_id = 6, .api = 2, .status = 2, .record = "alloc"},
    };
    p.unknown_frees = u;
    p.n_unknown_frees = 2;
    p.errors = e;
    p.n_errors = 4;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "invalid-free"), 2);
    const struct xp_finding *f = at_site(&r, 5);
    assert_int_equal(f->severity, XP_SEV_ERROR);
    assert_int_equal(f->count, 3);
    assert_int_equal(num(f, "unknown_count"), 2);
    assert_int_equal(num(f, "failed_count"), 1);
    assert_int_equal(num(f, "failed_status"), 1);
    assert_string_equal(text(f, "first"), "ptr 0xdead0000");
    assert_string_equal(text(f, "api"), "cudaFree");
    f = at_site(&r, 6);
    assert_int_equal(f->count, 1);
    assert_int_equal(num(f, "unknown_count"), 0);
    assert_string_equal(text(f, "first"), "?");
    report_free(&r);
    (void)state;
}

/* ---- fragmentation ---- */

/* Eight 16 MiB buffers side by side, every other one freed at 100 ms, then
 * a 32 MiB request at 200 ms: 64 MiB free in the span, largest hole 16 MiB. */
static size_t fragmented_heap(struct xp_alloc *a, int64_t request_at)
{
    size_t n = 0;
    for (size_t i = 0; i < 8; i++)
        a[n++] = alloc(0x100000000 + i * 16 * MiB, 16 * MiB, (int64_t)i, i % 2 ? -1 : 100 * MS, 1 + (uint32_t)i % 2);
    a[n++] = alloc(0x100000000 + 8 * 16 * MiB, 32 * MiB, request_at, -1, 7);
    return n;
}

static void test_fragmentation(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[12];
    p.allocs = a;
    p.n_allocs = fragmented_heap(a, 200 * MS);
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "fragmentation"), 1);
    const struct xp_finding *f = &r.findings[0];
    assert_int_equal(f->severity, XP_SEV_WARNING);
    assert_int_equal(f->stack_id, 7); /* the request that met the holes */
    assert_string_equal(text(f, "kind"), "address-space");
    assert_int_equal(num(f, "free_in_span_bytes"), 48 * MiB); /* the lowest buffer's space is outside the span */
    assert_int_equal(num(f, "largest_hole_bytes"), 16 * MiB);
    assert_int_equal(num(f, "live_bytes"), 64 * MiB);
    assert_int_equal(num(f, "span_bytes"), 112 * MiB);
    assert_int_equal(num(f, "request_bytes"), 32 * MiB);
    assert_string_equal(text(f, "worst_ratio"), "0.667");
    assert_int_equal(num(f, "peak_live_bytes"), 128 * MiB);
    assert_int_equal(num(f, "peak_span_bytes"), 128 * MiB);
    assert_int_equal(num(f, "peak_largest_hole_bytes"), 0);
    assert_int_equal(num(f, "worst_ns"), 200 * MS);
    assert_int_equal(f->count, 4);
    assert_int_equal(f->bytes, 48 * MiB);
    char err[200];
    assert_int_equal(xp_thresholds_set(&r.th, "fragmentation.min_free=49M", err, sizeof err), 0);
    assert_int_equal(run(&r, "fragmentation"), 0);
    xp_thresholds_default(&r.th);
    assert_int_equal(xp_thresholds_set(&r.th, "fragmentation.min_ratio=0.7", err, sizeof err), 0);
    assert_int_equal(run(&r, "fragmentation"), 0);
    report_free(&r);
    (void)state;
}

/* The same holes met by a request that failed (an out-of-memory error, not
 * an allocation): it is judged too, and is the site of the finding. */
static void test_fragmentation_failed_request(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[12];
    p.allocs = a;
    p.n_allocs = fragmented_heap(a, 200 * MS) - 1; /* no granted request after the frees */
    struct xp_error e[1] = {
        {.start_ns = 300 * MS, .stack_id = 9, .api = 2, .status = 2, .device = 0,
         .record = "alloc", .requested = 32 * MiB, .dev_free = -1, .dev_total = -1},
    };
    p.errors = e;
    p.n_errors = 1;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "fragmentation"), 1);
    const struct xp_finding *f = &r.findings[0];
    assert_int_equal(f->stack_id, 9);
    assert_int_equal(num(f, "request_bytes"), 32 * MiB);
    assert_int_equal(num(f, "free_in_span_bytes"), 48 * MiB);
    assert_int_equal(num(f, "largest_hole_bytes"), 16 * MiB);
    assert_int_equal(num(f, "worst_ns"), 300 * MS);
    /* On another device the failure meets no holes of this one. */
    e[0].device = 1;
    assert_int_equal(run(&r, "fragmentation"), 0);
    report_free(&r);
    (void)state;
}

static void test_fragmentation_negatives(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[12];
    p.allocs = a;
    /* The holes made by frees with no request after them (teardown) are not judged. */
    p.n_allocs = fragmented_heap(a, 50 * MS);
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "fragmentation"), 0);
    /* Other devices do not share an address space with each other. */
    p.n_allocs = fragmented_heap(a, 200 * MS);
    a[8].device = 1;
    assert_int_equal(run(&r, "fragmentation"), 0);
    /* Host memory is no device memory. */
    a[8].device = 0;
    for (size_t i = 0; i < p.n_allocs; i++)
        a[i].kind = XP_AK_PINNED;
    assert_int_equal(run(&r, "fragmentation"), 0);
    report_free(&r);
    (void)state;
}

static void test_caching_allocator(void **state)
{
    struct xp_process p;
    proc_init(&p);
    struct xp_alloc a[4] = {
        alloc(0x10000000, 2 * MiB, 1, -1, 1),
        alloc(0x10200000, 20 * MiB, 2, -1, 1),
        alloc(0x20000000, 512, 3, -1, 2),
        alloc(0x30000000, 64 * MiB, 4, -1, 3),
    };
    a[3].kind = XP_AK_PINNED; /* host memory does not count */
    p.allocs = a;
    p.n_allocs = 4;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "fragmentation"), 1);
    const struct xp_finding *f = &r.findings[0];
    assert_int_equal(f->severity, XP_SEV_INFO);
    assert_string_equal(text(f, "kind"), "caching-allocator");
    assert_int_equal(f->count, 2);
    assert_int_equal(f->bytes, 22 * MiB);
    assert_int_equal(f->stack_id, XP_NONE_ID);
    assert_int_equal(num(f, "device_allocations"), 3);
    assert_non_null(strstr(f->message, "cannot see"));
    /* PyTorch's blocks recorded: how much of the segments its tensors used
     * at once (two of 4 MiB together, then one of 8 MiB after they went). */
    struct xp_alloc b[3] = {
        alloc(0x10000000, 4 * MiB, 5, 20, 9),
        alloc(0x10400000, 4 * MiB, 6, 20, 9),
        alloc(0x10200000, 8 * MiB, 20, -1, 9),
    };
    p.blocks = b;
    p.n_blocks = 3;
    assert_int_equal(run(&r, "fragmentation"), 1);
    f = &r.findings[0];
    assert_string_equal(text(f, "kind"), "caching-allocator");
    assert_int_equal(num(f, "tensors_peak_bytes"), 8 * MiB);
    assert_int_equal(num(f, "never_used_bytes"), 14 * MiB);
    assert_non_null(strstr(f->message, "(64%)"));
    p.n_blocks = 0;
    /* One device free and it is no caching allocator. */
    a[2].free_ns = 10;
    assert_int_equal(run(&r, "fragmentation"), 0);
    /* Nor are small allocations alone. */
    a[2].free_ns = -1;
    a[0].bytes = a[1].bytes = 2 * MiB - 1;
    assert_int_equal(run(&r, "fragmentation"), 0);
    report_free(&r);
    (void)state;
}

/* ---- oom ---- */

static void test_oom(void **state)
{
    struct xp_process p;
    proc_init(&p);
    p.start_mono_ns = 1000;
    struct xp_alloc a[7] = {
        alloc(0x1000000, 30 * MiB, 10, -1, 1),
        alloc(0x3000000, 20 * MiB, 20, -1, 1),
        alloc(0x5000000, 50 * MiB, 30, -1, 2),
        alloc(0x9000000, 5 * MiB, 40, 60, 3),   /* freed before the failure */
        alloc(0xa000000, 1 * MiB, 45, -1, 4),
        alloc(0xb000000, 99 * MiB, 500, -1, 5), /* made after it */
        alloc(0xc000000, 99 * MiB, 45, -1, 6),  /* host memory */
    };
    a[6].kind = XP_AK_PINNED;
    struct xp_error e[4] = {
        {.start_ns = 100, .stack_id = 9, .api = 2, .status = 2, .record = "alloc", .device = 0,
         .detail = "requested 67108864 bytes; device free 104857600 of 268435456",
         .requested = 64 * MiB, .dev_free = 100 * MiB, .dev_total = 256 * MiB},
        {.start_ns = 101, .stack_id = 9, .api = 2, .status = 2, .record = "alloc", .device = 0,
         .requested = 200 * MiB, .dev_free = 100 * MiB, .dev_total = 256 * MiB},
        {.start_ns = 102, .stack_id = 8, .api = 2, .status = 2, .record = "alloc", .device = 0,
         .requested = 8 * MiB, .dev_free = -1, .dev_total = -1},
        {.start_ns = 103, .stack_id = 8, .api = 2, .status = 1, .record = "alloc", .device = 0},
    };
    p.allocs = a;
    p.n_allocs = 7;
    p.errors = e;
    p.n_errors = 4;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "oom"), 3);
    const struct xp_finding *f = &r.findings[0];
    assert_int_equal(f->severity, XP_SEV_ERROR);
    assert_int_equal(f->stack_id, 9);
    assert_int_equal(f->count, 1);
    assert_int_equal(f->bytes, 64 * MiB);
    assert_int_equal(num(f, "requested_bytes"), 64 * MiB);
    assert_int_equal(num(f, "live_bytes"), 101 * MiB);
    assert_int_equal(num(f, "live_count"), 4);
    assert_int_equal(num(f, "device_free_bytes"), 100 * MiB);
    assert_int_equal(num(f, "device_total_bytes"), 256 * MiB);
    assert_int_equal(num(f, "fragmentation"), 1);
    assert_int_equal(num(f, "at_ns"), -900);
    assert_int_equal(num(f, "top1_bytes"), 50 * MiB);
    assert_int_equal(num(f, "top1_stack_id"), 2);
    assert_string_equal(text(f, "top1_ptr"), "0x5000000");
    assert_int_equal(num(f, "top2_bytes"), 30 * MiB);
    assert_int_equal(num(f, "top3_bytes"), 20 * MiB);
    assert_int_equal(num(f, "site1_stack_id"), 1);
    assert_int_equal(num(f, "site1_bytes"), 50 * MiB);
    assert_int_equal(num(f, "site1_count"), 2);
    assert_int_equal(num(f, "site2_stack_id"), 2);
    assert_int_equal(num(f, "site3_stack_id"), 4);
    assert_int_equal(num(f, "site3_bytes"), 1 * MiB);
    assert_non_null(strstr(f->message, "fragmentation"));
    f = &r.findings[1];
    assert_int_equal(num(f, "fragmentation"), 0);
    assert_null(strstr(f->message, "fragmentation"));
    f = &r.findings[2];
    assert_int_equal(num(f, "fragmentation"), 0);
    assert_null(fact(f, "device_free_bytes"));
    assert_int_equal(num(f, "live_bytes"), 101 * MiB);
    /* Another device's memory is not what ran out. */
    e[0].device = 1;
    run(&r, "oom");
    assert_int_equal(num(&r.findings[0], "live_bytes"), 0);
    assert_null(fact(&r.findings[0], "top1_bytes"));
    report_free(&r);
    (void)state;
}

/* Many failures over a changing heap on two devices (and failures of no
 * known device): each finding agrees with a plain replay up to its time. */
static void test_oom_many_against_replay(void **state)
{
    struct xp_process p;
    proc_init(&p);
    enum { NA = 300, NE = 60 };
    static struct xp_alloc a[NA];
    static struct xp_error e[NE];
    uint64_t seed = 12345;
    for (size_t i = 0; i < NA; i++) {
        seed = seed * 6364136223846793005u + 1442695040888963407u;
        int64_t at = (int64_t)(seed >> 40) % 1000;
        int64_t life = (int64_t)(seed >> 20) % 400;
        a[i] = alloc(0x1000 * (i + 1), 1 + (seed >> 8) % 64 * MiB, at, (seed >> 60) % 3 ? at + life + 1 : -1,
                     1 + (uint32_t)(seed >> 33) % 7);
        a[i].device = (int32_t)(seed >> 50) % 2;
        if ((seed >> 55) % 11 == 0)
            a[i].kind = XP_AK_MANAGED;
    }
    for (size_t i = 0; i < NE; i++)
        e[i] = (struct xp_error){.start_ns = (int64_t)((i * 7919) % 1000), .stack_id = 1, .status = 2,
                                 .record = "alloc", .device = (int32_t)(i % 3) - 1, .requested = MiB,
                                 .dev_free = -1, .dev_total = -1};
    p.allocs = a;
    p.n_allocs = NA;
    p.errors = e;
    p.n_errors = NE;
    struct xp_report r;
    report_init(&r, &p, 1);
    assert_int_equal(run(&r, "oom"), NE);
    for (size_t i = 0; i < NE; i++) {
        const struct xp_finding *f = &r.findings[i];
        uint64_t live = 0, count = 0, top[3] = {0};
        uint64_t site_bytes[8] = {0};
        for (size_t j = 0; j < NA; j++) {
            const struct xp_alloc *x = &a[j];
            bool on = x->kind == XP_AK_DEVICE && (e[i].device < 0 || x->device == e[i].device) &&
                      x->alloc_ns <= e[i].start_ns && (x->free_ns < 0 || x->free_ns > e[i].start_ns);
            if (!on)
                continue;
            live += x->bytes;
            count++;
            site_bytes[x->alloc_stack] += x->bytes;
            uint64_t v = x->bytes;
            for (int k = 0; k < 3; k++)
                if (v > top[k]) {
                    uint64_t t = top[k];
                    top[k] = v;
                    v = t;
                }
        }
        assert_int_equal(num(f, "live_bytes"), live);
        assert_int_equal(num(f, "live_count"), count);
        assert_int_equal(num(f, "device"), e[i].device);
        static const char *const keys[3] = {"top1_bytes", "top2_bytes", "top3_bytes"};
        for (int k = 0; k < 3; k++) {
            if (top[k])
                assert_int_equal(num(f, keys[k]), top[k]);
            else
                assert_null(fact(f, keys[k]));
        }
        uint64_t best = 0;
        for (size_t k = 0; k < 8; k++)
            best = site_bytes[k] > best ? site_bytes[k] : best;
        if (best)
            assert_int_equal(num(f, "site1_bytes"), best);
    }
    report_free(&r);
    (void)state;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_leak_growing_and_held),
        cmocka_unit_test(test_leak_bounded_cache_is_not_growing),
        cmocka_unit_test(test_leak_caching_allocator),
        cmocka_unit_test(test_leak_pinned_cache_reuse),
        cmocka_unit_test(test_leak_pytorch_blocks),
        cmocka_unit_test(test_alloc_churn),
        cmocka_unit_test(test_invalid_free),
        cmocka_unit_test(test_fragmentation),
        cmocka_unit_test(test_fragmentation_failed_request),
        cmocka_unit_test(test_fragmentation_negatives),
        cmocka_unit_test(test_caching_allocator),
        cmocka_unit_test(test_oom),
        cmocka_unit_test(test_oom_many_against_replay),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
