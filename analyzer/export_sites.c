/* export_sites.c: each stack's call-site name for `xferprof export` (symbolized, Python frames merged), as the report names it. */
#include <stdlib.h>
#include <string.h>

#include "xp_export.h"
#include "xp_load.h"
#include "xp_pyframes.h"
#include "xp_render.h"
#include "xp_symbols.h"

int xp_export_sites(sqlite3 *db, bool writable, struct xp_sites *out, char *err, size_t errlen)
{
    *out = (struct xp_sites){0};
    struct xp_process p = {.rank = -1, .exit_status = -1};
    int rc = -1;
    if (xp_symbols_resolve(db, writable, &p, err, errlen) != 0 ||
        xp_pyframes_merge(db, &p, err, errlen) != 0)
        goto out;
    uint32_t max = p.n_stacks ? p.stacks[p.n_stacks - 1].id : 0;
    if (max && !(out->name = calloc((size_t)max + 1, sizeof *out->name)))
        goto oom;
    out->n = max ? (size_t)max + 1 : 0;
    for (size_t i = 0; i < p.n_stacks; i++) {
        const struct xp_stack *s = &p.stacks[i];
        char buf[512];
        if (s->nframes &&
            !(out->name[s->id] = strdup(xp_fmt_frame(&s->frames[s->top], buf, sizeof buf))))
            goto oom;
    }
    rc = 0;
    goto out;
oom:
    snprintf(err, errlen, "out of memory");
    xp_export_sites_free(out);
out:
    xp_process_free(&p);
    return rc;
}

void xp_export_sites_free(struct xp_sites *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->name[i]);
    free(s->name);
    *s = (struct xp_sites){0};
}
