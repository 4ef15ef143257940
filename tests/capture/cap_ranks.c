/* cap_ranks.c: a job of 4 ranks, as torchrun starts them: the parent (no
 * rank of its own, no CUDA call) forks 4 children with RANK=0..3 and waits.
 * Each rank copies 1000 bytes to the device, except rank 2, which makes no
 * CUDA call at all ("none": no rank does).  Rank 1 also runs a helper
 * program (sh -c true) that inherits its RANK and makes no CUDA call either.
 * Prints "rank R pid P" per child. */
#include "cap_util.h"

#include <sys/wait.h>

static void rank_main(int rank, bool none)
{
    char value[16];
    snprintf(value, sizeof value, "%d", rank);
    CHECK(setenv("RANK", value, 1) == 0);
    printf("rank %d pid %ld\n", rank, (long)getpid());
    fflush(stdout);
    if (rank == 1)
        CHECK(system("sh -c true") == 0);
    if (none || rank == 2)
        return;
    void *dev = NULL;
    char host[1000] = {1};
    CHECK_OK(cudaMalloc(&dev, sizeof host));
    CHECK_OK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    CHECK_OK(cudaFree(dev));
}

int main(int argc, char **argv)
{
    bool none = argc > 1 && strcmp(argv[1], "none") == 0;
    for (int rank = 0; rank < 4; rank++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) {
            rank_main(rank, none);
            exit(0);
        }
        int st = 0;
        CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    return 0;
}
