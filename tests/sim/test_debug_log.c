/* The simulated runtime reaches the driver through cuGetProcAddress (seen in the XFERPROF_SIM_DEBUG log), and without XFERPROF_SIM_DEBUG the simulator adds nothing to a program's stdout or stderr. */
#include "xpt_check.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define CHILD_OUT "child stdout line\n"
#define CHILD_ERR "child stderr line\n"

/* The child: an ordinary CUDA program that prints one line to each stream. */
static int child(void)
{
    enum { SZ = 4096 };
    unsigned char src[SZ], dst[SZ];
    void *d = NULL;
    if (cudaMalloc(&d, SZ) != cudaSuccess)
        return 2;
    xpt_fill(src, SZ, 1);
    if (cudaMemcpy(d, src, SZ, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(dst, d, SZ, cudaMemcpyDeviceToHost) != cudaSuccess ||
        memcmp(src, dst, SZ) != 0 || cudaFree(d) != cudaSuccess)
        return 3;
    fputs(CHILD_OUT, stdout);
    fputs(CHILD_ERR, stderr);
    return 0;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    CHECK(buf);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            CHECK(buf);
        }
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

/* Runs this program as the child with XFERPROF_SIM_DEBUG set to `debug` (or
 * unset when NULL); returns its stdout and stderr. */
static void run_child(const char *debug, char **out, char **err)
{
    char out_path[] = "/tmp/xpt_debug_log_out_XXXXXX";
    char err_path[] = "/tmp/xpt_debug_log_err_XXXXXX";
    int fo = mkstemp(out_path), fe = mkstemp(err_path);
    CHECK(fo >= 0 && fe >= 0);

    if (debug)
        CHECK(setenv("XFERPROF_SIM_DEBUG", debug, 1) == 0);
    else
        CHECK(unsetenv("XFERPROF_SIM_DEBUG") == 0);

    posix_spawn_file_actions_t fa;
    CHECK(posix_spawn_file_actions_init(&fa) == 0);
    CHECK(posix_spawn_file_actions_adddup2(&fa, fo, STDOUT_FILENO) == 0);
    CHECK(posix_spawn_file_actions_adddup2(&fa, fe, STDERR_FILENO) == 0);
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    CHECK(n > 0);
    self[n] = '\0';
    char *argv[] = {self, "child", NULL};
    pid_t pid;
    CHECK(posix_spawn(&pid, self, &fa, NULL, argv, environ) == 0);
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    close(fo);
    close(fe);
    *out = slurp(out_path);
    *err = slurp(err_path);
    unlink(out_path);
    unlink(err_path);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0,
              "child (XFERPROF_SIM_DEBUG=%s) failed, status %#x, stderr:\n%s",
              debug ? debug : "(unset)", status, *err);
}

/* A line of the debug log that records the lookup of `base`. */
static int logged_lookup(const char *log, const char *base)
{
    char needle[128];
    snprintf(needle, sizeof needle, "cuGetProcAddress_v2(%s,", base);
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, "xpsim", 5) == 0) {
            const char *hit = strstr(line, needle);
            if (hit && (size_t)(hit - line) < len)
                return 1;
        }
        line += len + (end ? 1 : 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child();

    char *out, *err;

    /* Quiet by default: the program's own output, byte for byte. */
    run_child(NULL, &out, &err);
    CHECK_MSG(strcmp(out, CHILD_OUT) == 0, "stdout without debug:\n%s", out);
    CHECK_MSG(strcmp(err, CHILD_ERR) == 0, "stderr without debug:\n%s", err);
    free(out);
    free(err);

    /* With the debug log on: the runtime's driver lookups are there, on
     * stderr only. */
    run_child("1", &out, &err);
    CHECK_MSG(strcmp(out, CHILD_OUT) == 0, "stdout with debug (the log belongs on stderr):\n%s",
              out);
    CHECK_MSG(strstr(err, CHILD_ERR) != NULL, "the child's own stderr line is missing");
    CHECK_MSG(logged_lookup(err, "cuMemAlloc"), "no cuGetProcAddress_v2(cuMemAlloc, ...) in:\n%s",
              err);
    CHECK_MSG(logged_lookup(err, "cuMemcpyHtoD"),
              "no cuGetProcAddress_v2(cuMemcpyHtoD, ...) in:\n%s", err);
    CHECK_MSG(logged_lookup(err, "cuMemcpyDtoH"),
              "no cuGetProcAddress_v2(cuMemcpyDtoH, ...) in:\n%s", err);
    free(out);
    free(err);
    return 0;
}
