/* xp_cli.h: what the subcommands' option parsing shares: option values, usage errors, document formats. */
#ifndef XP_CLI_H
#define XP_CLI_H

#include <stdbool.h>

/* The value of option argv[*i] when it is name: "NAME VALUE" (advancing *i
 * past VALUE), "NAME=VALUE", and for a one-letter option also "-oVALUE".
 * NULL when argv[*i] is another option, or when it is this one with no value
 * left (then *missing (OUT) is set). */
const char *xp_cli_value(int argc, char **argv, int *i, const char *name, bool *missing);

/* Prints "xferprof CMD: <message> (see 'xferprof CMD --help')" on stderr
 * and returns 2, the exit status of bad usage. */
int xp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints "xferprof CMD: MSG" on stderr as one line (at most 512 bytes):
 * SQLite's messages about a corrupt schema quote its SQL, line breaks
 * included. */
void xp_cli_error_line(const char *cmd, const char *msg);

/* The formats of report and diff (--format). */
enum xp_doc_format { XP_FMT_TEXT, XP_FMT_JSON, XP_FMT_MARKDOWN, XP_FMT_HTML };

/* "text", "json", "markdown" (or "md"), "html".  Returns 0, or -1 when s is
 * none of them. */
int xp_cli_format(const char *s, enum xp_doc_format *out);

#endif
