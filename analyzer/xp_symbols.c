/* xp_symbols.c: offline symbolization of recorded stacks (elfutils libdw), cached in the database.
 *
 * The profiled process records raw return addresses and a module map (path,
 * load bias, build id).  Here each distinct address is looked up once:
 * first in the database's `symbols` cache (keyed by module path, build id
 * and offset, so a cached name is right even after the file is gone), then
 * with libdw in the module file, reported offline at its recorded bias.  A
 * file that is gone or whose build id differs from the recorded one gives
 * module+offset only: a name from another build would be a wrong name.
 *
 * An address inside code inlined by the compiler is the inline chain that
 * DWARF describes (the innermost function at its own line, then each
 * function it was inlined into at the line of the call), so that a site is
 * named after the function the source shows it in.  Names are never
 * guessed: a function only when the address is inside its DWARF scope or
 * inside [st_value, st_value + st_size) of its symbol, a line only from the
 * line table of a compile unit that covers the address. */
#include "xp_symbols.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stddef.h>
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

/* One function of an address's inline chain (strings in the arena). */
struct xp_link {
    const char *function;   /* as the object names it (mangled), NULL when unknown */
    const char *demangled;
    const char *file;
    int line;
};

/* Deepest inline chain kept: the outer callers of a deeper one are lost
 * (compilers stop far earlier; this bounds what a corrupt file can make). */
#define XP_INLINE_MAX 32

/* The symbolizer's version in symbols.symbolizer: rows without it (NULL)
 * were written by an analyzer without inline chains or the rules above,
 * and are resolved again. */
#define XP_SYMBOLIZER_VERSION 2

/* One distinct address of the stacks. */
struct xp_addr {
    uint64_t addr;
    int module;             /* index into modules, -1 when none contains addr */
    struct xp_link *chain;  /* in the arena, innermost first; NULL when nothing is known */
    uint32_t n_chain;
    bool used, resolved;
    bool looked_up;         /* by libdw in this run (not from the cache): to be cached */
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

/* n bytes of the arena, aligned for any object; NULL when out of memory. */
static void *xp_arena_alloc(struct xp_sym *S, size_t n)
{
    const size_t align = _Alignof(max_align_t);
    struct xp_arena_chunk *c = *S->arena;
    size_t at = c ? (c->used + align - 1) & ~(align - 1) : 0;
    if (!c || at > c->size || c->size - at < n) {
        size_t size = n > 16384 ? n : 16384;
        struct xp_arena_chunk *fresh = malloc(sizeof *fresh + size);
        if (!fresh)
            return NULL;
        fresh->next = c;
        fresh->used = 0;
        fresh->size = size;
        *S->arena = c = fresh;
        at = 0;
    }
    c->used = at + n;
    return c->data + at;
}

static const char *xp_arena_strdup(struct xp_sym *S, const char *s)
{
    if (!s)
        return NULL;
    size_t n = strlen(s) + 1;
    char *out = xp_arena_alloc(S, n);
    if (out)
        memcpy(out, s, n);
    return out;
}

/* libstdc++'s demangler (<cxxabi.h> is C++ only): a malloc'd string, or NULL
 * with *status != 0 when name is not a mangled name. */
extern char *__cxa_demangle(const char *name, char *buf, size_t *len, int *status);

/* The name people read: only "_Z..." names are demangled, since the
 * demangler also accepts a plain C name such as "f" (as the type float). */
static const char *xp_demangle(struct xp_sym *S, const char *raw)
{
    if (!raw || strncmp(raw, "_Z", 2) != 0)
        return raw;
    int status = -1;
    char *d = __cxa_demangle(raw, NULL, NULL, &status);
    const char *out = status == 0 && d ? xp_arena_strdup(S, d) : NULL;
    free(d);
    return out ? out : raw;
}

/* Sets a's chain to a copy of the n links of chain, whose strings are in
 * the arena already, and demangles its names.  Out of memory leaves a
 * without names. */
static void xp_addr_set_chain(struct xp_sym *S, struct xp_addr *a, const struct xp_link *chain,
                              size_t n)
{
    a->resolved = true;
    a->chain = n ? xp_arena_alloc(S, n * sizeof *a->chain) : NULL;
    if (!a->chain)
        return;
    for (size_t i = 0; i < n; i++) {
        a->chain[i] = chain[i];
        a->chain[i].demangled = xp_demangle(S, chain[i].function);
        if (!chain[i].file)
            a->chain[i].line = 0;
    }
    a->n_chain = (uint32_t)n;
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

/* Answers what the cache knows: each key's row of `symbols` (the innermost
 * function) and its rows of `symbol_inlines` (depth 1, 2, ...: the functions
 * it is inlined into), read in key and depth order.  A cache without them
 * (none yet, or written by an older analyzer) answers nothing. */
static int xp_sym_cache_read(struct xp_sym *S)
{
    sqlite3_stmt *st = NULL;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT module_path, build_id, offset, 0, function, file, line FROM symbols "
             "WHERE symbolizer = %d UNION ALL "
             "SELECT module_path, build_id, offset, depth, function, file, line FROM symbol_inlines "
             "ORDER BY 1, 2, 3, 4",
             XP_SYMBOLIZER_VERSION);
    if (sqlite3_prepare_v2(S->db, sql, -1, &st, NULL) != SQLITE_OK) {
        int code = sqlite3_errcode(S->db) & 0xff;
        sqlite3_finalize(st);
        return code == SQLITE_ERROR ? 0 : xp_sym_fail(S, code);
    }
    struct xp_link chain[XP_INLINE_MAX];
    char path[4096], bid[2 * 64 + 1]; /* the current key, when have */
    uint64_t off = 0;
    size_t n = 0;
    bool have = false;
    bool broken = false; /* a depth missing, too deep, a key too long: it answers nothing */
    int rc;
    do {
        rc = sqlite3_step(st);
        const char *rpath = NULL, *rbid = NULL;
        if (rc == SQLITE_ROW) {
            rpath = (const char *)sqlite3_column_text(st, 0);
            rbid = (const char *)sqlite3_column_text(st, 1);
            if (!rpath || !rbid || !*rbid)
                continue;
        }
        uint64_t roff = rc == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(st, 2) : 0;
        if (have && !(rc == SQLITE_ROW && off == roff && strcmp(path, rpath) == 0 &&
                      strcmp(bid, rbid) == 0)) {
            /* The key is complete: give it to the addresses it answers (the
             * same file may be loaded at several biases: dlopen again). */
            for (size_t m = 0; !broken && m < S->n_mods; m++) {
                if (strcmp(S->mods[m].path, path) != 0 || strcmp(S->mods[m].build_id, bid) != 0)
                    continue;
                struct xp_addr *a = xp_addr_find(S, S->mods[m].base + off);
                if (a && a->used && !a->resolved)
                    xp_addr_set_chain(S, a, chain, n);
            }
            have = false;
        }
        if (rc != SQLITE_ROW)
            break;
        if (!have) {
            have = true, n = 0, off = roff;
            broken = (size_t)snprintf(path, sizeof path, "%s", rpath) >= sizeof path ||
                     (size_t)snprintf(bid, sizeof bid, "%s", rbid) >= sizeof bid;
        }
        if (sqlite3_column_int64(st, 3) != (int64_t)n || n == XP_INLINE_MAX)
            broken = true;
        if (broken)
            continue;
        chain[n++] = (struct xp_link){
            .function = xp_arena_strdup(S, (const char *)sqlite3_column_text(st, 4)),
            .file = xp_arena_strdup(S, (const char *)sqlite3_column_text(st, 5)),
            .line = sqlite3_column_int(st, 6)};
    } while (rc == SQLITE_ROW);
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

/* A DIE's name as the object names it: the linkage name (mangled C++) where
 * there is one, else DW_AT_name, each also through the abstract origin of
 * an inlined or out-of-line instance and the declaration it specifies. */
static const char *xp_die_name(Dwarf_Die *die)
{
    static const unsigned attrs[] = {DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name};
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        Dwarf_Attribute at;
        const char *s = dwarf_formstring(dwarf_attr_integrate(die, attrs[i], &at));
        if (s)
            return s;
    }
    return NULL;
}

/* The compile unit whose ranges cover pc (a DWARF address), or NULL: only
 * its line table may give pc a line. */
static Dwarf_Die *xp_cu_of(struct xp_module *m, uint64_t pc, Dwarf_Addr *bias)
{
    Dwarf_Die *cu = dwfl_module_addrdie(m->mod, pc, bias);
    return cu && dwarf_haspc(cu, pc - *bias) > 0 ? cu : NULL;
}

/* The inline chain at pc from DWARF into out (up to cap links, strings
 * libdw's): the innermost function with the line table's line for pc, then,
 * for each DW_TAG_inlined_subroutine on the way out, the function around it
 * at the instance's DW_AT_call_file:DW_AT_call_line, up to the subprogram.
 * The scopes are those of the DIE tree around the innermost scope
 * (dwarf_getscopes_die) as eu-addr2line -i walks them: dwarf_getscopes
 * itself continues from an inlined instance into its abstract origin, not
 * into the caller.  Returns the number of links, 0 when no DWARF function
 * covers pc. */
static size_t xp_dwarf_chain(struct xp_module *m, uint64_t pc, struct xp_link *out, size_t cap)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = xp_cu_of(m, pc, &bias);
    Dwarf_Die *scopes = NULL;
    if (!cu || dwarf_getscopes(cu, pc - bias, &scopes) <= 0) {
        free(scopes);
        return 0;
    }
    Dwarf_Die innermost = scopes[0];
    free(scopes);
    scopes = NULL;
    int n = dwarf_getscopes_die(&innermost, &scopes);
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0)
        files = NULL;
    Dwarf_Line *ln = dwarf_getsrc_die(cu, pc - bias);
    int line = 0;
    const char *file = ln ? dwarf_linesrc(ln, NULL, NULL) : NULL;
    if (file && dwarf_lineno(ln, &line) != 0)
        line = 0;
    size_t k = 0;
    for (int i = 0; i < n && k < cap; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine &&
            tag != DW_TAG_entry_point)
            continue; /* a lexical block */
        out[k++] = (struct xp_link){.function = xp_die_name(&scopes[i]), .file = file, .line = line};
        if (tag != DW_TAG_inlined_subroutine)
            break; /* the function the code is in: the chain ends */
        /* Its caller is at the line of the call. */
        Dwarf_Attribute at;
        Dwarf_Word v = 0;
        file = NULL, line = 0;
        if (files && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &at), &v) == 0 &&
            v < nfiles)
            file = dwarf_filesrc(files, v, NULL, NULL);
        if (file && dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &at), &v) == 0)
            line = (int)v;
    }
    free(scopes);
    return k;
}

/* The function symbol whose extent covers pc ("memcpy@@GLIBC_2.14" without
 * its version) into buf, or NULL: the nearest symbol before an address in a
 * stripped file is some other function. */
static const char *xp_elf_function(struct xp_module *m, uint64_t pc, char *buf, size_t n)
{
    GElf_Sym sym;
    GElf_Off off = 0;
    const char *name = dwfl_module_addrinfo(m->mod, pc, &off, &sym, NULL, NULL, NULL);
    int type = name ? GELF_ST_TYPE(sym.st_info) : STT_NOTYPE;
    if (!name || (type != STT_FUNC && type != STT_GNU_IFUNC) || sym.st_size == 0 ||
        off >= sym.st_size)
        return NULL;
    snprintf(buf, n, "%.*s", (int)strcspn(name, "@"), name);
    return buf;
}

/* libdw's answer for a return address: the call is the instruction before
 * it, so addr - 1 is looked up (the return address may already be the next
 * line, or the next function after a noreturn call).  DWARF's inline chain
 * where a DWARF function covers it; else the symbol table's function with
 * the line table's line (assembly has lines but no DWARF functions). */
static void xp_addr_lookup(struct xp_sym *S, struct xp_module *m, struct xp_addr *a)
{
    uint64_t pc = a->addr ? a->addr - 1 : 0;
    struct xp_link chain[XP_INLINE_MAX];
    char elf_name[512];
    size_t n = xp_dwarf_chain(m, pc, chain, XP_INLINE_MAX);
    if (n == 0) {
        chain[0] = (struct xp_link){.function = xp_elf_function(m, pc, elf_name, sizeof elf_name)};
        Dwarf_Addr bias = 0;
        Dwarf_Die *cu = xp_cu_of(m, pc, &bias);
        Dwarf_Line *ln = cu ? dwarf_getsrc_die(cu, pc - bias) : NULL;
        if (ln && (chain[0].file = dwarf_linesrc(ln, NULL, NULL)) &&
            dwarf_lineno(ln, &chain[0].line) != 0)
            chain[0].line = 0;
        n = chain[0].function || chain[0].file ? 1 : 0;
    } else if (!chain[n - 1].function && n < XP_INLINE_MAX) {
        /* A DWARF function without a name: the symbol covering pc has it. */
        chain[n - 1].function = xp_elf_function(m, pc, elf_name, sizeof elf_name);
    }
    for (size_t i = 0; i < n; i++) {
        chain[i].function = xp_arena_strdup(S, chain[i].function);
        chain[i].file = xp_arena_strdup(S, chain[i].file);
    }
    xp_addr_set_chain(S, a, chain, n);
    a->looked_up = true;
}

/* Creates the cache tables, or adds to a cache of an older analyzer what
 * this one needs (its rows, with symbolizer NULL, are then replaced). */
static bool xp_sym_cache_schema(sqlite3 *db)
{
    if (sqlite3_exec(db,
                     "CREATE TABLE IF NOT EXISTS symbols(module_path TEXT NOT NULL, "
                     "build_id TEXT NOT NULL, offset INTEGER NOT NULL, function TEXT, file TEXT, "
                     "line INTEGER, symbolizer INTEGER, "
                     "PRIMARY KEY (module_path, build_id, offset)) WITHOUT ROWID;"
                     "CREATE TABLE IF NOT EXISTS symbol_inlines(module_path TEXT NOT NULL, "
                     "build_id TEXT NOT NULL, offset INTEGER NOT NULL, depth INTEGER NOT NULL, "
                     "function TEXT, file TEXT, line INTEGER, "
                     "PRIMARY KEY (module_path, build_id, offset, depth)) WITHOUT ROWID",
                     NULL, NULL, NULL) != SQLITE_OK)
        return false;
    sqlite3_stmt *st = NULL;
    bool has = sqlite3_prepare_v2(db, "SELECT symbolizer FROM symbols", -1, &st, NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    return has || sqlite3_exec(db, "ALTER TABLE symbols ADD COLUMN symbolizer INTEGER", NULL,
                               NULL, NULL) == SQLITE_OK;
}

/* Stores what libdw found for modules with a build id (the cache key), in
 * one transaction: the innermost function in `symbols`, the functions it is
 * inlined into in `symbol_inlines`.  Failure only costs the next report the
 * same work. */
static void xp_sym_cache_write(struct xp_sym *S)
{
    sqlite3 *db = S->db;
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return;
    sqlite3_stmt *st = NULL, *inl = NULL;
    bool ok = xp_sym_cache_schema(db) &&
              sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO symbols(module_path, build_id, "
                                     "offset, function, file, line, symbolizer) "
                                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                 -1, &st, NULL) == SQLITE_OK &&
              sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO symbol_inlines VALUES "
                                     "(?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                 -1, &inl, NULL) == SQLITE_OK;
    for (size_t i = 0; ok && i < S->cap_addrs; i++) {
        struct xp_addr *a = &S->addrs[i];
        if (!a->used || !a->looked_up || a->module < 0)
            continue;
        struct xp_module *m = &S->mods[a->module];
        if (!*m->build_id)
            continue;
        /* No link: a row of NULLs says "nothing known" (depth 0 always exists). */
        for (uint32_t k = 0; ok && k < (a->n_chain ? a->n_chain : 1); k++) {
            const struct xp_link *l = a->n_chain ? &a->chain[k] : &(struct xp_link){0};
            sqlite3_stmt *q = k ? inl : st;
            int c = 1;
            sqlite3_bind_text(q, c++, m->path, -1, SQLITE_STATIC);
            sqlite3_bind_text(q, c++, m->build_id, -1, SQLITE_STATIC);
            sqlite3_bind_int64(q, c++, (int64_t)(a->addr - m->base));
            if (k)
                sqlite3_bind_int(q, c++, (int)k);
            sqlite3_bind_text(q, c++, l->function, -1, SQLITE_STATIC);
            sqlite3_bind_text(q, c++, l->file, -1, SQLITE_STATIC);
            if (l->file)
                sqlite3_bind_int(q, c++, l->line);
            else
                sqlite3_bind_null(q, c++);
            if (!k)
                sqlite3_bind_int(q, c++, XP_SYMBOLIZER_VERSION);
            ok = sqlite3_step(q) == SQLITE_DONE;
            sqlite3_reset(q);
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(inl);
    if (!ok || sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
}

/* Replaces each stack's raw frames by symbolized ones, internal frames left
 * out and each address's inline chain expanded into one frame per function.
 * Out of memory leaves a stack's frames unexpanded. */
static void xp_sym_fill(struct xp_sym *S)
{
    struct xp_process *p = S->p;
    for (size_t i = 0; i < p->n_stacks; i++) {
        struct xp_stack *s = &p->stacks[i];
        size_t total = 0;
        for (uint32_t k = 0; k < s->nframes; k++) {
            struct xp_addr *a = xp_addr_find(S, s->frames[k].addr);
            total += a && a->used && a->n_chain > 1 ? a->n_chain : 1;
        }
        struct xp_frame *out = total > s->nframes ? calloc(total, sizeof *out) : s->frames;
        if (!out)
            out = s->frames; /* out of memory: innermost function of each address only */
        uint32_t n = 0;
        for (uint32_t k = 0; k < s->nframes; k++) {
            uint64_t addr = s->frames[k].addr;
            struct xp_addr *a = xp_addr_find(S, addr);
            struct xp_frame f = {.addr = addr};
            uint32_t links = 1;
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
                if (out != s->frames && a->n_chain > 1)
                    links = a->n_chain;
            }
            for (uint32_t l = 0; l < links; l++) {
                const struct xp_link *x = a && a->n_chain ? &a->chain[l] : NULL;
                out[n] = f;
                if (x) {
                    out[n].function = x->function;
                    out[n].demangled = x->demangled;
                    out[n].file = x->file;
                    out[n].line = x->line;
                    out[n].inlined = l + 1 < links;
                }
                n++;
            }
        }
        if (out != s->frames)
            free(s->frames);
        s->frames = out;
        s->nframes = n;
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
