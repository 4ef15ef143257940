/* xp_cli.c: option values, usage errors and document formats for the subcommands. */
#include "xp_cli.h"
#include "xp_progress.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *xp_cli_value(int argc, char **argv, int *i, const char *name, bool *missing)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0)
        return NULL;
    if (a[n] == '\0') {
        if (*i + 1 >= argc) {
            *missing = true;
            return NULL;
        }
        return argv[++*i];
    }
    if (a[n] == '=')
        return a + n + 1;
    /* "-oFILE": only a one-letter option takes its value attached. */
    if (n == 2 && name[0] == '-' && name[1] != '-')
        return a + n;
    return NULL;
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
