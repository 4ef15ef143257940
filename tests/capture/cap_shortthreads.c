/* cap_shortthreads.c: thousands of threads that each make one copy and end,
 * one after the other and in batches of eight alive at once (thread pools
 * that are torn down and rebuilt, data-loader workers, per-request threads).
 *
 *   cap_shortthreads N JOURNAL
 *
 * Makes N threads in all, then prints "copies N" and, when the file JOURNAL
 * exists (the profiler's journal while the process lives), "journal_bytes B"
 * with its size; exits 0. */
#include "cap_util.h"

#include <pthread.h>
#include <sys/stat.h>

static void *dev;
static unsigned char host[256];

static void *one_copy(void *arg)
{
    (void)arg;
    CHECK_OK(cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice));
    return NULL;
}

int main(int argc, char **argv)
{
    CHECK(argc == 3);
    int n = atoi(argv[1]);
    CHECK_OK(cudaMalloc(&dev, sizeof host));
    int made = 0;
    while (made < n) {
        /* Alternately one thread, and a batch of eight alive together. */
        int batch = (made / 100) % 2 == 0 ? 1 : 8;
        if (batch > n - made)
            batch = n - made;
        pthread_t t[8];
        for (int i = 0; i < batch; i++)
            CHECK(pthread_create(&t[i], NULL, one_copy, NULL) == 0);
        for (int i = 0; i < batch; i++)
            CHECK(pthread_join(t[i], NULL) == 0);
        made += batch;
    }
    CHECK_OK(cudaFree(dev));
    printf("copies %d\n", made);
    struct stat st;
    if (stat(argv[2], &st) == 0)
        printf("journal_bytes %lld\n", (long long)st.st_size);
    return 0;
}
