/* xp_commands.h: the xferprof subcommands, one file each (cmd_<name>.c), called by main() in xferprof.c. */
#ifndef XP_COMMANDS_H
#define XP_COMMANDS_H

#ifndef XP_VERSION
#define XP_VERSION "0.1.0"
#endif

/* Each gets the arguments after "xferprof" (argv[0] is the command's name)
 * and returns the process's exit status: 0, 2 for bad usage or input, or what
 * the command documents. */
int xp_command_run(int argc, char **argv);
int xp_command_recover(int argc, char **argv);
int xp_command_report(int argc, char **argv);
int xp_command_diff(int argc, char **argv);
int xp_command_export(int argc, char **argv);
int xp_command_symbolize(int argc, char **argv);

#endif
