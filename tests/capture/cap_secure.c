/* cap_secure.c: the preload inside a program that runs with rights its user
 * does not have.  glibc ignores LD_PRELOAD paths in such a program, but a
 * preload installed system-wide (/etc/ld.so.preload, a trusted folder) is
 * loaded all the same; this program has it as its first library (linked
 * with libxferprof.so ahead of libcudart, found through its RUNPATH, which
 * a secure program still honours), so its CUDA calls reach the hooks as a
 * preloaded program's do.  It links the simulator's driver too, which the
 * runtime would otherwise look for through LD_LIBRARY_PATH.  Prints "secure N" (getauxval(AT_SECURE)) and
 * "copies N"; exits 0. */
#include "cap_util.h"

#include <cuda.h>
#include <sys/auxv.h>

int main(void)
{
    printf("secure %lu\n", getauxval(AT_SECURE));
    int driver = 0;
    CHECK(cuDriverGetVersion(&driver) == CUDA_SUCCESS);
    char host[256];
    memset(host, 1, sizeof host);
    void *dev = NULL;
    CHECK_OK(cudaMalloc(&dev, sizeof host));
    int n = 0;
    for (; n < 5; n++)
        CHECK_OK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    CHECK_OK(cudaFree(dev));
    printf("copies %d\n", n);
    return 0;
}
