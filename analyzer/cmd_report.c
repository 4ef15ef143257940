/* cmd_report.c: `xferprof report DB...`, the post-mortem of one or more run databases. */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xp_commands.h"
#include "xp_analysis.h"
#include "xp_cli.h"
#include "xp_output.h"
#include "xp_paths.h"
#include "xp_progress.h"
#include "xp_render.h"
#include "xp_report.h"
#include "xp_totals.h"


struct xp_report_opts {
    enum xp_doc_format format;
    const char *out;           /* NULL: stdout */
    size_t top;
    enum xp_severity min_sev;
    char **dbs;
    int n_dbs;
};

static void xp_report_usage(FILE *f)
{
    fprintf(f,
            "Usage: xferprof report DB|DIR... [--format text|json|markdown|html] [-o FILE] [--top N]\n"
            "                       [--min-severity info|warning|error] [--set RULE.KEY=VALUE]...\n"
            "\n"
            "Reads the databases that `xferprof run` left (a pending journal DB.xpj is\n"
            "ingested first; a folder DIR stands for its *.db files, the processes of one\n"
            "job) and reports, per process and for all together: copies and\n"
            "bytes per direction, the call sites that move the most bytes and block the\n"
            "longest, device memory over time, and findings with their cost and fix.\n"
            "\n"
            "  --format FMT          text (default), json (stable, see docs/report.md), markdown,\n"
            "                        or html (one self-contained page with charts; use -o)\n"
            "  -o FILE               write to FILE (replaced whole, never half-written)\n"
            "  --top N               call sites shown per process by bytes and by blocked time (10)\n"
            "  --min-severity SEV    leave out findings below SEV (info)\n"
            "  --set RULE.KEY=VALUE  a rule threshold, e.g. --set sync-in-loop.min_count=20\n"
            "\n"
            "Exit status: 0 (with or without findings), 2 for bad usage or input.\n");
}

/* Returns -1 to go on, else the exit status. */
static int xp_report_parse(int argc, char **argv, struct xp_report_opts *o, struct xp_thresholds *th)
{
    enum { OPT_FORMAT = 256, OPT_TOP, OPT_MIN_SEVERITY, OPT_SET };
    static const struct option longopts[] = {
        {"format", required_argument, NULL, OPT_FORMAT},
        {"output", required_argument, NULL, 'o'},
        {"top", required_argument, NULL, OPT_TOP},
        {"min-severity", required_argument, NULL, OPT_MIN_SEVERITY},
        {"set", required_argument, NULL, OPT_SET},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    static const struct xp_cli_options opts = {"report", "o:h", longopts, false};
    o->dbs = calloc((size_t)argc + 1, sizeof *o->dbs);
    if (!o->dbs) {
        fprintf(stderr, "xferprof report: out of memory\n");
        return 2;
    }
    int c, state = 0;
    const char *db;
    while ((c = xp_cli_next(&opts, argc, argv, &state, &db)) != -1) {
        switch (c) {
        case 1:
            o->dbs[o->n_dbs++] = (char *)db;
            break;
        case OPT_FORMAT:
            if (xp_cli_format(optarg, &o->format) != 0)
                return xp_cli_usage_error("report", "--format: '%s' is not text, json, markdown or html",
                                          optarg);
            break;
        case 'o':
            if (!*optarg)
                return xp_cli_usage_error("report", "-o needs a file name");
            o->out = optarg;
            break;
        case OPT_TOP: {
            char *end = NULL;
            errno = 0;
            long n = strtol(optarg, &end, 10);
            if (!*optarg || *end || errno || n < 1 || n > 100000)
                return xp_cli_usage_error("report", "--top: '%s' is not a number from 1 to 100000",
                                          optarg);
            o->top = (size_t)n;
            break;
        }
        case OPT_MIN_SEVERITY:
            if (xp_severity_parse(optarg, &o->min_sev) != 0)
                return xp_cli_usage_error("report", "--min-severity: '%s' is not info, warning or error",
                                          optarg);
            break;
        case OPT_SET:
            if (xp_cli_set(th, "report", optarg) != 0)
                return 2;
            break;
        case 'h':
            xp_report_usage(stdout);
            return 0;
        default:
            return 2;
        }
    }
    while (optind < argc)   /* after "--" */
        o->dbs[o->n_dbs++] = argv[optind++];
    if (o->n_dbs == 0)
        return xp_cli_usage_error("report", "no database given (usage: xferprof report DB...)");
    return -1;
}

static int xp_report_render(struct xp_report *r, const struct xp_report_opts *o, FILE *f)
{
    struct xp_totals many = {0};
    struct xp_totals *proc = calloc(r->n_procs ? r->n_procs : 1, sizeof *proc);
    struct xp_site *sites = NULL;
    size_t n_sites = 0;
    int rc = -1;
    if (!proc)
        goto out;
    for (size_t i = 0; i < r->n_procs; i++)
        if (xp_totals_compute(&r->procs[i], 1, &proc[i]) != 0 ||
            xp_sites_top(&r->procs[i], i, o->top, &sites, &n_sites) != 0)
            goto out;
    /* One process (the usual report) is its own total: not a second pass
     * over its copies. */
    const struct xp_totals *all = &proc[0];
    if (r->n_procs != 1) {
        if (xp_totals_compute(r->procs, r->n_procs, &many) != 0)
            goto out;
        all = &many;
    }
    const char *nc = getenv("NO_COLOR");
    struct xp_summary s = {
        .r = r, .all = all, .proc = proc, .sites = sites, .n_sites = n_sites, .top = o->top,
        .color = f == stdout && isatty(STDOUT_FILENO) && !(nc && *nc),
    };
    if (o->format == XP_FMT_JSON)
        rc = xp_render_json(f, &s);
    else if (o->format == XP_FMT_MARKDOWN)
        rc = xp_render_markdown(f, &s);
    else if (o->format == XP_FMT_HTML)
        rc = xp_render_html(f, &s);
    else
        rc = xp_render_text(f, &s);
out:
    xp_totals_free(&many);
    for (size_t i = 0; proc && i < r->n_procs; i++)
        xp_totals_free(&proc[i]);
    free(proc);
    free(sites);
    return rc;
}

int xp_command_report(int argc, char **argv)
{
    struct xp_report r = {0};
    struct xp_report_opts o = {.format = XP_FMT_TEXT, .top = 10, .min_sev = XP_SEV_INFO};
    xp_thresholds_default(&r.th);
    int rc = xp_report_parse(argc, argv, &o, &r.th);
    if (rc >= 0) {
        free(o.dbs);
        return rc;
    }
    struct xp_output sink;
    /* Opened first: an unwritable -o fails before minutes of loading. */
    if (xp_output_open(&sink, o.out) != 0) {
        fprintf(stderr, "xferprof report: cannot write %s: %s\n", o.out, strerror(errno));
        free(o.dbs);
        return 2;
    }
    rc = 2;
    char err[1200] = "";
    /* A folder stands for its databases: the processes of one job. */
    struct xp_paths dbs = {0};
    for (int i = 0; i < o.n_dbs; i++)
        if (xp_paths_expand(o.dbs[i], &dbs, err, sizeof err) != 0) {
            fprintf(stderr, "xferprof report: %s\n", err);
            goto out;
        }
    xp_progress_start("report");
    int loaded = xp_analysis_load(&r, dbs.v, dbs.n, err, sizeof err);
    if (loaded == 0)
        xp_analysis_findings(&r, o.min_sev);
    xp_progress_clear(); /* before the report: stdout may be the same terminal */
    if (loaded != 0) {
        fprintf(stderr, "xferprof report: %s\n", err);
        goto out;
    }
    if (xp_report_render(&r, &o, sink.f) != 0) {
        fprintf(stderr, "xferprof report: cannot write %s: %s\n", o.out ? o.out : "the report",
                errno ? strerror(errno) : "out of memory");
        goto out;
    }
    rc = 0;
out:
    if (xp_output_close(&sink, rc == 0) != 0 && rc == 0) {
        fprintf(stderr, "xferprof report: cannot write %s: %s\n", o.out ? o.out : "the report",
                strerror(errno));
        rc = 2;
    }
    xp_analysis_free(&r);
    xp_paths_free(&dbs);
    free(o.dbs);
    return rc;
}
