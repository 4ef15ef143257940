/* cap_smallstack.c: CUDA calls where there is little stack.  A thread with a
 * PTHREAD_STACK_MIN (16 KiB) stack allocates, copies both ways and frees, a
 * few times, then makes two copies with only DEEP_LEFT bytes of its stack
 * left; the main thread takes SIGSEGV (a page it protected) on a SIGSTKSZ
 * alternate stack (8 KiB, the classic value), and its handler copies both
 * ways before it unprotects the page.  Prints what it did, the same with
 * or without the preload, for test_smallstack.py:
 *   "small thread tid N copies C deep D"   (C counts the D deep ones)
 *   "handler copies H on_altstack 1"
 *   "copies T"
 * With the argument "first" the small thread's cudaMalloc is the process's
 * first CUDA call (the runtime's and the profiler's start-up run there). */
#include "cap_util.h"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>

#define BYTES 4096
#define ROUNDS 4
/* What the deep copies leave to the call: enough for the simulator's own
 * cudaMemcpy (about 1.5 KiB on x86-64), not for a stack walk. */
#define DEEP_LEFT 3072
/* The classic SIGSTKSZ: _GNU_SOURCE makes SIGSTKSZ sysconf(_SC_SIGSTKSZ),
 * which is far larger on machines with AVX-512 or AMX. */
#define ALT_STACK 8192

static unsigned char up[BYTES], down[BYTES];
static void *dev;

typedef struct {
    long tid;
    bool first;               /* make the process's first CUDA call */
    int copies, deep;
    unsigned char *lo;        /* the lowest usable byte of the thread's stack */
} small_arg;

static void copy_both_ways(void)
{
    CHECK_OK(cudaMemcpy(dev, up, BYTES, cudaMemcpyHostToDevice));
    CHECK_OK(cudaMemcpy(down, dev, BYTES, cudaMemcpyDeviceToHost));
    CHECK(memcmp(up, down, BYTES) == 0);
}

/* Goes down the stack until less than DEEP_LEFT bytes are left, then copies
 * both ways.  The volatile pad keeps every frame this size. */
__attribute__((noinline)) static int deep(small_arg *a)
{
    volatile unsigned char pad[192];
    pad[0] = 1;
    unsigned char *here = __builtin_frame_address(0);
    if (here - a->lo > DEEP_LEFT) {
        int r = deep(a);
        __asm__ volatile("" : : "r"(r) : "memory");
        return r + pad[0];
    }
    copy_both_ways();
    a->deep += 2;
    a->copies += 2;
    return 1;
}

static void *small_thread(void *p)
{
    small_arg *a = p;
    a->tid = cap_tid();
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;
    CHECK(pthread_getattr_np(pthread_self(), &attr) == 0);
    CHECK(pthread_attr_getstack(&attr, &addr, &size) == 0);
    pthread_attr_destroy(&attr);
    a->lo = addr;
    if (a->first)
        CHECK_OK(cudaMalloc(&dev, BYTES));
    void *mine = NULL;
    for (int i = 0; i < ROUNDS; i++) {
        CHECK_OK(cudaMalloc(&mine, BYTES));
        CHECK_OK(cudaMemcpy(mine, up, BYTES, cudaMemcpyHostToDevice));
        CHECK_OK(cudaMemcpy(down, mine, BYTES, cudaMemcpyDeviceToHost));
        CHECK(memcmp(up, down, BYTES) == 0);
        CHECK_OK(cudaFree(mine));
        a->copies += 2;
    }
    deep(a);
    return NULL;
}

static volatile sig_atomic_t handler_copies, handler_on_altstack;
static volatile unsigned char *guarded;
static long page;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)uc;
    if ((uintptr_t)si->si_addr - (uintptr_t)guarded >= (uintptr_t)page)
        abort();
    stack_t ss;
    if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK))
        handler_on_altstack = 1;
    copy_both_ways();
    handler_copies += 2;
    mprotect((void *)guarded, (size_t)page, PROT_READ | PROT_WRITE);
}

int main(int argc, char **argv)
{
    bool small_first = argc > 1 && strcmp(argv[1], "first") == 0;
    for (int i = 0; i < BYTES; i++)
        up[i] = xpt_pattern((size_t)i, 17);
    /* The process's first CUDA call (the runtime's start-up) on the main
     * thread's ordinary stack, unless the small thread is to make it. */
    if (!small_first)
        CHECK_OK(cudaMalloc(&dev, BYTES));

    pthread_attr_t attr;
    pthread_t t;
    small_arg a = {0};
    CHECK(pthread_attr_init(&attr) == 0);
    a.first = small_first;
    CHECK(pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN) == 0);
    CHECK(pthread_create(&t, &attr, small_thread, &a) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    pthread_attr_destroy(&attr);
    printf("small thread tid %ld copies %d deep %d\n", a.tid, a.copies, a.deep);

    page = sysconf(_SC_PAGESIZE);
    stack_t ss = {.ss_sp = malloc(ALT_STACK), .ss_size = ALT_STACK, .ss_flags = 0};
    CHECK(ss.ss_sp != NULL && sigaltstack(&ss, NULL) == 0);
    struct sigaction sa = {.sa_sigaction = on_segv, .sa_flags = SA_SIGINFO | SA_ONSTACK};
    sigemptyset(&sa.sa_mask);
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
    guarded = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(guarded != MAP_FAILED);
    guarded[0] = 1;   /* SIGSEGV; the handler copies, then lets this through */
    CHECK(guarded[0] == 1);
    printf("handler copies %d on_altstack %d\n", (int)handler_copies, (int)handler_on_altstack);

    CHECK_OK(cudaFree(dev));
    printf("copies %d\n", a.copies + (int)handler_copies);
    return 0;
}
