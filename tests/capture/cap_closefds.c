/* cap_closefds.c: a program that closes every descriptor >= 3 in the middle of
 * its run (as daemons and some launchers do), opens files of its own in their
 * place, copies on, then checks its files hold exactly what it wrote.
 *
 *   cap_closefds DIR            close_range(3, ~0U, 0), then 12 files in DIR
 *   cap_closefds DIR rlimit     no closing: before its first CUDA call the
 *                               program lowers RLIMIT_NOFILE to leave
 *                               SPARE descriptors free, then uses 6 of them
 *
 * Either way it prints "copies N" (the copies it made) and "files ok", and
 * exits 0; a failed check exits 1 with the reason on stderr. */
#include "cap_util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

/* SPARE: the 6 files, and the 2 descriptors of libunwind's memory-validation
 * pipe, which the preload's stack walks hold for the whole run (issue 14
 * item 18: everything else of ours is taken only for a moment, and only with
 * XP_FD_RESERVE left free). */
enum { NFILES = 12, MYFILES = 6, SPARE = MYFILES + 2, FILE_BYTES = 3000 };

static void *dev;
static char *host;
static long copies;

static void copy_round(long n)
{
    for (long i = 0; i < n; i++, copies++)
        CHECK_OK(cudaMemcpy(dev, host, (size_t)(copies % 4096) + 1, cudaMemcpyHostToDevice));
}

/* DIR/NAME: the numbers of the descriptors that are pipes (the program has
 * none of its own; the driver checks where the preload's are).  Written
 * after the program's checks of its own files, or before it opens them. */
__attribute__((noinline)) static void list_pipes(const char *dir, const char *name)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *out = fopen(path, "w");
    CHECK(out != NULL);
    DIR *d = opendir("/proc/self/fd");
    CHECK(d != NULL);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != dirfd(d) && fd != fileno(out) && fstat(fd, &st) == 0 &&
            S_ISFIFO(st.st_mode) && fd > 2)
            fprintf(out, "%d\n", fd);
    }
    closedir(d);
    CHECK(fclose(out) == 0);
}

static void nap_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Descriptors open now (counted without keeping one: the count's own is
 * taken off). */
static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    CHECK(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1;
}

static unsigned char content(int file, int i)
{
    return (unsigned char)(file * 37 + i * 11 + 1);
}

/* The three things the program does to descriptor numbers that are, at that
 * moment, the preload's (and list_pipes, which fstat()s them all): each a
 * function of its own, so that tests/capture/tsan.supp can name them. */
__attribute__((noinline)) static void close_every_descriptor(void)
{
    /* close_range where the kernel has it, else one by one. */
    if (syscall(SYS_close_range, 3u, ~0u, 0u) != 0)
        for (int fd = 3; fd < 65536; fd++)
            close(fd);
}

/* Opens files DIR/user-F and writes them; exits 1 if one cannot be made. */
__attribute__((noinline)) static void open_user_files(const char *dir, int *fds, int n)
{
    unsigned char buf[FILE_BYTES];
    for (int f = 0; f < n; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/user-%d", dir, f);
        fds[f] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
        if (fds[f] < 0) {
            fprintf(stderr, "cap_closefds: open %s: %s\n", path, strerror(errno));
            exit(1);
        }
        for (int i = 0; i < FILE_BYTES; i++)
            buf[i] = content(f, i);
        CHECK(write(fds[f], buf, FILE_BYTES) == FILE_BYTES);
    }
}

/* Checks that each file holds exactly what open_user_files wrote, then
 * closes it; exits 1 at the first that does not. */
__attribute__((noinline)) static void check_and_close_user_files(const int *fds, int n)
{
    unsigned char buf[FILE_BYTES];
    for (int f = 0; f < n; f++) {
        struct stat st;
        CHECK(fstat(fds[f], &st) == 0);
        if (st.st_size != FILE_BYTES) {
            fprintf(stderr, "cap_closefds: file %d is %lld bytes, not %d\n", f,
                    (long long)st.st_size, FILE_BYTES);
            exit(1);
        }
        CHECK(pread(fds[f], buf, FILE_BYTES, 0) == FILE_BYTES);
        for (int i = 0; i < FILE_BYTES; i++)
            if (buf[i] != content(f, i)) {
                fprintf(stderr, "cap_closefds: file %d changed at byte %d\n", f, i);
                exit(1);
            }
        CHECK(close(fds[f]) == 0);
    }
}

int main(int argc, char **argv)
{
    CHECK(argc >= 2);
    bool rlimit = argc > 2 && strcmp(argv[2], "rlimit") == 0;
    if (rlimit) {
        struct rlimit rl;
        CHECK(getrlimit(RLIMIT_NOFILE, &rl) == 0);
        rl.rlim_cur = (rlim_t)(open_fds() + SPARE);
        CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
    }
    host = malloc(4096);
    CHECK(host);
    memset(host, 7, 4096);
    CHECK_OK(cudaMalloc(&dev, 4096));
    copy_round(2000);
    nap_ms(250);   /* background ingest passes run */

    list_pipes(argv[1], "pipes-before");
    if (!rlimit)
        close_every_descriptor();
    int nfiles = rlimit ? MYFILES : NFILES;
    int fds[NFILES];
    open_user_files(argv[1], fds, nfiles);
    /* Thousands of copies over several ingest passes: new journal chunks,
     * growth of the journal file, commits to the database. */
    for (int round = 0; round < 4; round++) {
        copy_round(6000);
        void *more = NULL;
        CHECK_OK(cudaMalloc(&more, 1024));
        CHECK_OK(cudaFree(more));
        nap_ms(120);
    }
    check_and_close_user_files(fds, nfiles);
    CHECK_OK(cudaFree(dev));
    list_pipes(argv[1], "pipes-after");
    printf("copies %ld\nfiles ok\n", copies);
    return 0;
}
