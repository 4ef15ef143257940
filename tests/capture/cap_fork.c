/* cap_fork.c: fork and CUDA.  Prints "parent PID" and "child PID".
 *
 *   cap_fork        forks before any CUDA call; the child makes 10 copies and
 *                   leaves with _exit(0) (no exit handler), the parent makes
 *                   20, waits for the child and exits 0
 *   cap_fork late   the parent makes 20 copies, then forks: CUDA does not
 *                   survive fork, so the child's 5 cudaMalloc calls fail
 *                   (cudaErrorInitializationError) and it leaves with
 *                   _exit(0); the parent makes 1 more copy
 *   cap_fork exec PROG ARGS...
 *                   the parent makes 20 copies, then runs PROG (fork and
 *                   exec) and waits for it, then makes 1 more copy; prints
 *                   "child PID" for PROG */
#include "cap_util.h"

#include <sys/wait.h>

static void *dev, *host;

static void copies(int n, int first)
{
    if (dev == NULL) {
        host = malloc(4096);
        CHECK(host);
        CHECK_OK(cudaMalloc(&dev, 4096));
    }
    for (int i = first; i < first + n; i++)
        CHECK_OK(cudaMemcpy(dev, host, (size_t)i * 10, cudaMemcpyHostToDevice));
}

static int run_program(char **argv)
{
    copies(20, 1);
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "program status %#x", st);
    copies(1, 21);
    printf("parent %ld\nchild %ld\n", (long)getpid(), (long)child);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 2 && strcmp(argv[1], "exec") == 0)
        return run_program(argv + 2);
    bool late = argc > 1 && strcmp(argv[1], "late") == 0;
    if (late)
        copies(20, 1);
    fflush(stdout);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        if (late) {
            for (int i = 0; i < 5; i++) {
                void *p = NULL;
                CHECK_CUDA(cudaMalloc(&p, 4096), cudaErrorInitializationError);
            }
        } else {
            copies(10, 1);
        }
        _exit(0);
    }
    if (late)
        copies(1, 21);
    else
        copies(20, 1);
    int st = 0;
    CHECK(waitpid(child, &st, 0) == child);
    CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %#x", st);
    printf("parent %ld\nchild %ld\n", (long)getpid(), (long)child);
    return 0;
}
