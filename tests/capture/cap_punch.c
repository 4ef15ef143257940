/* cap_punch.c: 8 batches of 25,000 small copies, 300 ms apart (time for
 * the background ingest to store each batch), then the journal's blocks on
 * disk (its path in XP_JOURNAL) in KiB on stdout: what the ingest stored is
 * given back to the file system while the run goes on.  With "kill" as
 * argv[1] it then SIGKILLs itself: recovery reads a journal with holes. */
#include "cap_util.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *journal = getenv("XP_JOURNAL");
    CHECK(journal != NULL);
    void *dev = NULL;
    char host[8] = {0};
    CHECK_OK(cudaMalloc(&dev, sizeof host));
    long peak_kib = 0;
    for (int b = 0; b < 8; b++) {
        for (int i = 0; i < 25000; i++)
            CHECK_OK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
        usleep(300000);
        struct stat st;
        CHECK(stat(journal, &st) == 0);
        if (st.st_blocks / 2 > peak_kib)
            peak_kib = st.st_blocks / 2;
    }
    printf("%ld\n", peak_kib);
    fflush(stdout);
    if (argc > 1 && strcmp(argv[1], "kill") == 0)
        kill(getpid(), SIGKILL);
    CHECK_OK(cudaFree(dev));
    return 0;
}
