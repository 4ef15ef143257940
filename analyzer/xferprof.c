/* xferprof.c: the xferprof command's entry point; hands each subcommand to its own file (cmd_<name>.c). */
#include <stdio.h>
#include <string.h>

#include "xp_commands.h"

static const struct {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} xp_commands[] = {
    {"run", xp_command_run, "run a program under the profiler"},
    {"recover", xp_command_recover, "finish the databases of processes that died while profiled"},
    {"report", xp_command_report, "report on run databases: totals, call sites, findings"},
    {"diff", xp_command_diff, "compare two runs call site by call site"},
    {"export", xp_command_export, "write a run as a Perfetto/Chrome trace (JSON) or the copies as CSV"},
    {"symbolize", xp_command_symbolize, "name the frames of every stack in the database (stack_frames)"},
};
#define XP_NCOMMANDS (sizeof xp_commands / sizeof xp_commands[0])

static void xp_usage(FILE *f)
{
    fprintf(f, "Usage: xferprof COMMAND [ARGS...]\n"
               "       xferprof --help | --version\n"
               "\n"
               "Records every CUDA allocation and every host<->device copy of a program, with\n"
               "call stacks, into a SQLite database.\n"
               "\n"
               "Commands:\n");
    for (size_t i = 0; i < XP_NCOMMANDS; i++)
        fprintf(f, "  %-10s %s\n", xp_commands[i].name, xp_commands[i].summary);
    fprintf(f, "\n"
               "Run 'xferprof COMMAND --help' for a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        xp_usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0) {
        xp_usage(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("xferprof %s\n", XP_VERSION);
        return 0;
    }
    /* "xferprof help run" reads as naturally as "xferprof run --help". */
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) {
            xp_usage(stdout);
            return 0;
        }
        char help[] = "--help";
        char *args[] = {argv[2], help, NULL};
        for (size_t i = 0; i < XP_NCOMMANDS; i++)
            if (strcmp(argv[2], xp_commands[i].name) == 0)
                return xp_commands[i].fn(2, args);
        cmd = argv[2];
    } else {
        for (size_t i = 0; i < XP_NCOMMANDS; i++)
            if (strcmp(cmd, xp_commands[i].name) == 0)
                return xp_commands[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "xferprof: unknown command '%s'\n\n", cmd);
    xp_usage(stderr);
    return 2;
}
