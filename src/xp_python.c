/* xp_python.c: the calling thread's CPython frames, read in place, and each code object journaled once.
 *
 * Where the frames are: every thread that runs Python has a PyThreadState,
 * and CPython keeps a pointer to it in a pthread key of its own (the
 * "autoTSS" key of _PyRuntime, which PyGILState_GetThisThreadState reads).
 * That is the thread's own state whether or not it holds the GIL (ctypes
 * releases it around a foreign call), unlike "the current thread state",
 * which is the GIL holder's.  From it the frame chain: PyFrameObject (3.9,
 * 3.10) or _PyInterpreterFrame (3.11+).  The thread is inside a CUDA call
 * made from the innermost frame, so its frames cannot change while we read
 * them; what can go away is another thread's state at interpreter shutdown,
 * so nothing is read while another thread is finalizing the runtime.
 *
 * Layouts are data (xp_pylayout.h, generated from each version's headers),
 * checked against _Py_DebugOffsets where the interpreter publishes them. */
#include "xp_python.h"

#include "xp_pylayout.h"
#include "xp_seen.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const xp_py_layout layouts[] = {
#include "xp_pylayouts.h"
};

/* The interpreter found, filled once under scan_lock and then published
 * through xp_python_active (never changed after). */
struct py_state {
    const xp_py_layout *L;
    uintptr_t runtime;        /* &_PyRuntime */
    uintptr_t code_type, str_type, bytes_type, frame_type;
    char version[32];         /* "3.12.1" */
    char module[4096];        /* the object that exports _PyRuntime */
};
typedef struct py_state py_state;
static py_state found;
_Atomic(const py_state *) xp_python_active;

/* Guarded by scan_lock: the scan has decided (found or unsupported), and
 * whether this session's journal has the meta saying what it decided. */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static bool decided, meta_written;
static char note[4096 + 256]; /* python_note, when unsupported */

/* Code keys already written (xp_seen.h). */
#define SEEN_SLOTS (1u << 14)
static _Atomic uint64_t seen[SEEN_SLOTS];

/* ---- reading the interpreter's memory ---------------------------------- */

/* A pointer that may be followed: not NULL, 8-byte aligned (every object
 * and frame is), in the user half of the address space. */
static inline bool ok_ptr(uintptr_t p)
{
    return p >= 4096 && p < ((uintptr_t)1 << 47) && (p & 7) == 0;
}

/* Plain loads: what they read is the calling thread's own frames and the
 * objects those hold, which no other thread changes while it is in a call. */
static inline uintptr_t ld_ptr(uintptr_t base, int32_t off)
{
    uintptr_t v;
    memcpy(&v, (const void *)(base + (uintptr_t)off), sizeof v);
    return v;
}

static inline int64_t ld_i64(uintptr_t base, int32_t off)
{
    int64_t v;
    memcpy(&v, (const void *)(base + (uintptr_t)off), sizeof v);
    return v;
}

static inline int32_t ld_i32(uintptr_t base, int32_t off)
{
    int32_t v;
    memcpy(&v, (const void *)(base + (uintptr_t)off), sizeof v);
    return v;
}

static inline bool is_a(uintptr_t obj, uintptr_t type, const xp_py_layout *L)
{
    return ok_ptr(obj) && ld_ptr(obj, L->ob_type) == type;
}

/* Code units of a compact str, as UTF-8 into out (NULL: only counted), at
 * most cap bytes, cut at a character.  Returns the bytes; 0 for anything
 * but a compact str (a legacy or damaged one is not guessed at). */
static size_t str_utf8(const py_state *st, uintptr_t s, char *out, size_t cap)
{
    const xp_py_layout *L = st->L;
    if (!is_a(s, st->str_type, L))
        return 0;
    uint32_t state = (uint32_t)ld_i32(s, L->str_state);
    int64_t len = ld_i64(s, L->str_length);
    if (len < 0 || len > (int64_t)XP_PY_STR_MAX || !((state >> L->state_compact_bit) & 1))
        return 0;
    unsigned kind = (state >> L->state_kind_shift) & 7;
    bool ascii = (state >> L->state_ascii_bit) & 1;
    const uint8_t *data = (const uint8_t *)(s + (ascii ? L->str_ascii_size : L->str_compact_size));
    if (kind != 1 && kind != 2 && kind != 4)
        return 0;
    size_t n = 0;
    for (int64_t i = 0; i < len; i++) {
        uint32_t c = kind == 1   ? data[i]
                     : kind == 2 ? ((const uint16_t *)data)[i]
                                 : ((const uint32_t *)data)[i];
        uint8_t b[4];
        size_t k;
        if (c < 0x80) {
            b[0] = (uint8_t)c, k = 1;
        } else if (c < 0x800) {
            b[0] = (uint8_t)(0xc0 | c >> 6), b[1] = (uint8_t)(0x80 | (c & 0x3f)), k = 2;
        } else if (c < 0x10000) {
            if (c >= 0xd800 && c < 0xe000)
                c = 0xfffd;   /* a lone surrogate (surrogateescape) is not UTF-8 */
            b[0] = (uint8_t)(0xe0 | c >> 12), b[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
            b[2] = (uint8_t)(0x80 | (c & 0x3f)), k = 3;
        } else if (c < 0x110000) {
            b[0] = (uint8_t)(0xf0 | c >> 18), b[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
            b[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f)), b[3] = (uint8_t)(0x80 | (c & 0x3f)), k = 4;
        } else {
            return 0;
        }
        if (n + k > cap)
            break;
        if (out)
            memcpy(out + n, b, k);
        n += k;
    }
    return n;
}

/* The bytes object's contents and length (0 and NULL when it is not one). */
static const uint8_t *bytes_of(const py_state *st, uintptr_t b, size_t *len)
{
    *len = 0;
    if (!is_a(b, st->bytes_type, st->L))
        return NULL;
    int64_t n = ld_i64(b, st->L->ob_size);
    if (n < 0)
        return NULL;
    *len = (size_t)n;
    return (const uint8_t *)(b + (uintptr_t)st->L->bytes_sval);
}

/* ---- code objects -------------------------------------------------------- */

/* A 64-bit finalizer (splitmix64's): every input bit reaches every output bit. */
static inline uint64_t fmix(uint64_t h)
{
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    return h ^ (h >> 31);
}

/* A code object's key: its address with the addresses of its file and name
 * and its first line, so that a code object freed and another made at the
 * same address (a function defined again) is a new key. */
static inline uint64_t code_key(const xp_py_layout *L, uintptr_t code)
{
    int32_t name = L->co_qualname >= 0 ? L->co_qualname : L->co_name;
    uint64_t h = fmix(code ^ ld_ptr(code, L->co_filename) * 0x9e3779b97f4a7c15ull ^
                      ld_ptr(code, name) * 0xc2b2ae3d27d4eb4full ^
                      (uint64_t)(uint32_t)ld_i32(code, L->co_firstlineno) << 1);
    return h ? h : 1;
}

static void write_code(xp_journal *j, const py_state *st, uintptr_t code, uint64_t key)
{
    const xp_py_layout *L = st->L;
    uintptr_t file = ld_ptr(code, L->co_filename);
    uintptr_t name = ld_ptr(code, L->co_qualname >= 0 ? L->co_qualname : L->co_name);
    size_t fl = str_utf8(st, file, NULL, XP_PY_STR_MAX);
    size_t nl = str_utf8(st, name, NULL, XP_PY_STR_MAX);
    size_t tl = 0;
    const uint8_t *table = bytes_of(st, ld_ptr(code, L->co_lines), &tl);
    uint8_t lines_kind = (uint8_t)L->lines_kind;
    if (table == NULL || tl > XP_PY_TABLE_MAX) {
        tl = 0;
        lines_kind = 255;     /* no table: lines unknown, never guessed */
    }
    uint32_t size = xp_record_size(sizeof(xp_rec_pycode) + fl + 1 + nl + 1 + tl);
    xp_rec_pycode *r = xp_journal_reserve(j, size);
    if (r == NULL)
        return;
    r->h.type = XP_REC_PYCODE;
    r->h.size = size;
    r->h.tid = (uint32_t)syscall(SYS_gettid);
    r->key = key;
    r->first_line = ld_i32(code, L->co_firstlineno);
    r->py_major = (uint8_t)L->major;
    r->py_minor = (uint8_t)L->minor;
    r->lines_kind = lines_kind;
    char *p = (char *)(r + 1);
    /* Written as counted: the objects cannot change under us (a code
     * object's strings are immutable and the frame holds the code). */
    r->file_len = (uint32_t)str_utf8(st, file, p, fl);
    p[r->file_len] = '\0';
    p += fl + 1;
    r->name_len = (uint32_t)str_utf8(st, name, p, nl);
    p[r->name_len] = '\0';
    p += nl + 1;
    if (tl)
        memcpy(p, table, tl);
    r->table_len = (uint32_t)tl;
    xp_journal_commit(r);
}

/* The byte offset of the frame's instruction in its code, -1 when what the
 * frame says is out of the code's range (a frame not started yet). */
static int32_t instr_offset(const py_state *st, uintptr_t frame, uintptr_t code)
{
    const xp_py_layout *L = st->L;
    int64_t off, size;
    if (L->instr_kind == XP_PY_INSTR_PTR) {
        off = (int64_t)(ld_ptr(frame, L->frame_instr) - (code + (uintptr_t)L->co_code_adaptive));
        size = ld_i64(code, L->ob_size) * 2;   /* ob_size: 2-byte code units */
    } else {
        off = ld_i32(frame, L->frame_instr);
        if (L->instr_kind == XP_PY_LASTI_UNITS)
            off *= 2;
        size_t n = 0;
        bytes_of(st, ld_ptr(code, L->co_code), &n);
        size = (int64_t)n;
    }
    return off >= 0 && off < size ? (int32_t)off : -1;
}

int xp_python_capture_found(xp_journal *j, xp_pyframe *out, int max, uint64_t *hash)
{
    *hash = 0;
    const py_state *st = atomic_load_explicit(&xp_python_active, memory_order_acquire);
    if (st == NULL)
        return 0;
    const xp_py_layout *L = st->L;
    uintptr_t tss = st->runtime + (uintptr_t)L->runtime_tss;
    /* Before Py_Initialize and after Py_Finalize the key is not there. */
    if (ld_i32(tss, L->tss_initialized) == 0)
        return 0;
    uintptr_t tstate = (uintptr_t)pthread_getspecific((pthread_key_t)ld_i32(tss, L->tss_key));
    if (!ok_ptr(tstate))
        return 0;
    /* Another thread finalizing the runtime frees every other thread's state. */
    uintptr_t fin = ld_ptr(st->runtime, L->runtime_finalizing);
    if (fin != 0 && fin != tstate)
        return 0;
    uintptr_t f = ld_ptr(tstate, L->tstate_frame);
    if (L->cframe_current >= 0)
        f = ok_ptr(f) ? ld_ptr(f, L->cframe_current) : 0;
    int n = 0;
    /* Shim frames do not count toward max; the hop bound keeps a cycle in a
     * damaged chain from holding us. */
    for (int hops = 0; ok_ptr(f) && n < max && hops < 4 * XP_PY_MAX_FRAMES; hops++) {
        uintptr_t back = ld_ptr(f, L->frame_back);
        if (L->owner_cstack >= 0 && *(const char *)(f + (uintptr_t)L->frame_owner) ==
                                        (char)L->owner_cstack) {
            /* The eval loop's entry shim (3.12+): the frame inside it is
             * the first its C call ran. */
            if (n > 0)
                out[n - 1].flags |= XP_PYFRAME_ENTRY;
            f = back;
            continue;
        }
        if (L->instr_kind != XP_PY_INSTR_PTR && !is_a(f, st->frame_type, L))
            break;            /* 3.9/3.10 frames are objects: not one, stop */
        uintptr_t code = ld_ptr(f, L->frame_code);
        if (!is_a(code, st->code_type, L)) {
            f = back;         /* 3.13: a frame may run something else than code */
            continue;
        }
        uint64_t key = code_key(L, code);
        if (xp_seen_claim(seen, SEEN_SLOTS, key))
            write_code(j, st, code, key);
        uint32_t flags = 0;
        /* 3.9/3.10: each frame is a C call of the eval loop; 3.11 says. */
        if (L->instr_kind != XP_PY_INSTR_PTR ||
            (L->frame_entry >= 0 && *(const uint8_t *)(f + (uintptr_t)L->frame_entry)))
            flags = XP_PYFRAME_ENTRY;
        out[n++] = (xp_pyframe){.code = key, .offset = instr_offset(st, f, code), .flags = flags};
        f = back;
    }
    /* The outermost frame was entered from C, whatever the version says. */
    if (n > 0 && !ok_ptr(f))
        out[n - 1].flags |= XP_PYFRAME_ENTRY;
    uint64_t h = 0;
    for (int i = 0; i < n; i++)
        h = fmix(h ^ out[i].code ^ ((uint64_t)(uint32_t)out[i].offset << 32 | out[i].flags));
    *hash = n ? h | 1 : 0;
    return n;
}

/* ---- finding the interpreter ------------------------------------------- */

static int find_libpython(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    const char *base = strrchr(info->dlpi_name, '/');
    base = base ? base + 1 : info->dlpi_name;
    if (strncmp(base, "libpython3", 10) != 0)
        return 0;
    snprintf(data, 4096, "%s", info->dlpi_name);
    return 1;
}

/* Fills found from the object that exports _PyRuntime; false when there is
 * none (yet), or when it is not a version we can read (note says why). */
static bool identify(void)
{
    void *local = NULL;   /* a handle of ours, closed below (NOLOAD: still loaded) */
    void *rt = dlsym(RTLD_DEFAULT, "_PyRuntime");
    if (rt == NULL) {
        /* A libpython loaded with RTLD_LOCAL (a program embedding Python
         * through dlopen) is not in the global scope. */
        char path[4096] = "";
        dl_iterate_phdr(find_libpython, path);
        if (path[0] == '\0' || (local = dlopen(path, RTLD_LAZY | RTLD_NOLOAD)) == NULL)
            return false;
        if ((rt = dlsym(local, "_PyRuntime")) == NULL) {
            dlclose(local);
            return false;
        }
    }
    Dl_info info;
    if (dladdr(rt, &info) == 0 || info.dli_fname == NULL) {
        if (local)
            dlclose(local);
        return false;
    }
    snprintf(found.module, sizeof found.module, "%s", info.dli_fname);
    /* Symbols from that object only (another libpython may be loaded); the
     * executable (no handle by its name) is searched through the global
     * scope, where it comes first. */
    void *obj = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    void *from = obj ? obj : local ? local : RTLD_DEFAULT;
    if (!obj && !local) {
        /* dladdr names the executable by argv[0]: its real path instead. */
        ssize_t n = readlink("/proc/self/exe", found.module, sizeof found.module - 1);
        if (n > 0)
            found.module[n] = '\0';
    }
    int major = 0, minor = 0, micro = 0;
    const unsigned long *hex = dlsym(from, "Py_Version");
    const char *(*get_version)(void) = (const char *(*)(void))dlsym(from, "Py_GetVersion");
    if (hex) {
        major = (int)(*hex >> 24 & 0xff), minor = (int)(*hex >> 16 & 0xff);
        micro = (int)(*hex >> 8 & 0xff);
    } else if (get_version == NULL || sscanf(get_version(), "%d.%d.%d", &major, &minor, &micro) < 2) {
        major = minor = 0;
    }
    found.runtime = (uintptr_t)rt;
    found.code_type = (uintptr_t)dlsym(from, "PyCode_Type");
    found.str_type = (uintptr_t)dlsym(from, "PyUnicode_Type");
    found.bytes_type = (uintptr_t)dlsym(from, "PyBytes_Type");
    found.frame_type = (uintptr_t)dlsym(from, "PyFrame_Type");
    if (obj)
        dlclose(obj);
    if (local)
        dlclose(local);
    snprintf(found.version, sizeof found.version, "%d.%d.%d", major, minor, micro);
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++)
        if (layouts[i].major == major && layouts[i].minor == minor)
            found.L = &layouts[i];
    if (found.L == NULL) {
        snprintf(note, sizeof note,
                 "CPython %s is not supported (3.9 to 3.13 are): stacks have native frames only",
                 found.version);
        return false;
    }
    if (!found.code_type || !found.str_type || !found.bytes_type || !found.frame_type) {
        snprintf(note, sizeof note,
                 "CPython %s in %s does not export its type objects: stacks have native "
                 "frames only", found.version, found.module);
        found.L = NULL;
        return false;
    }
    for (int i = 0; i < found.L->nchecks; i++) {
        const struct xp_py_check *c = &found.L->checks[i];
        if (*(const uint64_t *)(found.runtime + (uintptr_t)c->at) != c->expect) {
            snprintf(note, sizeof note,
                     "CPython %s in %s is laid out differently from its headers "
                     "(_Py_DebugOffsets word at %d): stacks have native frames only",
                     found.version, found.module, c->at);
            found.L = NULL;
            return false;
        }
    }
    return true;
}

void xp_python_scan(xp_journal *j)
{
    pthread_mutex_lock(&scan_lock);
    if (!decided) {
        if (identify())
            atomic_store_explicit(&xp_python_active, &found, memory_order_release);
        decided = found.runtime != 0;   /* no interpreter yet: look again next scan */
    }
    if (decided && !meta_written) {
        uint32_t tid = (uint32_t)syscall(SYS_gettid);
        meta_written = true;
        if (atomic_load_explicit(&xp_python_active, memory_order_relaxed)) {
            xp_journal_put_meta(j, tid, "python_version", found.version);
            xp_journal_put_meta(j, tid, "python_module", found.module);
        } else {
            xp_journal_put_meta(j, tid, "python_note", note);
        }
    }
    pthread_mutex_unlock(&scan_lock);
}

void xp_python_reset(void)
{
    /* The child has one thread: a lock another thread of the parent held
     * is made afresh. */
    pthread_mutex_init(&scan_lock, NULL);
    meta_written = false;
    xp_seen_clear(seen, SEEN_SLOTS);
}
