/* xp_pylayout.h: where CPython keeps what the Python frame walk reads, as data per version. */
#ifndef XP_PYLAYOUT_H
#define XP_PYLAYOUT_H

#include <stdint.h>

/* How a frame says which instruction it is at. */
enum xp_py_instr {
    XP_PY_LASTI_BYTES = 0,    /* int f_lasti, a byte offset into co_code (3.9) */
    XP_PY_LASTI_UNITS = 1,    /* int f_lasti, in 2-byte code units (3.10) */
    XP_PY_INSTR_PTR = 2,      /* a pointer into the code object's co_code_adaptive (3.11+) */
};

/* How a code object maps instruction offsets to lines (decoded offline). */
enum xp_py_lines {
    XP_PY_LNOTAB = 0,         /* co_lnotab (3.9) */
    XP_PY_LINETABLE = 1,      /* co_linetable of 3.10 */
    XP_PY_LOCATIONS = 2,      /* the location table of 3.11+ */
};

/* Offsets in bytes; -1 where a version has no such field.  One row per
 * minor version, generated from that version's own headers by
 * src/python/xp_pylayout_gen.c (scripts/gen-pylayouts.sh); tests check the
 * committed table against the installed headers. */
typedef struct xp_py_layout {
    int major, minor;
    /* _PyRuntime: the Py_tss_t whose pthread key holds each thread's own
     * PyThreadState, and the thread finalizing the runtime (non-NULL: the
     * interpreter is shutting down). */
    int32_t runtime_tss, tss_initialized, tss_key, runtime_finalizing;
    /* PyThreadState: the innermost frame (3.9/3.10 PyFrameObject *frame,
     * 3.13 current_frame), or the _PyCFrame holding it (3.11/3.12 cframe,
     * then cframe_current). */
    int32_t tstate_frame, cframe_current;
    /* The frame: the next older one, its code object, where it is (instr,
     * read as `instr_kind` says), whether it is the first frame of a C call
     * of the eval loop (3.11), and who owns it (3.11+; owner_cstack: the
     * value of a shim frame the eval loop pushes on entry, 3.12+). */
    int32_t frame_back, frame_code, frame_instr, frame_entry, frame_owner, owner_cstack;
    int32_t instr_kind, lines_kind;
    /* Code objects. */
    int32_t ob_type, ob_size;
    int32_t co_filename, co_name, co_qualname, co_firstlineno, co_lines, co_code,
        co_code_adaptive;
    /* bytes and str objects. */
    int32_t bytes_sval;
    int32_t str_length, str_state, str_ascii_size, str_compact_size;
    uint32_t state_kind_shift, state_compact_bit, state_ascii_bit; /* within the state word */
    /* Versions that publish _Py_DebugOffsets at the start of _PyRuntime
     * (3.13+): 64-bit words of it that must hold these values in the running
     * interpreter (its cookie, not free-threaded, and the offsets above), or
     * the table does not describe that build and no Python frame is read. */
    int nchecks;
    struct xp_py_check {
        int32_t at;           /* byte offset in _PyRuntime */
        uint64_t expect;
    } checks[16];
} xp_py_layout;

#endif
