/* cmd_run.c: `xferprof run [options] -- CMD ARGS...`, running a program with the preload and summarizing each database it left. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "xp_commands.h"
#include "xp_cli.h"
#include "xp_config.h"
#include "xp_format.h"
#include "xp_locate.h"
#include "xp_mkdirs.h"
#include "run_finish.h"

/* Exit status when the launcher itself cannot start CMD (as env(1) and
 * timeout(1) do), distinct from usage errors (2) and from CMD's statuses. */
#define XP_RUN_FAILED 125

static void xp_run_usage(FILE *f)
{
    fprintf(f,
            "Usage: xferprof run [options] -- CMD ARGS...\n"
            "\n"
            "Runs CMD with the profiler preloaded. Each process of CMD that uses CUDA writes\n"
            "one database; after CMD ends, one line per database is printed to stderr.\n"
            "The exit status is CMD's, or 128+N if it was killed by signal N.\n"
            "\n"
            "Options:\n"
            "  -o, --output PATH     database path pattern (env XFERPROF_OUTPUT; default\n"
            "                        %s in the current directory):\n"
            "                          %%p pid, %%h host name, %%r rank (from RANK, LOCAL_RANK,\n"
            "                          OMPI_COMM_WORLD_RANK or SLURM_PROCID; 0 if none),\n"
            "                          %%t start time (YYYYmmdd-HHMMSS), %%%% a '%%'\n"
            "                        a relative PATH is taken from the current directory\n"
            "      --stack-depth N   frames recorded per call stack, 0 to %d; 0 turns stacks\n"
            "                        off (env XFERPROF_STACK_DEPTH; default %d)\n"
            "      --fingerprint MODE\n"
            "                        content hashes of copies (env XFERPROF_FINGERPRINT):\n"
            "                          sampled  exact up to %u KiB, sampled above (default)\n"
            "                          full     every byte of every copy\n"
            "                          off      none\n"
            "      --capture-range R record copies, memsets and syncs only in a window\n"
            "                        (env XFERPROF_CAPTURE_RANGE; allocations and frees\n"
            "                        are always recorded):\n"
            "                          none             the whole run (default)\n"
            "                          cudaProfilerApi  from cudaProfilerStart to Stop\n"
            "                          nvtx             while a range --nvtx-capture names\n"
            "                                           is open, on any thread\n"
            "      --nvtx-capture NAME[@DOMAIN]\n"
            "                        that range (NAME@* in any domain; env\n"
            "                        XFERPROF_NVTX_CAPTURE)\n"
            "      --delay S         no window before S seconds after start (env XFERPROF_DELAY)\n"
            "      --duration S      a window closes S seconds after it opened\n"
            "                        (env XFERPROF_DURATION)\n"
            "  -q, --quiet           no warnings from the profiler and no summary\n"
            "                        (env XFERPROF_QUIET=1)\n"
            "      --sim             run on the simulated CUDA platform (puts its folder\n"
            "                        first in LD_LIBRARY_PATH, preloads its libcudart.so.12)\n"
            "  -h, --help            this text\n"
            "\n"
            "Environment:\n"
            "  XFERPROF_OUTPUT, XFERPROF_STACK_DEPTH, XFERPROF_FINGERPRINT, XFERPROF_QUIET,\n"
            "  XFERPROF_CAPTURE_RANGE, XFERPROF_NVTX_CAPTURE, XFERPROF_DELAY, XFERPROF_DURATION\n"
            "                        read by the profiler in each process; the options\n"
            "                        above set them, or they can be set directly\n"
            "  XFERPROF_MANIFEST     set by xferprof run: the file where each process names\n"
            "                        its database\n"
            "  XFERPROF_PRELOAD_LIB  libxferprof.so to preload (default: found next to\n"
            "                        this xferprof)\n"
            "  XFERPROF_SIM_DIR      the simulator's folder for --sim (same default)\n"
            "  XFERPROF_SIM_*        the simulator's settings (docs/simulator.md)\n"
            "  NVTX_INJECTION64_PATH set by xferprof run to the preload, which records NVTX\n"
            "                        ranges; one set to another tool is kept (with a\n"
            "                        warning), and then ranges are not recorded\n"
            "\n"
            "Exit status: CMD's; 126 or 127 if CMD cannot be run; 2 for bad options;\n"
            "%d if the profiler cannot be set up.\n",
            XP_DEFAULT_OUTPUT, XP_MAX_FRAMES, XP_DEFAULT_STACK_DEPTH, XP_FP_THRESHOLD / 1024u,
            XP_RUN_FAILED);
}

typedef struct xp_run_opts {
    const char *output;       /* -o, or NULL */
    const char *stack_depth;  /* --stack-depth, or NULL */
    const char *fingerprint;  /* --fingerprint, or NULL */
    bool quiet;
    bool sim;
    /* --capture-range, --nvtx-capture, --delay, --duration: passed on as
     * the variables of xp_window_vars, checked by xp_config_load. */
    const char *window[4];
} xp_run_opts;

static const char *const xp_window_vars[4] = {"XFERPROF_CAPTURE_RANGE", "XFERPROF_NVTX_CAPTURE",
                                              "XFERPROF_DELAY", "XFERPROF_DURATION"};

/* ---- signals ------------------------------------------------------------ */

/* The child to forward signals to; owned by xp_run_child, 0 when there is
 * none (or it has ended and may be reaped, so its pid may be reused). */
static volatile sig_atomic_t xp_child_pid;
/* Whether the launcher leads its session (set before handlers go in). */
static volatile sig_atomic_t xp_session_leader;

static const int xp_forwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
#define XP_NFORWARDED (sizeof xp_forwarded / sizeof xp_forwarded[0])

static void xp_forward(int sig, siginfo_t *info, void *ctx)
{
    (void)ctx;
    /* A signal the kernel sent to the whole foreground process group
     * (Ctrl-C, Ctrl-\, terminal hangup) already reached the child, which
     * shares our group: sending it again would make one Ctrl-C look like
     * two.  Only a terminal hangup is sent to the session leader alone, so
     * for a launcher leading its session that one is passed on. */
    if (info && info->si_code == SI_KERNEL && !(sig == SIGHUP && xp_session_leader))
        return;
    pid_t pid = (pid_t)xp_child_pid;
    if (pid > 0) {
        int saved = errno;
        kill(pid, sig);
        errno = saved;
    }
}

/* ---- small helpers ------------------------------------------------------ */

/* NVTX ranges (issue 4): a program's first NVTX call loads the library
 * NVTX_INJECTION64_PATH names; the preload is that library
 * (InitializeInjectionNvtx2).  A user's own tool there is kept (NVTX loads
 * one only), with a warning that ranges are not recorded.  Returns 0 or -1
 * (setenv failed). */
static int xp_set_nvtx_injection(const char *preload, bool quiet)
{
    const char *old = getenv("NVTX_INJECTION64_PATH");
    if (old && *old) {
        char real[PATH_MAX];
        if (!realpath(old, real) || strcmp(real, preload) != 0) {
            if (!quiet)
                fprintf(stderr, "xferprof: NVTX_INJECTION64_PATH is set to '%s': NVTX ranges "
                                "will not be recorded\n", old);
            return 0;
        }
    }
    return setenv("NVTX_INJECTION64_PATH", preload, 1);
}

/* Puts value first in the ':'-separated list in environment variable var
 * (value alone when var is unset or empty: an empty LD_LIBRARY_PATH element
 * would mean the current directory). */
static int xp_prepend_env(const char *var, const char *value)
{
    const char *old = getenv(var);
    size_t vn = strlen(value);
    if (!old || !*old)
        return setenv(var, value, 1);
    if (strncmp(old, value, vn) == 0 && (old[vn] == ':' || old[vn] == ' ' || old[vn] == '\0'))
        return 0; /* already first, e.g. xferprof run inside xferprof run */
    size_t n = vn + 1 + strlen(old) + 1;
    char *s = malloc(n);
    if (!s)
        return -1;
    snprintf(s, n, "%s:%s", value, old);
    int rc = setenv(var, s, 1);
    free(s);
    return rc;
}

/* The output pattern made absolute against the current directory (a '%' in
 * that directory's name doubled), so that every process of CMD, whatever
 * directory it runs in, writes where the user asked from.  Checks the pattern
 * expands.  An unwritable folder is not refused here: the program runs
 * unprofiled and the preload says why, once.  Returns 0, or -1 after
 * printing why. */
static int xp_output_pattern(const char *pattern, char *out, size_t outlen)
{
    char expanded[PATH_MAX], cwd[PATH_MAX];
    size_t pos = 0;

    if (xp_expand_output(pattern, getpid(), NULL, xp_config_rank(), (int64_t)time(NULL), expanded,
                         sizeof expanded) != 0) {
        fprintf(stderr,
                "xferprof: bad output pattern '%s': unknown %%-sequence or too long "
                "(known: %%p %%h %%r %%t %%%%)\n",
                pattern);
        return -1;
    }
    if (pattern[0] != '/' && getcwd(cwd, sizeof cwd)) {
        for (const char *c = cwd; *c; c++) {
            if (pos + 3 >= outlen) {
                fprintf(stderr, "xferprof: output path too long: '%s/%s'\n", cwd, pattern);
                return -1;
            }
            if (*c == '%')
                out[pos++] = '%';
            out[pos++] = *c;
        }
        if (pos > 0 && out[pos - 1] != '/')
            out[pos++] = '/';
    }
    if (pos + strlen(pattern) >= outlen) {
        fprintf(stderr, "xferprof: output path too long: '%s'\n", pattern);
        return -1;
    }
    memcpy(out + pos, pattern, strlen(pattern) + 1);
    if (xp_expand_output(out, getpid(), NULL, xp_config_rank(), (int64_t)time(NULL), expanded,
                         sizeof expanded) != 0) {
        fprintf(stderr, "xferprof: output path too long: '%s'\n", out);
        return -1;
    }

    return 0;
}

/* The pattern expanded for two processes that differ in pid and start
 * time, into a and b (PATH_MAX each): what is the same in both is the same
 * for every process of CMD.  Returns 0, or -1 if it does not expand. */
static int xp_output_two(const char *pattern, char *a, char *b)
{
    return xp_expand_output(pattern, 1, NULL, xp_config_rank(), 0, a, PATH_MAX) != 0 ||
                   xp_expand_output(pattern, 2, NULL, xp_config_rank(), 86400, b, PATH_MAX) != 0
               ? -1
               : 0;
}

/* Makes the output's folder (mkdir -p) before CMD runs, when it is the
 * same for every process; a folder named with %p or %t is made by the
 * preload of each process.  A path that can never be a folder (a file on
 * the way, a link not followed) is refused; one that cannot be made now is
 * left to the preload, which runs CMD unprofiled and says why (as for any
 * unwritable output).  Returns 0, or -1 after printing why. */
static int xp_output_folder(const char *pattern)
{
    char a[PATH_MAX], b[PATH_MAX], err[PATH_MAX + 128];
    if (xp_output_two(pattern, a, b) != 0)
        return 0;
    char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    if (!sa || !sb || sa - a != sb - b || strncmp(a, b, (size_t)(sa - a)) != 0)
        return 0;
    if (xp_make_parent_dirs(a, err, sizeof err) != 0 && (errno == ENOTDIR || errno == ELOOP)) {
        fprintf(stderr, "xferprof: output %s: %s\n", pattern, err);
        return -1;
    }
    return 0;
}

/* Refuses, before CMD runs, an output name that is the same for every
 * process (no %p or %t) and names something other than a regular file: a
 * FIFO, a device, a folder or a link is never replaced (the preload would
 * refuse it in every process).  Returns 0, or -1 after printing why. */
static int xp_output_replaceable(const char *pattern)
{
    char a[PATH_MAX], b[PATH_MAX];
    if (xp_output_two(pattern, a, b) != 0 || strcmp(a, b) != 0)
        return 0;
    struct stat st;
    if (lstat(a, &st) != 0 || S_ISREG(st.st_mode))
        return 0;
    fprintf(stderr, "xferprof: output %s: it is %s, not a regular file, and is never replaced; "
                    "give the name of a database to write\n", a, xp_file_kind(st.st_mode));
    return -1;
}

/* "512 B", "1.5 KiB", "64.0 MiB". */
/* ---- running CMD -------------------------------------------------------- */

/* SIGPIPE's disposition when `xferprof run` started: CMD gets it back. */
static struct sigaction xp_entry_sigpipe;

/* Forks and execs argv with signals forwarded while it runs.  Returns CMD's
 * exit status as the launcher reports it (128+N for signal N), or -1 after
 * printing why it could not be started (*exit_code then holds 126/127/125). */
static int xp_run_child(char **argv, pid_t *child_out, int *exit_code)
{
    struct sigaction old[XP_NFORWARDED], sa;
    bool installed[XP_NFORWARDED] = {false};
    sigset_t forwarded, oldmask;
    int pipefd[2];
    struct termios tio;
    bool have_tio = isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &tio) == 0;

    /* Tells the parent why exec failed; closed by a successful exec. */
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        fprintf(stderr, "xferprof: pipe: %s\n", strerror(errno));
        *exit_code = XP_RUN_FAILED;
        return -1;
    }
    xp_session_leader = getsid(0) == getpid();

    /* Blocked across fork so that a signal arriving before the child's pid
     * is known is delivered (and forwarded) right after, not lost. */
    sigemptyset(&forwarded);
    for (size_t i = 0; i < XP_NFORWARDED; i++)
        sigaddset(&forwarded, xp_forwarded[i]);
    sigprocmask(SIG_BLOCK, &forwarded, &oldmask);

    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = xp_forward;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < XP_NFORWARDED; i++) {
        sigaction(xp_forwarded[i], NULL, &old[i]);
        /* A signal ignored on the way in (nohup) stays ignored by the
         * child through exec; nothing to forward. */
        if (old[i].sa_handler == SIG_IGN && !(old[i].sa_flags & SA_SIGINFO))
            continue;
        sigaction(xp_forwarded[i], &sa, NULL);
        installed[i] = true;
    }

    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        for (size_t i = 0; i < XP_NFORWARDED; i++)
            if (installed[i])
                sigaction(xp_forwarded[i], &old[i], NULL);
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        close(pipefd[0]);
        close(pipefd[1]);
        fprintf(stderr, "xferprof: fork: %s\n", strerror(e));
        *exit_code = XP_RUN_FAILED;
        return -1;
    }
    if (pid == 0) {
        /* The child gets the dispositions and mask CMD would have had
         * without us (our handler must not run here: it would signal pid 0,
         * our whole process group). */
        for (size_t i = 0; i < XP_NFORWARDED; i++)
            if (installed[i])
                sigaction(xp_forwarded[i], &old[i], NULL);
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        sigaction(SIGPIPE, &xp_entry_sigpipe, NULL);
        close(pipefd[0]);
        execvp(argv[0], argv);
        int e = errno;
        ssize_t w = write(pipefd[1], &e, sizeof e);
        (void)w;
        _exit(e == ENOENT ? 127 : 126);
    }

    xp_child_pid = pid;
    *child_out = pid;
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    close(pipefd[1]);

    int exec_errno = 0;
    ssize_t r;
    while ((r = read(pipefd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(pipefd[0]);

    /* Wait without reaping: while the pid is ours no other process can get
     * it, so the handler cannot hit a stranger. */
    siginfo_t info;
    memset(&info, 0, sizeof info);
    while (waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT) != 0 && errno == EINTR)
        ;
    sigprocmask(SIG_BLOCK, &forwarded, NULL);
    xp_child_pid = 0;
    for (size_t i = 0; i < XP_NFORWARDED; i++)
        if (installed[i])
            sigaction(xp_forwarded[i], &old[i], NULL);
    int wst = 0;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    /* From here a Ctrl-C stops the post-processing as it would any program
     * (recovery is resumable). */
    sigprocmask(SIG_SETMASK, &oldmask, NULL);

    if (r == (ssize_t)sizeof exec_errno) {
        fprintf(stderr, "xferprof: cannot run '%s': %s\n", argv[0], strerror(exec_errno));
        *exit_code = exec_errno == ENOENT ? 127 : 126;
        return -1;
    }
    if (WIFSIGNALED(wst)) {
        /* A program killed in raw or no-echo mode (an editor, a password
         * prompt) would leave the terminal that way; put back what it was.
         * Only from the foreground: elsewhere tcsetattr would stop us. */
        if (have_tio && tcgetpgrp(STDIN_FILENO) == getpgrp())
            tcsetattr(STDIN_FILENO, TCSADRAIN, &tio);
        return 128 + WTERMSIG(wst);
    }
    return WIFEXITED(wst) ? WEXITSTATUS(wst) : XP_RUN_FAILED;
}


int xp_command_run(int argc, char **argv)
{
    enum { XP_OPT_STACK_DEPTH = 256, XP_OPT_SIM, XP_OPT_FINGERPRINT, XP_OPT_WINDOW };
    static const struct option longopts[] = {
        {"output", required_argument, NULL, 'o'},
        {"stack-depth", required_argument, NULL, XP_OPT_STACK_DEPTH},
        {"fingerprint", required_argument, NULL, XP_OPT_FINGERPRINT},
        {"quiet", no_argument, NULL, 'q'},
        /* XP_OPT_WINDOW + i sets xp_window_vars[i] */
        {"capture-range", required_argument, NULL, XP_OPT_WINDOW},
        {"nvtx-capture", required_argument, NULL, XP_OPT_WINDOW + 1},
        {"delay", required_argument, NULL, XP_OPT_WINDOW + 2},
        {"duration", required_argument, NULL, XP_OPT_WINDOW + 3},
        {"sim", no_argument, NULL, XP_OPT_SIM},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    xp_run_opts o = {0};
    int c, depth;
    xp_fp_mode fp_mode;

    /* A message or the summary written to a closed stderr must not kill us:
     * we exit with CMD's status, or 2 for a usage error, whoever reads. */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigaction(SIGPIPE, &ign, &xp_entry_sigpipe);

    /* Options end at CMD, so CMD's own options are left alone even
     * without "--". */
    static const struct xp_cli_options opts = {"run", "o:qh", longopts, true};
    int state = 0;
    const char *operand;
    while ((c = xp_cli_next(&opts, argc, argv, &state, &operand)) != -1) {
        switch (c) {
        case 'o':
            o.output = optarg;
            break;
        case XP_OPT_STACK_DEPTH:
            if (xp_config_parse_depth(optarg, &depth) != 0)
                return xp_cli_usage_error("run", "--stack-depth: '%s' is not an integer from 0 to %d",
                                          optarg, XP_MAX_FRAMES);
            o.stack_depth = optarg;
            break;
        case XP_OPT_FINGERPRINT:
            if (xp_config_parse_fingerprint(optarg, &fp_mode) != 0)
                return xp_cli_usage_error("run", "--fingerprint: '%s' is not off, sampled or full",
                                          optarg);
            o.fingerprint = optarg;
            break;
        case 'q':
            o.quiet = true;
            break;
        case XP_OPT_WINDOW:
        case XP_OPT_WINDOW + 1:
        case XP_OPT_WINDOW + 2:
        case XP_OPT_WINDOW + 3:
            o.window[c - XP_OPT_WINDOW] = optarg;
            break;
        case XP_OPT_SIM:
            o.sim = true;
            break;
        case 'h':
            xp_run_usage(stdout);
            return 0;
        default:
            return 2;
        }
    }
    if (optind >= argc)
        return xp_cli_usage_error("run", "no command given (usage: xferprof run [options] -- CMD "
                                         "ARGS...)");
    char **cmd = argv + optind;

    char preload[PATH_MAX], simdir[PATH_MAX], err[1536];
    if (xp_locate_preload(preload, sizeof preload, err, sizeof err) != 0) {
        fprintf(stderr, "xferprof: %s%s\n", err,
                XP_HAVE_PRELOAD ? ""
                                : " (this xferprof was built without the CUDA toolkit, so without "
                                  "the preload: it reports, compares, exports and recovers "
                                  "databases recorded elsewhere)");
        return XP_RUN_FAILED;
    }
    /* LD_PRELOAD has no quoting: its elements are split at ':' and ' '. */
    if (strpbrk(preload, ": ")) {
        fprintf(stderr, "xferprof: cannot preload '%s': its path holds ':' or a space\n", preload);
        return XP_RUN_FAILED;
    }
    if (o.sim && xp_locate_sim_dir(simdir, sizeof simdir, err, sizeof err) != 0) {
        fprintf(stderr, "xferprof: %s\n", err);
        return XP_RUN_FAILED;
    }

    /* The settings go to the preload through the environment; an option
     * overrides a variable the user set, which otherwise passes through. */
    const char *pattern = o.output;
    if (!pattern) {
        const char *env = getenv("XFERPROF_OUTPUT");
        pattern = env && *env ? env : XP_DEFAULT_OUTPUT;
    }
    char output[PATH_MAX];
    if (xp_output_pattern(pattern, output, sizeof output) != 0 ||
        xp_output_folder(output) != 0 || xp_output_replaceable(output) != 0)
        return 2;
    bool set = setenv("XFERPROF_OUTPUT", output, 1) == 0 &&
               (!o.stack_depth || setenv("XFERPROF_STACK_DEPTH", o.stack_depth, 1) == 0) &&
               (!o.fingerprint || setenv("XFERPROF_FINGERPRINT", o.fingerprint, 1) == 0) &&
               (!o.quiet || setenv("XFERPROF_QUIET", "1", 1) == 0);
    for (size_t i = 0; set && i < sizeof xp_window_vars / sizeof xp_window_vars[0]; i++)
        set = !o.window[i] || setenv(xp_window_vars[i], o.window[i], 1) == 0;
    if (!set) {
        fprintf(stderr, "xferprof: setenv: %s\n", strerror(errno));
        return XP_RUN_FAILED;
    }
    /* Checks what the preload will read, inherited variables included:
     * better refused here than warned about in every process. */
    xp_config cfg;
    if (xp_config_load(&cfg, err, sizeof err) != 0) {
        fprintf(stderr, "xferprof: %s\n", err);
        return 2;
    }

    char manifest[PATH_MAX];
    int mfd = xp_run_make_manifest(manifest, sizeof manifest);
    if (mfd < 0)
        return XP_RUN_FAILED;
    /* --sim: the simulator's libcudart.so.12 is preloaded too, after the
     * profiler (whose hooks must come first). It stands in for NVIDIA's CUDA
     * 12 runtime even where a program finds that one through an RPATH
     * (PyTorch's wheels), which LD_LIBRARY_PATH cannot override: a loaded
     * library satisfies every NEEDED entry of its SONAME. */
    char cudart12[PATH_MAX];
    int n12 = o.sim ? snprintf(cudart12, sizeof cudart12, "%s/cuda12/libxpsim_cudart12.so", simdir) : -1;
    bool sim12 = n12 > 0 && (size_t)n12 < sizeof cudart12 && !strpbrk(cudart12, ": ") &&
                 access(cudart12, R_OK) == 0;
    if (setenv("XFERPROF_MANIFEST", manifest, 1) != 0 ||
        (sim12 && xp_prepend_env("LD_PRELOAD", cudart12) != 0) ||
        xp_prepend_env("LD_PRELOAD", preload) != 0 ||
        xp_set_nvtx_injection(preload, cfg.quiet) != 0 ||
        (o.sim && xp_prepend_env("LD_LIBRARY_PATH", simdir) != 0)) {
        fprintf(stderr, "xferprof: setenv: %s\n", strerror(errno));
        close(mfd);
        unlink(manifest);
        return XP_RUN_FAILED;
    }

    pid_t child = 0;
    int exit_code = 0;
    int status = xp_run_child(cmd, &child, &exit_code);
    if (status < 0) {
        close(mfd);
        unlink(manifest);
        return exit_code;
    }
    xp_run_finish(mfd, child, status, cfg.quiet);
    close(mfd);
    unlink(manifest);
    return status;
}
