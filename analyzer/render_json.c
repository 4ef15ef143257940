/* render_json.c: the report as JSON (`--format json`), the stable machine interface documented in docs/report.md. */
#include <math.h>

#include "xp_json.h"
#include "xp_render.h"

static void xp_j_frames(struct xp_json *j, const struct xp_process *p, uint32_t stack_id)
{
    const struct xp_stack *st = xp_site_stack(p, stack_id);
    xp_json_array(j);
    for (uint32_t i = 0; st && i < st->nframes; i++) {
        const struct xp_frame *f = &st->frames[i];
        xp_json_object(j);
        xp_json_key(j, "function"), xp_json_str(j, f->function);
        xp_json_key(j, "demangled"), xp_json_str(j, xp_frame_name(f));
        xp_json_key(j, "inlined"), xp_json_bool(j, f->inlined);
        xp_json_key(j, "file"), xp_json_str(j, f->file);
        xp_json_key(j, "line");
        if (f->line > 0)
            xp_json_int(j, f->line);
        else
            xp_json_null(j);
        xp_json_key(j, "module"), xp_json_str(j, f->module);
        xp_json_key(j, "offset"), xp_json_uint(j, f->module ? f->offset : 0);
        xp_json_key(j, "address"), xp_json_uint(j, f->addr);
        xp_json_key(j, "python"), xp_json_bool(j, f->python);
        xp_json_key(j, "library"), xp_json_bool(j, f->library);
        xp_json_end(j);
    }
    xp_json_end(j);
}

/* The index in "frames" of the site's top user frame (null without frames). */
static void xp_j_top(struct xp_json *j, const struct xp_process *p, uint32_t stack_id)
{
    const struct xp_stack *st = xp_site_stack(p, stack_id);
    if (st && st->nframes)
        xp_json_uint(j, st->top);
    else
        xp_json_null(j);
}

static void xp_j_stack_id(struct xp_json *j, uint32_t id)
{
    if (id == XP_NONE_ID)
        xp_json_null(j);
    else
        xp_json_uint(j, id);
}

static void xp_j_totals(struct xp_json *j, const struct xp_totals *t)
{
    xp_json_object(j);
    xp_json_key(j, "copies"), xp_json_uint(j, t->copies);
    xp_json_key(j, "bytes"), xp_json_uint(j, t->bytes);
    xp_json_key(j, "time_ns"), xp_json_int(j, t->time_ns);
    xp_json_key(j, "blocked_ns"), xp_json_int(j, t->blocked_ns);
    xp_json_key(j, "directions");
    xp_json_object(j);
    for (int d = XP_DIR_H2D; d < XP_DIR_COUNT; d++) {
        const struct xp_dir_totals *x = &t->dir[d];
        xp_json_key(j, xp_dir_name((xp_direction)d));
        xp_json_object(j);
        xp_json_key(j, "count"), xp_json_uint(j, x->count);
        xp_json_key(j, "bytes"), xp_json_uint(j, x->bytes);
        xp_json_key(j, "time_ns"), xp_json_int(j, x->time_ns);
        xp_json_key(j, "blocked_ns"), xp_json_int(j, x->blocked_ns);
        xp_json_key(j, "pinned_bytes"), xp_json_uint(j, x->pinned_bytes);
        xp_json_key(j, "pageable_bytes"), xp_json_uint(j, x->pageable_bytes);
        xp_json_key(j, "managed_bytes"), xp_json_uint(j, x->managed_bytes);
        xp_json_key(j, "sync"), xp_json_uint(j, x->sync);
        xp_json_key(j, "async"), xp_json_uint(j, x->async);
        xp_json_key(j, "async_pageable"), xp_json_uint(j, x->async_pageable);
        xp_json_key(j, "bandwidth_gbps"), xp_json_double(j, xp_gbps(x->bw_bytes, x->bw_ns));
        xp_json_end(j);
    }
    xp_json_end(j);
    xp_json_key(j, "pinned_share"), xp_json_double(j, xp_share(t->pinned_bytes, t->host_bytes));
    xp_json_key(j, "blocking_share"), xp_json_double(j, xp_share(t->blocking_copies, t->copies));
    xp_json_key(j, "bandwidth");
    xp_json_array(j);
    for (int d = XP_DIR_H2D; d < XP_DIR_COUNT; d++)
        for (int h = 0; h < XP_HM_COUNT; h++) {
            const struct xp_bw_totals *b = &t->bw[d][h];
            if (!b->copies)
                continue;
            xp_json_object(j);
            xp_json_key(j, "direction"), xp_json_str(j, xp_dir_name((xp_direction)d));
            xp_json_key(j, "host_mem"), xp_json_str(j, xp_hostmem_name((enum xp_hostmem)h));
            xp_json_key(j, "copies"), xp_json_uint(j, b->copies);
            xp_json_key(j, "bytes"), xp_json_uint(j, b->bytes);
            xp_json_key(j, "time_ns"), xp_json_int(j, b->time_ns);
            xp_json_key(j, "gbps"), xp_json_double(j, xp_gbps(b->bytes, b->time_ns));
            xp_json_end(j);
        }
    xp_json_end(j);
    xp_json_key(j, "memory");
    xp_json_object(j);
    xp_json_key(j, "peak_bytes"), xp_json_uint(j, t->peak_bytes);
    xp_json_key(j, "peak_ns"), xp_json_int(j, t->peak_ns);
    xp_json_key(j, "live_at_exit_bytes"), xp_json_uint(j, t->live_at_exit_bytes);
    xp_json_key(j, "live_at_exit_count"), xp_json_uint(j, t->live_at_exit_count);
    xp_json_key(j, "allocations"), xp_json_uint(j, t->allocations);
    xp_json_key(j, "frees"), xp_json_uint(j, t->frees);
    xp_json_key(j, "timeline");
    xp_json_array_inline(j);
    for (size_t i = 0; i < t->n_timeline; i++) {
        xp_json_array_inline(j);
        xp_json_int(j, t->timeline[i].t_ns);
        xp_json_int(j, t->timeline[i].live_bytes);
        xp_json_end(j);
    }
    xp_json_end(j);
    xp_json_end(j);
    xp_json_key(j, "failed_calls"), xp_json_uint(j, t->failed_calls);
    xp_json_key(j, "failed_by_api");
    xp_json_object(j);
    for (size_t i = 0; i < t->n_failed_by_api; i++)
        xp_json_key(j, t->failed_by_api[i].api), xp_json_uint(j, t->failed_by_api[i].n);
    xp_json_end(j);
    xp_json_key(j, "failed_by_status");
    xp_json_array(j);
    for (size_t i = 0; i < t->n_failed_by_status; i++) {
        const struct xp_status_count *x = &t->failed_by_status[i];
        xp_json_object(j);
        xp_json_key(j, "api"), xp_json_str(j, x->api);
        xp_json_key(j, "status"), xp_json_int(j, x->status);
        xp_json_key(j, "status_name"), xp_json_str(j, xp_cuda_status_name(x->driver, x->status));
        xp_json_key(j, "count"), xp_json_uint(j, x->n);
        xp_json_end(j);
    }
    xp_json_end(j);
    xp_json_key(j, "memsets"), xp_json_uint(j, t->memsets);
    xp_json_key(j, "syncs"), xp_json_uint(j, t->syncs);
    xp_json_key(j, "sync_time_ns"), xp_json_int(j, t->sync_time_ns);
    xp_json_key(j, "graph_copies"), xp_json_uint(j, t->graph_copies);
    xp_json_key(j, "graph_launches"), xp_json_uint(j, t->graph_launches);
    xp_json_end(j);
}

/* A bit set of codes as an array of their names. */
static void xp_j_names(struct xp_json *j, uint8_t set, int count, const char *(*name)(int))
{
    xp_json_array_inline(j);
    for (int i = 0; i < count; i++)
        if (set & (1u << i))
            xp_json_str(j, name(i));
    xp_json_end(j);
}

static const char *xp_dir_n(int i) { return xp_dir_name((xp_direction)i); }
static const char *xp_hm_n(int i) { return xp_hostmem_name((enum xp_hostmem)i); }
static const char *xp_bl_n(int i) { return xp_blocking_name((enum xp_block_class)i); }

static void xp_j_site(struct xp_json *j, const struct xp_site *s)
{
    const struct xp_process *p = s->proc;
    xp_json_object(j);
    xp_json_key(j, "process"), xp_json_uint(j, s->proc_index);
    xp_json_key(j, "stack_id"), xp_j_stack_id(j, s->stack_id);
    xp_json_key(j, "frames"), xp_j_frames(j, p, s->stack_id);
    xp_json_key(j, "top_frame"), xp_j_top(j, p, s->stack_id);
    xp_json_key(j, "copies"), xp_json_uint(j, s->copies);
    xp_json_key(j, "bytes"), xp_json_uint(j, s->bytes);
    xp_json_key(j, "time_ns"), xp_json_int(j, s->time_ns);
    xp_json_key(j, "blocked_ns"), xp_json_int(j, s->blocked_ns);
    xp_json_key(j, "apis");
    xp_json_array_inline(j);
    for (uint8_t i = 0; i < s->n_apis; i++)
        xp_json_str(j, s->apis[i] < p->n_api ? p->api_names[s->apis[i]] : "unknown");
    xp_json_end(j);
    xp_json_key(j, "directions"), xp_j_names(j, s->directions, XP_DIR_COUNT, xp_dir_n);
    xp_json_key(j, "host_mem"), xp_j_names(j, s->host_mems, XP_HM_COUNT, xp_hm_n);
    xp_json_key(j, "blocking"), xp_j_names(j, s->blockings, XP_BL_COUNT, xp_bl_n);
    xp_json_end(j);
}

static size_t xp_proc_index(const struct xp_report *r, const struct xp_process *p)
{
    return p && p >= r->procs && p < r->procs + r->n_procs ? (size_t)(p - r->procs) : 0;
}

static void xp_j_finding(struct xp_json *j, const struct xp_report *r, const struct xp_finding *f)
{
    xp_json_object(j);
    xp_json_key(j, "rule"), xp_json_str(j, f->rule);
    xp_json_key(j, "severity"), xp_json_str(j, xp_severity_name(f->severity));
    xp_json_key(j, "process"), xp_json_uint(j, xp_proc_index(r, f->proc));
    xp_json_key(j, "site");
    xp_json_object(j);
    xp_json_key(j, "stack_id"), xp_j_stack_id(j, f->stack_id);
    xp_json_key(j, "frames"), xp_j_frames(j, f->proc, f->stack_id);
    xp_json_key(j, "top_frame"), xp_j_top(j, f->proc, f->stack_id);
    xp_json_end(j);
    xp_json_key(j, "count"), xp_json_uint(j, f->count);
    xp_json_key(j, "bytes"), xp_json_uint(j, f->bytes);
    xp_json_key(j, "time_ns"), xp_json_int(j, f->time_ns);
    xp_json_key(j, "message"), xp_json_str(j, f->message);
    xp_json_key(j, "fix"), xp_json_str(j, f->fix);
    xp_json_key(j, "fix_pytorch"), xp_json_str(j, f->fix_pytorch);
    xp_json_key(j, "details");
    xp_json_object(j);
    for (size_t i = 0; i < f->n_facts; i++) {
        xp_json_key(j, f->facts[i].key);
        if (f->facts[i].is_text)
            xp_json_str(j, f->facts[i].text);
        else
            xp_json_int(j, f->facts[i].num);
    }
    xp_json_end(j);
    xp_json_end(j);
}

static void xp_j_int_or_null(struct xp_json *j, int64_t v)
{
    if (v < 0)
        xp_json_null(j);
    else
        xp_json_int(j, v);
}

int xp_render_json(FILE *f, const struct xp_summary *s)
{
    const struct xp_report *r = s->r;
    struct xp_json j;
    xp_json_init(&j, f);
    xp_json_object(&j);
    xp_json_key(&j, "format"), xp_json_str(&j, "xferprof-report");
    xp_json_key(&j, "version"), xp_json_int(&j, 1);
    xp_json_key(&j, "xferprof_version"), xp_json_str(&j, XP_VERSION);
    xp_json_key(&j, "processes");
    xp_json_array(&j);
    for (size_t i = 0; i < r->n_procs; i++) {
        const struct xp_process *p = &r->procs[i];
        xp_json_object(&j);
        xp_json_key(&j, "id"), xp_json_uint(&j, i);
        xp_json_key(&j, "database"), xp_json_str(&j, p->db_path);
        xp_json_key(&j, "label"), xp_json_str(&j, p->label);
        xp_json_key(&j, "pid"), xp_j_int_or_null(&j, p->pid);
        xp_json_key(&j, "ppid"), xp_j_int_or_null(&j, p->ppid);
        xp_json_key(&j, "rank"), xp_j_int_or_null(&j, p->rank);
        xp_json_key(&j, "hostname"), xp_json_str(&j, p->hostname);
        xp_json_key(&j, "cmdline"), xp_json_str(&j, p->cmdline);
        xp_json_key(&j, "exit_status"), xp_j_int_or_null(&j, p->exit_status);
        xp_json_key(&j, "records_lost"), xp_json_int(&j, p->records_lost);
        if (p->capture_range) {
            /* Only with a capture window: the whole run otherwise. */
            xp_json_key(&j, "capture"), xp_json_object(&j);
            xp_json_key(&j, "range"), xp_json_str(&j, p->capture_range);
            xp_json_key(&j, "windows"), xp_json_int(&j, p->capture_windows);
            xp_json_key(&j, "ns"), xp_json_int(&j, p->capture_ns);
            xp_json_key(&j, "calls_outside"), xp_json_int(&j, p->window_skipped);
            xp_json_end(&j);
        }
        xp_json_key(&j, "recovered"), xp_json_bool(&j, p->recovered);
        xp_json_key(&j, "stacks"), xp_json_bool(&j, !p->stacks_off);
        xp_json_key(&j, "notes");
        xp_json_array(&j);
        for (size_t k = 0; k < p->n_notes; k++)
            xp_json_str(&j, p->notes[k]);
        xp_json_end(&j);
        xp_json_key(&j, "totals"), xp_j_totals(&j, &s->proc[i]);
        xp_json_end(&j);
    }
    xp_json_end(&j);
    xp_json_key(&j, "totals"), xp_j_totals(&j, s->all);
    xp_json_key(&j, "sites");
    xp_json_array(&j);
    for (size_t i = 0; i < s->n_sites; i++)
        xp_j_site(&j, &s->sites[i]);
    xp_json_end(&j);
    xp_json_key(&j, "findings");
    xp_json_array(&j);
    for (size_t i = 0; i < r->n_findings; i++)
        xp_j_finding(&j, r, &r->findings[i]);
    xp_json_end(&j);
    xp_json_end(&j);
    return ferror(f) ? -1 : 0;
}
