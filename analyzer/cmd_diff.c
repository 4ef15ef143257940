/* cmd_diff.c: `xferprof diff BASE NEW`, comparing two runs call site by call site (docs/diff.md). */
#include <errno.h>
#include <getopt.h>
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
    enum { OPT_FORMAT = 256, OPT_THRESHOLD, OPT_FAIL_ON, OPT_BY, OPT_SET };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"output", required_argument, NULL, 'o'},
        {"threshold", required_argument, NULL, OPT_THRESHOLD},
        {"fail-on", required_argument, NULL, OPT_FAIL_ON},
        {"by", required_argument, NULL, OPT_BY},
        {"set", required_argument, NULL, OPT_SET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct xp_cli_options opts = {"diff", "o:h", longopts, false};

    xp_diff_options_default(&opt);
    /* Both runs' findings come from the same rules with the same thresholds. */
    struct xp_thresholds th;
    xp_thresholds_default(&th);
    int c, state = 0;
    const char *side;
    while ((c = xp_cli_next(&opts, argc, argv, &state, &side)) != -1) {
        switch (c) {
        case 1:
            if (nsides == 2)
                return xp_cli_usage_error("diff", "unexpected argument '%s'", side);
            sides[nsides++] = side;
            break;
        case OPT_FORMAT:
            if (xp_cli_format(optarg, &fmt) != 0)
                return xp_cli_usage_error("diff", "--format: '%s' is not text, json, markdown or html",
                                          optarg);
            break;
        case 'o':
            if (!*optarg)
                return xp_cli_usage_error("diff", "-o needs a file name");
            out_path = optarg;
            break;
        case OPT_THRESHOLD: {
            char *end;
            errno = 0;
            double t = strtod(optarg, &end);
            if (end == optarg || *end || errno || !isfinite(t) || t < 0)
                return xp_cli_usage_error("diff", "--threshold: '%s' is not a percentage (a number >= 0)",
                                          optarg);
            opt.threshold_pct = t;
            break;
        }
        case OPT_FAIL_ON:
            if (xp_diff_fail_on_parse(optarg, &opt.fail_on) != 0)
                return xp_cli_usage_error("diff", "--fail-on: '%s' is not regression or any", optarg);
            break;
        case OPT_BY:
            if (xp_diff_by_parse(optarg, &opt.by) != 0)
                return xp_cli_usage_error("diff", "--by: '%s' is not site, function or nvtx", optarg);
            break;
        case OPT_SET:
            if (xp_cli_set(&th, "diff", optarg) != 0)
                return 2;
            break;
        case 'h':
            xp_diff_usage(stdout);
            return 0;
        default:
            return 2;
        }
    }
    for (; optind < argc; optind++) {   /* after "--" */
        if (nsides == 2)
            return xp_cli_usage_error("diff", "unexpected argument '%s'", argv[optind]);
        sides[nsides++] = argv[optind];
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
