/* cap_vforkexit.c: 100 copies, then a vfork child whose execve fails and
 * which calls exit() (not _exit), running the exit path in its parent's
 * memory; then 100 more copies in the parent. */
#include "cap_util.h"

#include <sys/wait.h>

int main(void)
{
    void *dev = NULL;
    char host[64] = {0};
    CHECK_OK(cudaMalloc(&dev, sizeof host));
    for (int i = 0; i < 100; i++)
        CHECK_OK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    pid_t pid = vfork();
    if (pid == 0) {
        char *const argv[] = {"/nonexistent/xferprof-test", NULL};
        execv(argv[0], argv);
        exit(0);
    }
    CHECK(pid > 0);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    for (int i = 0; i < 100; i++)
        CHECK_OK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    printf("done\n");
    return 0;
}
