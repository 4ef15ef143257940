/* xp_cli.h: what the subcommands' option parsing shares: getopt_long with one error style, --set, usage errors, document formats. */
#ifndef XP_CLI_H
#define XP_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct option;

/* One subcommand's options, for xp_cli_next: getopt_long's tables and the
 * command's name for its messages.  shortopts without getopt's leading
 * mode characters: xp_cli_next adds them. */
struct xp_cli_options {
    const char *cmd;                 /* "report" */
    const char *shortopts;           /* "o:h" */
    const struct option *longopts;
    bool stop_at_operand;            /* run: the first operand is CMD, the rest is its */
};

/* The next option of argv, getopt_long as every subcommand parses it, so
 * that all say the same about the same mistakes.  Returns the option's value
 * (its short letter or its longopts val, optarg holding its value); 1 with
 * *operand set for an operand (a database, a run), in order wherever it is
 * among the options (unless stop_at_operand); -1 at the end ("--" ends the
 * options; with stop_at_operand, optind is then CMD's index); or -2 after
 * printing "xferprof CMD: unknown option '--x' (see ...)", "option
 * '--format' needs a value" or "option '--help' takes no value" (the
 * caller exits 2).  Starts over when *state is 0. */
int xp_cli_next(const struct xp_cli_options *o, int argc, char **argv, int *state,
                const char **operand);

/* Prints "xferprof CMD: <message> (see 'xferprof CMD --help')" on stderr
 * and returns 2, the exit status of bad usage. */
int xp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "xferprof CMD: MSG" on stderr as one line (at most 512 bytes):
 * SQLite's messages about a corrupt schema quote its SQL, line breaks
 * included. */
void xp_cli_error_line(const char *cmd, const char *msg);

/* A command that takes no option but --help ("xferprof CMD DB..."; recover,
 * symbolize): one(db) for each database given, in order, stdout flushed
 * after each (its lines stay in order with the errors on stderr).  Returns
 * the exit status: 0, 2 when one(db) failed for any (the others are still
 * done) or on bad usage, 0 after printing usage for --help. */
int xp_cli_each_db(const char *cmd, int argc, char **argv, void (*usage)(FILE *),
                   int (*one)(const char *db));

struct xp_thresholds;

/* --set RULE.KEY=VALUE into th, for cmd's messages.  Returns 0, or 2 after
 * printing why (the whole message: the rule's settings can be many). */
int xp_cli_set(struct xp_thresholds *th, const char *cmd, const char *assignment);

/* The formats of report and diff (--format). */
enum xp_doc_format { XP_FMT_TEXT, XP_FMT_JSON, XP_FMT_MARKDOWN, XP_FMT_HTML };

/* "text", "json", "markdown" (or "md"), "html".  Returns 0, or -1 when s is
 * none of them. */
int xp_cli_format(const char *s, enum xp_doc_format *out);

#endif
