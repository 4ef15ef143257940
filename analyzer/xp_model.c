/* xp_model.c: names of the model's codes, and how findings are added to a report. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xp_report.h"

const char *xp_dir_name(xp_direction d)
{
    static const char *const names[XP_DIR_COUNT] = {"unknown", "H2D", "D2H", "D2D", "H2H"};
    return (unsigned)d < XP_DIR_COUNT ? names[d] : "unknown";
}

const char *xp_hostmem_name(enum xp_hostmem h)
{
    static const char *const names[XP_HM_COUNT] = {"none", "pageable", "pinned", "managed"};
    return (unsigned)h < XP_HM_COUNT ? names[h] : "none";
}

const char *xp_blocking_name(enum xp_block_class b)
{
    static const char *const names[XP_BL_COUNT] = {"unknown", "sync", "async", "async_pageable"};
    return (unsigned)b < XP_BL_COUNT ? names[b] : "unknown";
}

const char *xp_alloc_kind_name(enum xp_mem_kind k)
{
    static const char *const names[XP_AK_COUNT] = {"other",   "device",   "pinned",   "registered",
                                                   "managed", "reserved", "physical", "mapped",
                                                   "array",   "ipc"};
    return (unsigned)k < XP_AK_COUNT ? names[k] : "other";
}

const char *xp_severity_name(enum xp_severity s)
{
    switch (s) {
    case XP_SEV_ERROR: return "error";
    case XP_SEV_WARNING: return "warning";
    default: return "info";
    }
}

int xp_severity_parse(const char *s, enum xp_severity *out)
{
    static const enum xp_severity all[] = {XP_SEV_INFO, XP_SEV_WARNING, XP_SEV_ERROR};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(s, xp_severity_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    return -1;
}

/* vasprintf without the GNU extension's undefined pointer on failure. */
__attribute__((format(printf, 1, 0))) static char *xp_vformat(const char *fmt, va_list ap)
{
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        return NULL;
    char *s = malloc((size_t)n + 1);
    if (s)
        vsnprintf(s, (size_t)n + 1, fmt, ap);
    return s;
}

struct xp_finding *xp_report_add(struct xp_report *r, const char *rule, enum xp_severity sev,
                                 const struct xp_process *p, uint32_t stack_id,
                                 uint64_t count, uint64_t bytes, int64_t time_ns,
                                 const char *fix, const char *fix_pytorch,
                                 const char *message_fmt, ...)
{
    if (xp_grow(&r->findings, &r->cap_findings, r->n_findings + 1, sizeof *r->findings) != 0)
        return NULL;
    va_list ap;
    va_start(ap, message_fmt);
    char *message = xp_vformat(message_fmt, ap);
    va_end(ap);
    if (!message)
        return NULL;
    struct xp_finding *f = &r->findings[r->n_findings++];
    *f = (struct xp_finding){
        .rule = rule, .severity = sev, .proc = p, .stack_id = stack_id,
        .count = count, .bytes = bytes, .time_ns = time_ns,
        .message = message, .fix = fix, .fix_pytorch = fix_pytorch,
    };
    return f;
}

static struct xp_fact *xp_finding_fact(struct xp_finding *f, const char *key)
{
    struct xp_fact *grown = realloc(f->facts, (f->n_facts + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    f->facts = grown;
    struct xp_fact *fact = &f->facts[f->n_facts++];
    *fact = (struct xp_fact){0};
    snprintf(fact->key, sizeof fact->key, "%s", key);
    return fact;
}

void xp_finding_num(struct xp_finding *f, const char *key, int64_t v)
{
    struct xp_fact *fact = f ? xp_finding_fact(f, key) : NULL;
    if (fact)
        fact->num = v;
}

void xp_finding_text(struct xp_finding *f, const char *key, const char *fmt, ...)
{
    struct xp_fact *fact = f ? xp_finding_fact(f, key) : NULL;
    if (!fact)
        return;
    va_list ap;
    va_start(ap, fmt);
    fact->text = xp_vformat(fmt, ap);
    va_end(ap);
    fact->is_text = fact->text != NULL;
    if (!fact->is_text)
        f->n_facts--; /* out of memory: drop the fact rather than render an empty one */
}

void xp_report_forget_claims(struct xp_report *r)
{
    for (size_t i = 0; i < r->n_procs; i++)
        for (size_t j = 0; j < r->procs[i].n_copies; j++)
            r->procs[i].copies[j].claimed = false;
}

int xp_grow(void *arr, size_t *cap, size_t need, size_t size)
{
    void **v = arr;
    if (need <= *cap)
        return 0;
    size_t grown_cap = *cap ? *cap : 16;
    while (grown_cap < need)
        grown_cap *= 2;
    if (grown_cap > SIZE_MAX / size)
        return -1;
    char *grown = realloc(*v, grown_cap * size);
    if (!grown)
        return -1;
    memset(grown + *cap * size, 0, (grown_cap - *cap) * size);
    *v = grown;
    *cap = grown_cap;
    return 0;
}

void xp_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1)
        qsort(base, n, size, cmp);
}

const char *xp_process_api(const struct xp_process *p, uint32_t api)
{
    return api < p->n_api && p->api_names && p->api_names[api] ? p->api_names[api] : "?";
}

bool xp_process_api_driver(const struct xp_process *p, uint32_t api)
{
    return api < p->n_api && p->api_driver && p->api_driver[api];
}

struct xp_status_str xp_process_status(const struct xp_process *p, uint32_t api, int64_t status)
{
    return xp_cuda_status_str(xp_process_api_driver(p, api), status);
}

const char *xp_process_status_name(const struct xp_process *p, uint32_t api, int64_t status)
{
    return xp_cuda_status_name(xp_process_api_driver(p, api), status);
}

const struct xp_stack *xp_process_stack(const struct xp_process *p, uint32_t id)
{
    size_t lo = 0, hi = p->n_stacks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->stacks[mid].id == id)
            return &p->stacks[mid];
        if (p->stacks[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}

/* The value of copy c in a side table sorted by copy index, 0 when absent. */
static uint64_t xp_copy_fact_of(const struct xp_copy_fact *t, size_t n, const struct xp_process *p,
                                const struct xp_copy *c)
{
    if (c < p->copies || c >= p->copies + p->n_copies)
        return 0;
    size_t i = (size_t)(c - p->copies), lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t[mid].copy == i)
            return t[mid].value;
        if (t[mid].copy < i)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

int64_t xp_copy_wait(const struct xp_process *p, const struct xp_copy *c)
{
    return c->paired ? (int64_t)xp_copy_fact_of(p->copy_waits, p->n_copy_waits, p, c) : 0;
}

uint64_t xp_copy_full_fp(const struct xp_process *p, const struct xp_copy *c)
{
    return xp_copy_fact_of(p->copy_full_fps, p->n_copy_full_fps, p, c);
}
