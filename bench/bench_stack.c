/* bench_stack.c: how many bytes of stack one CUDA call takes, with or without
 * the preload (run it both ways: the difference is the preload's).
 *
 *   bench_stack [FRAMES]
 *       prints "stack_bytes first|cudaMalloc|H2D|D2H|async_H2D|cudaFree N",
 *       each made from FRAMES (default 32) nested frames: "first" is the
 *       thread's first call (a cudaMemcpy; the preload sets up its
 *       per-thread state there), the others are steady state (each made
 *       once before it is measured).
 *
 * The calls run on a thread whose stack this program maps and fills with a
 * pattern; before each call the part below the caller is filled again, and
 * after it the lowest byte that no longer holds the pattern says how deep
 * the call went.  The process's first CUDA call (the simulator's and the
 * preload's start-up) is made by the main thread, before. */
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define STACK_BYTES (1u << 20)
#define PATTERN 0xa5u
#define BYTES 4096

static unsigned char *stack_lo;
static unsigned char host[BYTES];
static void *dev, *pinned;
static cudaStream_t stream;

static void ok(cudaError_t rc, const char *what)
{
    if (rc != cudaSuccess) {
        fprintf(stderr, "bench_stack: %s: %s\n", what, cudaGetErrorName(rc));
        exit(1);
    }
}

/* Fills the stack from its low end up to a little below this frame. */
__attribute__((noinline)) static void paint(void)
{
    unsigned char *here = __builtin_frame_address(0);
    for (volatile unsigned char *p = stack_lo; p < here - 512; p++)
        *p = PATTERN;
}

/* The lowest byte written since paint(). */
__attribute__((noinline)) static unsigned char *lowest_touched(void)
{
    volatile unsigned char *p = stack_lo;
    while (*p == PATTERN)
        p++;
    return (unsigned char *)p;
}

enum { OP_H2D, OP_MALLOC, OP_D2H, OP_ASYNC, OP_FREE };

static void op(int which)
{
    switch (which) {
    case OP_H2D: ok(cudaMemcpy(dev, host, BYTES, cudaMemcpyHostToDevice), "H2D"); break;
    case OP_MALLOC: ok(cudaMalloc(&dev, BYTES), "cudaMalloc"); break;
    case OP_D2H: ok(cudaMemcpy(host, dev, BYTES, cudaMemcpyDeviceToHost), "D2H"); break;
    case OP_ASYNC:
        ok(cudaMemcpyAsync(dev, pinned, BYTES, cudaMemcpyHostToDevice, stream), "async");
        ok(cudaStreamSynchronize(stream), "sync");
        break;
    case OP_FREE: ok(cudaFree(dev), "cudaFree"); break;
    }
}

/* Bytes of stack below this frame that op(which) touched. */
__attribute__((noinline)) static long measure(int which)
{
    unsigned char *here = __builtin_frame_address(0);
    paint();
    op(which);
    return (long)(here - lowest_touched());
}

__attribute__((noinline)) static int nest(int frames)
{
    if (frames > 1) {
        int r = nest(frames - 1);
        __asm__ volatile("" : : "r"(r) : "memory");
        return r + 1;
    }
    static const char *const names[] = {"H2D", "cudaMalloc", "D2H", "async_H2D", "cudaFree"};
    printf("stack_bytes first %ld\n", measure(OP_H2D));
    for (int i = OP_MALLOC; i <= OP_FREE; i++) {
        if (i == OP_FREE)
            op(OP_FREE), op(OP_MALLOC);   /* the one freed below is a fresh one */
        else
            op(i);
        printf("stack_bytes %s %ld\n", names[i], measure(i));
    }
    return 1;
}

static void *worker(void *arg)
{
    nest((int)(intptr_t)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 32;
    if (frames <= 0 || frames > 1000)
        return 2;
    ok(cudaMalloc(&dev, BYTES), "cudaMalloc");
    ok(cudaMallocHost(&pinned, BYTES), "cudaMallocHost");
    ok(cudaStreamCreate(&stream), "cudaStreamCreate");
    stack_lo = mmap(NULL, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                    -1, 0);
    if (stack_lo == MAP_FAILED)
        return 1;
    memset(stack_lo, PATTERN, STACK_BYTES);
    pthread_attr_t a;
    pthread_t t;
    if (pthread_attr_init(&a) != 0 || pthread_attr_setstack(&a, stack_lo, STACK_BYTES) != 0 ||
        pthread_create(&t, &a, worker, (void *)(intptr_t)frames) != 0 ||
        pthread_join(t, NULL) != 0)
        return 1;
    return 0;
}
