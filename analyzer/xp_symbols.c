/* xp_symbols.c: offline symbolization of recorded stacks (elfutils libdw), cached in the database.
 *
 * The profiled process records raw return addresses and a module map (path,
 * load bias, build id).  Here each distinct address is looked up once:
 * first in the database's `symbols` cache (keyed by module path, build id
 * and offset, so a cached name is right even after the file is gone), then
 * with libdw in the module file, reported offline at its recorded bias.  A
 * file that is gone or whose build id differs from the recorded one gives
 * module+offset only: a name from another build would be a wrong name. */
#include "xp_symbols.h"

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xp_load.h"

/* Strings of one process's frames, in chunks freed together. */
struct xp_arena_chunk {
    struct xp_arena_chunk *next;
    size_t used, size;
    char data[];
};

struct xp_module {
    char *path;
    const char *name;       /* basename of path */
    char *build_id;         /* lowercase hex, "" when none recorded */
    uint64_t base, low, size;
    bool internal;
    bool checked, usable;   /* file looked at; present with the recorded build id */
    Dwfl *dwfl;
    Dwfl_Module *mod;
    /* path and name in the process's arena, which outlives this table:
     * copied once, on the module's first frame, for all its frames. */
    const char *frame_path, *frame_name;
};

/* One distinct address of the stacks. */
struct xp_addr {
    uint64_t addr;
    int module;             /* index into modules, -1 when none contains addr */
    const char *function, *file;
    int line;
    bool used, resolved;
};

struct xp_sym {
    sqlite3 *db;
    struct xp_process *p;
    char *err;
    size_t errlen;
    struct xp_module *mods;
    size_t n_mods;
    struct xp_addr *addrs;  /* open addressing, power-of-two size */
    size_t cap_addrs, n_addrs;
    struct xp_arena_chunk **arena;
};

bool xp_symbols_internal(const char *module)
{
    return module && (strncmp(module, "libcuda", 7) == 0 || strncmp(module, "libxferprof", 11) == 0);
}

static const char *xp_arena_strdup(struct xp_sym *S, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    struct xp_arena_chunk *c = *S->arena;
    if (!c || c->size - c->used < n) {
        size_t size = n > 16384 ? n : 16384;
        struct xp_arena_chunk *fresh = malloc(sizeof *fresh + size);
        if (!fresh)
            return NULL;
        fresh->next = c;
        fresh->used = 0;
        fresh->size = size;
        *S->arena = c = fresh;
    }
    char *out = c->data + c->used;
    memcpy(out, s, n);
    c->used += n;
    return out;
}

void xp_symbols_free(struct xp_process *p)
{
    struct xp_arena_chunk *c = p->symbols;
    while (c) {
        struct xp_arena_chunk *next = c->next;
        free(c);
        c = next;
    }
    p->symbols = NULL;
}

static uint64_t xp_hash64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

static struct xp_addr *xp_addr_find(struct xp_sym *S, uint64_t addr)
{
    if (!S->cap_addrs)
        return NULL;
    size_t mask = S->cap_addrs - 1;
    for (size_t i = xp_hash64(addr) & mask;; i = (i + 1) & mask) {
        struct xp_addr *a = &S->addrs[i];
        if (!a->used || a->addr == addr)
            return a;
    }
}

static int xp_addr_add(struct xp_sym *S, uint64_t addr)
{
    if ((S->n_addrs + 1) * 2 > S->cap_addrs) {
        size_t cap = S->cap_addrs ? S->cap_addrs * 2 : 1024;
        struct xp_addr *old = S->addrs;
        size_t old_cap = S->cap_addrs;
        if (!(S->addrs = calloc(cap, sizeof *S->addrs))) {
            S->addrs = old;
            return -1;
        }
        S->cap_addrs = cap;
        for (size_t i = 0; i < old_cap; i++)
            if (old[i].used)
                *xp_addr_find(S, old[i].addr) = old[i];
        free(old);
    }
    struct xp_addr *a = xp_addr_find(S, addr);
    if (!a->used) {
        *a = (struct xp_addr){.addr = addr, .module = -1, .used = true};
        S->n_addrs++;
    }
    return 0;
}

static int xp_sym_fail(struct xp_sym *S, int rc)
{
    xp_load_db_error(S->db, rc, S->err, S->errlen);
    return -1;
}

static int xp_module_cmp(const void *a, const void *b)
{
    const struct xp_module *x = a, *y = b;
    return x->low < y->low ? -1 : x->low > y->low;
}

static int xp_sym_modules(struct xp_sym *S)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(S->db, "SELECT path, base, low, size, build_id FROM modules",
                                -1, &st, NULL);
    if (rc != SQLITE_OK)
        return xp_sym_fail(S, rc);
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0);
        const char *bid = (const char *)sqlite3_column_text(st, 4);
        if (!path || xp_grow(&S->mods, &cap, S->n_mods + 1, sizeof *S->mods) != 0)
            continue; /* no path: nothing to find it by; out of memory: fewer names */
        struct xp_module *m = &S->mods[S->n_mods];
        *m = (struct xp_module){
            .path = strdup(path), .build_id = strdup(bid ? bid : ""),
            .base = (uint64_t)sqlite3_column_int64(st, 1),
            .low = (uint64_t)sqlite3_column_int64(st, 2),
            .size = (uint64_t)sqlite3_column_int64(st, 3),
        };
        if (!m->path || !m->build_id) {
            free(m->path);
            free(m->build_id);
            continue;
        }
        const char *slash = strrchr(m->path, '/');
        m->name = slash ? slash + 1 : m->path;
        m->internal = xp_symbols_internal(m->name);
        S->n_mods++;
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
        return xp_sym_fail(S, rc);
    xp_sort(S->mods, S->n_mods, sizeof *S->mods, xp_module_cmp);
    return 0;
}

/* The module containing addr: the last one starting at or below it whose
 * extent covers it (a module loaded over an unloaded one's range wins). */
static int xp_module_of(const struct xp_sym *S, uint64_t addr)
{
    size_t lo = 0, hi = S->n_mods;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (S->mods[mid].low <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;)
        if (addr - S->mods[i].low < S->mods[i].size)
            return (int)i;
    return -1;
}

/* Reads the stacks: every distinct address into S->addrs, each stack's raw
 * frames into p->stacks (symbolized later in place). */
static int xp_sym_stacks(struct xp_sym *S)
{
    struct xp_process *p = S->p;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(S->db, "SELECT id, frames FROM stacks ORDER BY id", -1, &st, NULL);
    if (rc != SQLITE_OK)
        return xp_sym_fail(S, rc);
    size_t cap = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(st, 0);
        const unsigned char *blob = sqlite3_column_blob(st, 1);
        size_t n = (size_t)sqlite3_column_bytes(st, 1) / 8;
        if (id <= 0 || id > UINT32_MAX)
            continue;
        if (xp_grow(&p->stacks, &cap, p->n_stacks + 1, sizeof *p->stacks) != 0)
            goto oom;
        struct xp_stack *s = &p->stacks[p->n_stacks];
        *s = (struct xp_stack){.id = (uint32_t)id};
        if (n && !(s->frames = calloc(n, sizeof *s->frames)))
            goto oom;
        p->n_stacks++;
        for (size_t i = 0; i < n; i++) {
            uint64_t a = 0;
            for (int b = 7; b >= 0; b--)
                a = a << 8 | blob[i * 8 + (size_t)b];
            s->frames[i].addr = a;
            if (xp_addr_add(S, a) != 0)
                goto oom;
        }
        s->nframes = (uint32_t)n;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : xp_sym_fail(S, rc);
oom:
    sqlite3_finalize(st);
    snprintf(S->err, S->errlen, "out of memory");
    return -1;
}

/* Answers what the cache knows.  A missing table is an empty cache. */
static int xp_sym_cache_read(struct xp_sym *S)
{
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(S->db, "SELECT module_path, build_id, offset, function, file, line "
                                  "FROM symbols", -1, &st, NULL) != SQLITE_OK) {
        int code = sqlite3_errcode(S->db) & 0xff;
        sqlite3_finalize(st);
        return code == SQLITE_ERROR ? 0 : xp_sym_fail(S, code);
    }
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *path = (const char *)sqlite3_column_text(st, 0);
        const char *bid = (const char *)sqlite3_column_text(st, 1);
        uint64_t off = (uint64_t)sqlite3_column_int64(st, 2);
        if (!path || !bid || !*bid)
            continue;
        /* The same file may be loaded at several biases (dlopen again). */
        for (size_t m = 0; m < S->n_mods; m++) {
            if (strcmp(S->mods[m].path, path) != 0 || strcmp(S->mods[m].build_id, bid) != 0)
                continue;
            struct xp_addr *a = xp_addr_find(S, S->mods[m].base + off);
            if (!a || !a->used || a->resolved)
                continue;
            a->function = xp_arena_strdup(S, (const char *)sqlite3_column_text(st, 3));
            a->file = xp_arena_strdup(S, (const char *)sqlite3_column_text(st, 4));
            a->line = sqlite3_column_int(st, 5);
            a->resolved = true;
        }
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : xp_sym_fail(S, rc);
}

static char *xp_debuginfo_path; /* libdw's default search path (NULL); it wants a pointer */

static const Dwfl_Callbacks xp_dwfl_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
    .debuginfo_path = &xp_debuginfo_path,
};

/* Opens m's file with libdw and checks it is the one recorded; says in a
 * note why not.  Sets m->usable. */
static void xp_module_open(struct xp_sym *S, struct xp_module *m)
{
    m->checked = true;
    if (access(m->path, R_OK) != 0) {
        xp_process_note(S->p, "module %s is no longer on disk: its frames show as module+offset",
                        m->path);
        return;
    }
    m->dwfl = dwfl_begin(&xp_dwfl_callbacks);
    if (m->dwfl) {
        m->mod = dwfl_report_elf(m->dwfl, m->name, m->path, -1, m->base, false);
        dwfl_report_end(m->dwfl, NULL, NULL);
    }
    if (!m->mod) {
        xp_process_note(S->p, "module %s cannot be read (%s): its frames show as module+offset",
                        m->path, dwfl_errmsg(-1));
        return;
    }
    const unsigned char *bits = NULL;
    GElf_Addr vaddr = 0;
    int n = dwfl_module_build_id(m->mod, &bits, &vaddr);
    char hex[2 * 64 + 1] = "";
    for (int i = 0; i < n && i < 64; i++)
        snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    if (strcmp(hex, m->build_id) != 0) {
        xp_process_note(S->p,
                        "module %s has changed since the run (build id %s, recorded %s): its "
                        "frames show as module+offset",
                        m->path, *hex ? hex : "none", *m->build_id ? m->build_id : "none");
        return;
    }
    m->usable = true;
}

/* libdw's answer for a return address: the call is the instruction before
 * it, so addr - 1 is looked up (the return address may already be the next
 * line, or the next function after a noreturn call). */
static void xp_addr_lookup(struct xp_sym *S, struct xp_module *m, struct xp_addr *a)
{
    uint64_t pc = a->addr ? a->addr - 1 : 0;
    GElf_Sym sym;
    GElf_Off off = 0;
    const char *name = dwfl_module_addrinfo(m->mod, pc, &off, &sym, NULL, NULL, NULL);
    int type = name ? GELF_ST_TYPE(sym.st_info) : STT_NOTYPE;
    /* Only a function symbol whose extent covers pc names it: the nearest
     * symbol before an address in a stripped file is some other function. */
    if (name && (type == STT_FUNC || type == STT_GNU_IFUNC) && sym.st_size > 0 &&
        off < sym.st_size) {
        /* "memcpy@@GLIBC_2.14": the version is not part of the name. */
        char plain[512];
        snprintf(plain, sizeof plain, "%.*s", (int)strcspn(name, "@"), name);
        a->function = xp_arena_strdup(S, plain);
    }
    Dwfl_Line *line = dwfl_module_getsrc(m->mod, pc);
    int lineno = 0;
    const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
    if (file) {
        a->file = xp_arena_strdup(S, file);
        a->line = lineno > 0 ? lineno : 0;
    }
    a->resolved = true;
}

/* Stores what libdw found for modules with a build id (the cache key), in
 * one transaction.  Failure only costs the next report the same work. */
static void xp_sym_cache_write(struct xp_sym *S)
{
    sqlite3 *db = S->db;
    if (sqlite3_exec(db,
                     "BEGIN IMMEDIATE;"
                     "CREATE TABLE IF NOT EXISTS symbols(module_path TEXT NOT NULL, "
                     "build_id TEXT NOT NULL, offset INTEGER NOT NULL, function TEXT, file TEXT, "
                     "line INTEGER, PRIMARY KEY (module_path, build_id, offset)) WITHOUT ROWID",
                     NULL, NULL, NULL) != SQLITE_OK) {
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
        return;
    }
    sqlite3_stmt *st = NULL;
    bool ok = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO symbols VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                                 -1, &st, NULL) == SQLITE_OK;
    for (size_t i = 0; ok && i < S->cap_addrs; i++) {
        struct xp_addr *a = &S->addrs[i];
        if (!a->used || a->module < 0)
            continue;
        struct xp_module *m = &S->mods[a->module];
        if (!m->usable || !*m->build_id || !a->resolved)
            continue;
        sqlite3_bind_text(st, 1, m->path, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, m->build_id, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, (int64_t)(a->addr - m->base));
        sqlite3_bind_text(st, 4, a->function, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 5, a->file, -1, SQLITE_STATIC);
        if (a->file)
            sqlite3_bind_int(st, 6, a->line);
        else
            sqlite3_bind_null(st, 6);
        ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (!ok || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

/* Replaces each stack's raw frames by symbolized ones, internal frames left out. */
static void xp_sym_fill(struct xp_sym *S)
{
    struct xp_process *p = S->p;
    for (size_t i = 0; i < p->n_stacks; i++) {
        struct xp_stack *s = &p->stacks[i];
        uint32_t out = 0;
        for (uint32_t k = 0; k < s->nframes; k++) {
            struct xp_addr *a = xp_addr_find(S, s->frames[k].addr);
            struct xp_frame f = {.addr = s->frames[k].addr};
            if (a && a->used && a->module >= 0) {
                struct xp_module *m = &S->mods[a->module];
                if (m->internal)
                    continue;
                if (!m->frame_path) {
                    m->frame_path = xp_arena_strdup(S, m->path);
                    m->frame_name = xp_arena_strdup(S, m->name);
                }
                f.module = m->frame_name;
                f.module_path = m->frame_path;
                f.offset = f.addr - m->base;
                f.function = a->function;
                f.file = a->file;
                f.line = a->line;
            }
            s->frames[out++] = f;
        }
        s->nframes = out;
    }
}

int xp_symbols_resolve(sqlite3 *db, bool writable, struct xp_process *p, char *err,
                       size_t errlen)
{
    struct xp_sym S = {.db = db, .p = p, .err = err, .errlen = errlen,
                       .arena = (struct xp_arena_chunk **)&p->symbols};
    int rc = -1;
    if (xp_sym_modules(&S) != 0 || xp_sym_stacks(&S) != 0 || xp_sym_cache_read(&S) != 0)
        goto out;
    bool fresh = false;
    for (size_t i = 0; i < S.cap_addrs; i++) {
        struct xp_addr *a = &S.addrs[i];
        if (!a->used)
            continue;
        a->module = xp_module_of(&S, a->addr);
        if (a->module < 0 || a->resolved)
            continue;
        struct xp_module *m = &S.mods[a->module];
        if (m->internal)
            continue; /* left out of call sites: not worth a lookup */
        if (!m->checked)
            xp_module_open(&S, m);
        if (m->usable) {
            xp_addr_lookup(&S, m, a);
            fresh = true;
        }
    }
    if (fresh && writable)
        xp_sym_cache_write(&S);
    xp_sym_fill(&S);
    rc = 0;
out:
    for (size_t i = 0; i < S.n_mods; i++) {
        if (S.mods[i].dwfl)
            dwfl_end(S.mods[i].dwfl);
        free(S.mods[i].path);
        free(S.mods[i].build_id);
    }
    free(S.mods);
    free(S.addrs);
    return rc;
}
