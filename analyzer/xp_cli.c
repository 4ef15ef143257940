/* xp_cli.c: option values, usage errors and document formats for the subcommands. */
#include "xp_cli.h"
#include "xp_progress.h"
#include "xp_report.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

int xp_cli_next(const struct xp_cli_options *o, int argc, char **argv, int *state,
                const char **operand)
{
    /* '-': operands come back in order, as option 1, whatever POSIXLY_CORRECT
     * says; '+': stop at the first one.  ':': a missing value is told apart
     * from an unknown option. */
    char shortopts[64];
    snprintf(shortopts, sizeof shortopts, "%c:%s", o->stop_at_operand ? '+' : '-', o->shortopts);
    if (*state == 0) {
        optind = 0;   /* GNU: start over, re-reading the mode characters */
        *state = 1;
    }
    opterr = 0;
    int c = getopt_long(argc, argv, shortopts, o->longopts, NULL);
    if (c == 1) {
        *operand = optarg;
        return 1;
    }
    if (c == ':') {
        if (strncmp(argv[optind - 1], "--", 2) != 0)
            xp_cli_usage_error(o->cmd, "option '-%c' needs a value", optopt);
        else
            xp_cli_usage_error(o->cmd, "option '%s' needs a value", argv[optind - 1]);
        return -2;
    }
    if (c == '?') {
        const char *a = argv[optind - 1];
        if (strncmp(a, "--", 2) != 0) {
            xp_cli_usage_error(o->cmd, "unknown option '-%c'", optopt);
            return -2;
        }
        /* Named as written, without a value given to it. */
        const char *eq = strchr(a, '=');
        int len = (int)(eq ? (size_t)(eq - a) : strlen(a));
        bool known = false;
        for (const struct option *l = o->longopts; eq && l->name; l++)
            known |= (int)strlen(l->name) == len - 2 && strncmp(l->name, a + 2, (size_t)len - 2) == 0;
        xp_cli_usage_error(o->cmd, "%s '%.*s'%s", known ? "option" : "unknown option", len, a,
                           known ? " takes no value" : "");
        return -2;
    }
    return c;
}

int xp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "xferprof %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see 'xferprof %s --help')\n", cmd);
    return 2;
}

void xp_cli_error_line(const char *cmd, const char *msg)
{
    char line[512];
    size_t n = 0;
    for (const char *p = msg; *p && n + 4 < sizeof line; p++)
        line[n++] = (*p == '\n' || *p == '\r' || *p == '\t') ? ' ' : *p;
    if (msg[n] != '\0')
        memcpy(line + n, "...", 3), n += 3;
    line[n] = '\0';
    xp_progress_clear();
    fprintf(stderr, "xferprof %s: %s\n", cmd, line);
}

int xp_cli_each_db(const char *cmd, int argc, char **argv, void (*usage)(FILE *),
                   int (*one)(const char *db))
{
    static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const struct xp_cli_options opts = {cmd, "h", longopts, false};
    char **dbs = calloc((size_t)argc + 1, sizeof *dbs);
    size_t n = 0;
    if (!dbs) {
        fprintf(stderr, "xferprof %s: out of memory\n", cmd);
        return 2;
    }
    int c, state = 0, rc = -1;
    const char *db;
    while (rc < 0 && (c = xp_cli_next(&opts, argc, argv, &state, &db)) != -1) {
        if (c == 1) {
            dbs[n++] = (char *)db;
        } else if (c == 'h') {
            usage(stdout);
            rc = 0;
        } else {
            rc = 2;
        }
    }
    while (rc < 0 && optind < argc)   /* after "--" */
        dbs[n++] = argv[optind++];
    if (rc < 0 && n == 0)
        rc = xp_cli_usage_error(cmd, "no database given (usage: xferprof %s DB...)", cmd);
    if (rc < 0) {
        rc = 0;
        for (size_t i = 0; i < n; i++) {
            if (one(dbs[i]) != 0)
                rc = 2;
            fflush(stdout);
        }
    }
    free(dbs);
    return rc;
}

int xp_cli_set(struct xp_thresholds *th, const char *cmd, const char *assignment)
{
    char why[1024] = "";
    if (!*assignment)
        return xp_cli_usage_error(cmd, "--set needs RULE.KEY=VALUE");
    if (xp_thresholds_set(th, assignment, why, sizeof why) != 0)
        return xp_cli_usage_error(cmd, "--set %s", why);
    return 0;
}

int xp_cli_format(const char *s, enum xp_doc_format *out)
{
    static const struct {
        const char *name;
        enum xp_doc_format f;
    } names[] = {{"text", XP_FMT_TEXT}, {"json", XP_FMT_JSON}, {"markdown", XP_FMT_MARKDOWN},
                 {"md", XP_FMT_MARKDOWN}, {"html", XP_FMT_HTML}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) {
            *out = names[i].f;
            return 0;
        }
    return -1;
}
