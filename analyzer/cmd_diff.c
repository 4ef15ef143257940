/* cmd_diff.c: `xferprof diff BASE NEW`, comparing two runs call site by call site (docs/diff.md). */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xp_commands.h"
#include "xp_diff.h"
#include "xp_analysis.h"
#include "xp_cli.h"
#include "xp_output.h"


static void xp_diff_usage(FILE *f)
{
    fprintf(f,
            "Usage: xferprof diff BASE NEW [--format text|json|markdown|html] [-o FILE]\n"
            "                     [--threshold PCT] [--fail-on regression|any]\n"
            "                     [--by site|function|nvtx] [--set RULE.KEY=VALUE]...\n"
            "\n"
            "Compares two runs call site by call site. BASE and NEW are each a database,\n"
            "a comma-separated list of databases, or a directory (its *.db files): the\n"
            "processes of one job, paired by rank when all have one, else in order.\n"
            "\n"
            "  --format FMT      text (default), json (stable, docs/diff.md), markdown or\n"
            "                    html (one self-contained page; use -o)\n"
            "  -o FILE           write to FILE (replaced whole, never half-written)\n"
            "  --threshold PCT   a change counts past PCT%% of bytes or blocked time, and\n"
            "                    past 64 KiB or 1 ms (default 10)\n"
            "  --fail-on WHAT    exit 1 on a regression, or on any change\n"
            "  --by KEY          site (every frame, default), function (innermost\n"
            "                    function) or nvtx (innermost range, per instance)\n"
            "  --set R.K=V       a rule threshold for both runs' findings (docs/findings.md)\n"
            "\n"
            "Exit status: 0; 1 with --fail-on when it applies; 2 on bad usage or input.\n");
}

/* A growable list of owned paths. */
struct xp_paths {
    char **v;
    size_t n, cap;
};

static int xp_paths_add(struct xp_paths *p, const char *s, size_t len)
{
    if (xp_grow(&p->v, &p->cap, p->n + 1, sizeof *p->v) != 0)
        return -1;
    char *c = strndup(s, len);
    if (!c)
        return -1;
    p->v[p->n++] = c;
    return 0;
}

static void xp_paths_free(struct xp_paths *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->v[i]);
    free(p->v);
    *p = (struct xp_paths){0};
}

static int xp_strptr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool xp_is_db_name(const char *name)
{
    size_t n = strlen(name);
    return n > 3 && strcmp(name + n - 3, ".db") == 0;
}

/* A directory's *.db files, sorted (so that "by order" pairing is stable). */
static int xp_expand_dir(const char *dir, struct xp_paths *out, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t first = out->n;
    struct dirent *e;
    int rc = 0;
    while (rc == 0 && (e = readdir(d)) != NULL) {
        if (!xp_is_db_name(e->d_name))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (!path) {
            rc = -1;
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
            rc = xp_paths_add(out, path, strlen(path));
        free(path);
    }
    closedir(d);
    if (rc != 0) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (out->n == first) {
        snprintf(err, errlen, "%s: no databases (*.db) in this directory", dir);
        return -1;
    }
    xp_sort(out->v + first, out->n - first, sizeof *out->v, xp_strptr_cmp);
    return 0;
}

/* BASE or NEW: a database, a comma-separated list, or a directory. */
static int xp_expand_side(const char *arg, struct xp_paths *out, char *err, size_t errlen)
{
    const char *p = arg;
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len > 0) {
            char *one = strndup(p, len);
            struct stat sb;
            if (!one) {
                snprintf(err, errlen, "out of memory");
                return -1;
            }
            int rc = stat(one, &sb) == 0 && S_ISDIR(sb.st_mode)
                         ? xp_expand_dir(one, out, err, errlen)
                         : xp_paths_add(out, one, len);
            if (rc != 0 && !err[0])
                snprintf(err, errlen, "out of memory");
            free(one);
            if (rc != 0)
                return -1;
        }
        if (!comma)
            break;
        p = comma + 1;
    }
    if (out->n == 0) {
        snprintf(err, errlen, "'%s': no database given", arg);
        return -1;
    }
    return 0;
}

static int xp_render(FILE *f, enum xp_doc_format fmt, const struct xp_diff *d,
                     const struct xp_diff_inputs *in, bool color)
{
    switch (fmt) {
    case XP_FMT_JSON: return xp_render_diff_json(f, d, in);
    case XP_FMT_MARKDOWN: return xp_render_diff_md(f, d, in);
    case XP_FMT_HTML: return xp_render_diff_html(f, d, in);
    default: return xp_render_diff_text(f, d, in, color);
    }
}

int xp_command_diff(int argc, char **argv)
{
    struct xp_diff_options opt;
    enum xp_doc_format fmt = XP_FMT_TEXT;
    const char *out_path = NULL, *sides[2] = {NULL, NULL};
    size_t nsides = 0;
    bool only_args = false;

    xp_diff_options_default(&opt);
    /* Both runs' findings come from the same rules with the same thresholds. */
    struct xp_thresholds th;
    xp_thresholds_default(&th);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        if (only_args || a[0] != '-' || a[1] == '\0') {
            if (nsides == 2)
                return xp_cli_usage_error("diff", "unexpected argument '%s'", a);
            sides[nsides++] = a;
        } else if (strcmp(a, "--") == 0) {
            only_args = true;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            xp_diff_usage(stdout);
            return 0;
        } else if ((v = xp_cli_value(argc, argv, &i, "--format", &missing))) {
            if (xp_cli_format(v, &fmt) != 0)
                return xp_cli_usage_error("diff", "--format: '%s' is not text, json, markdown or html", v);
        } else if ((v = xp_cli_value(argc, argv, &i, "-o", &missing)) ||
                   (v = xp_cli_value(argc, argv, &i, "--output", &missing))) {
            if (!*v)
                return xp_cli_usage_error("diff", "-o: empty file name");
            out_path = v;
        } else if ((v = xp_cli_value(argc, argv, &i, "--threshold", &missing))) {
            char *end;
            errno = 0;
            double t = strtod(v, &end);
            if (end == v || *end || errno || !isfinite(t) || t < 0)
                return xp_cli_usage_error("diff", "--threshold: '%s' is not a percentage (a number >= 0)", v);
            opt.threshold_pct = t;
        } else if ((v = xp_cli_value(argc, argv, &i, "--fail-on", &missing))) {
            if (xp_diff_fail_on_parse(v, &opt.fail_on) != 0)
                return xp_cli_usage_error("diff", "--fail-on: '%s' is not regression or any", v);
        } else if ((v = xp_cli_value(argc, argv, &i, "--by", &missing))) {
            if (xp_diff_by_parse(v, &opt.by) != 0)
                return xp_cli_usage_error("diff", "--by: '%s' is not site, function or nvtx", v);
        } else if ((v = xp_cli_value(argc, argv, &i, "--set", &missing))) {
            char why[256] = "";
            if (xp_thresholds_set(&th, v, why, sizeof why) != 0)
                return xp_cli_usage_error("diff", "--set %s", why);
        } else if (missing) {
            return xp_cli_usage_error("diff", "option '%s' needs a value", a);
        } else {
            return xp_cli_usage_error("diff", "unknown option '%s'", a);
        }
    }
    if (nsides != 2)
        return xp_cli_usage_error("diff", "two runs needed (usage: xferprof diff BASE NEW)");

    struct xp_paths paths[2] = {{0}, {0}};
    struct xp_report rep[2] = {{0}, {0}};
    struct xp_diff d = {0};
    char err[1024] = "";
    int rc = 2;
    struct xp_output out;
    /* Opened first: an unwritable -o fails before the loading. */
    if (xp_output_open(&out, out_path) != 0) {
        fprintf(stderr, "xferprof diff: cannot write %s: %s\n", out_path, strerror(errno));
        return 2;
    }
    for (int s = 0; s < 2; s++) {
        rep[s].th = th;
        if (xp_expand_side(sides[s], &paths[s], err, sizeof err) != 0 ||
            xp_analysis_load(&rep[s], paths[s].v, paths[s].n, isatty(STDERR_FILENO), "diff", err,
                             sizeof err) != 0) {
            fprintf(stderr, "xferprof diff: %s\n", err);
            goto out;
        }
        /* Every finding, whatever its severity: one that appears is a regression. */
        xp_analysis_findings(&rep[s], XP_SEV_INFO);
    }
    if (xp_diff_compute(&rep[0], &rep[1], &opt, &d) != 0) {
        fprintf(stderr, "xferprof diff: out of memory\n");
        goto out;
    }
    struct xp_diff_inputs in = {paths[0].v, paths[0].n, paths[1].v, paths[1].n};
    const char *nc = getenv("NO_COLOR");
    bool color = !out_path && fmt == XP_FMT_TEXT && isatty(STDOUT_FILENO) && !(nc && *nc);
    rc = xp_render(out.f, fmt, &d, &in, color) == 0 ? 0 : 2;
    if (rc)
        fprintf(stderr, "xferprof diff: cannot write %s: %s\n", out_path ? out_path : "the output",
                strerror(errno ? errno : EIO));
out:
    if (xp_output_close(&out, rc == 0) != 0) {
        fprintf(stderr, "xferprof diff: cannot write %s: %s\n", out_path ? out_path : "the output",
                strerror(errno));
        rc = 2;
    } else if (rc == 0) {
        rc = d.exit_status;
    }
    xp_diff_free(&d);
    for (int s = 0; s < 2; s++) {
        xp_analysis_free(&rep[s]);
        xp_paths_free(&paths[s]);
    }
    return rc;
}
