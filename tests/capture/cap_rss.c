/* cap_rss.c: COPIES small synchronous copies (argv[1]), then the process's
 * peak resident memory (VmHWM of /proc/self/status, in KiB) on stdout. */
#include "cap_util.h"

#include <stdlib.h>
#include <string.h>

static long peak_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (f == NULL)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f) != NULL)
        if (strncmp(line, "VmHWM:", 6) == 0)
            kib = strtol(line + 6, NULL, 10);
    fclose(f);
    return kib;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
    void *dev = NULL;
    char host[8] = {0};
    CHECK_OK(cudaMalloc(&dev, sizeof host));
    for (long i = 0; i < n; i++)
        CHECK_OK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    CHECK_OK(cudaFree(dev));
    printf("%ld\n", peak_kib());
    return 0;
}
