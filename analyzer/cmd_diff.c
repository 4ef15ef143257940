/* cmd_diff.c: `xferprof diff BASE NEW`, comparing two runs call site by call site (docs/diff.md). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xp_commands.h"
#include "xp_diff.h"
#include "xp_analysis.h"
#include "xp_cli.h"
#include "xp_output.h"
#include "xp_paths.h"
#include "xp_progress.h"


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
    xp_progress_start("diff");
    for (int s = 0; s < 2; s++) {
        rep[s].th = th;
        if (xp_paths_expand_list(sides[s], &paths[s], err, sizeof err) != 0 ||
            xp_analysis_load(&rep[s], paths[s].v, paths[s].n, err, sizeof err) != 0) {
            xp_progress_clear();
            fprintf(stderr, "xferprof diff: %s\n", err);
            goto out;
        }
        /* Every finding, whatever its severity: one that appears is a regression. */
        xp_analysis_findings(&rep[s], XP_SEV_INFO);
    }
    xp_progress_stage("comparing");
    int computed = xp_diff_compute(&rep[0], &rep[1], &opt, &d);
    xp_progress_clear(); /* before the diff: stdout may be the same terminal */
    if (computed != 0) {
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
