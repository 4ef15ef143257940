/* cap_two_runtimes.c: one process, two CUDA runtimes: the program's own
 * (libcudart.so.13) and libcudart.so.12 through a plugin built against it
 * (cap_v12user.c, dlopen()ed from argv[1]).  A copy through each, and a copy
 * the CUDA 12 runtime refuses, whose sticky state must stay in that runtime. */
#include "cap_util.h"

typedef int (*copy_fn)(void *, const void *, size_t);
typedef int (*bad_copy_fn)(void *, const void *);

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    CHECK_MSG(plugin != NULL, "dlopen: %s", dlerror());
    copy_fn cap_v12_copy = (copy_fn)(uintptr_t)dlsym(plugin, "cap_v12_copy");
    bad_copy_fn cap_v12_bad_copy_error =
        (bad_copy_fn)(uintptr_t)dlsym(plugin, "cap_v12_bad_copy_error");
    CHECK(cap_v12_copy != NULL && cap_v12_bad_copy_error != NULL);
    void *d = NULL;
    CHECK_OK(cudaMalloc(&d, 1 << 16));
    unsigned char *host = malloc(1 << 16);
    CHECK(host != NULL);
    memset(host, 3, 1 << 16);
    CHECK_OK(cudaMemcpy(d, host, 6001, cudaMemcpyHostToDevice));   /* CUDA 13 */
    CHECK_EQ(cap_v12_copy(d, host, 6002), (int)cudaSuccess);        /* CUDA 12 */
    int v12_error = cap_v12_bad_copy_error(d, host);
    printf("v12 error %d\n", v12_error);
    CHECK_EQ(v12_error, (int)cudaErrorInvalidMemcpyDirection);
    /* The refusal was the CUDA 12 runtime's: this one has no error. */
    CHECK_OK(cudaGetLastError());
    CHECK_OK(cudaFree(d));
    free(host);
    printf("done\n");
    return 0;
}
