/* xp_pylayout_gen.c: prints one row of src/xp_pylayouts.h, compiled against one CPython version's headers. */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <internal/pycore_runtime.h>
#if PY_VERSION_HEX >= 0x030B0000
#include <internal/pycore_frame.h>
#else
#include <frameobject.h>
#endif

#define OFF(type, field) ((long)offsetof(type, field))

/* The bit a state field occupies in the state word: set it alone, look. */
static unsigned state_bit(int which)
{
    PyASCIIObject o;
    memset(&o, 0, sizeof o);
    if (which == 0)
        o.state.kind = 1;
    else if (which == 1)
        o.state.compact = 1;
    else
        o.state.ascii = 1;
    unsigned w = 0;
    memcpy(&w, &o.state, sizeof w);
    return (unsigned)__builtin_ctz(w);
}

int main(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    long tss = OFF(_PyRuntimeState, autoTSSkey);
#else
    long tss = OFF(_PyRuntimeState, gilstate.autoTSSkey);
#endif
#if PY_VERSION_HEX >= 0x030D0000
    long tframe = OFF(PyThreadState, current_frame), ccur = -1;
#elif PY_VERSION_HEX >= 0x030B0000
    long tframe = OFF(PyThreadState, cframe), ccur = OFF(_PyCFrame, current_frame);
#else
    long tframe = OFF(PyThreadState, frame), ccur = -1;
#endif
#if PY_VERSION_HEX >= 0x030D0000
    long back = OFF(_PyInterpreterFrame, previous), code = OFF(_PyInterpreterFrame, f_executable);
    long instr = OFF(_PyInterpreterFrame, instr_ptr), entry = -1;
    long owner = OFF(_PyInterpreterFrame, owner), cstack = FRAME_OWNED_BY_CSTACK;
#elif PY_VERSION_HEX >= 0x030C0000
    long back = OFF(_PyInterpreterFrame, previous), code = OFF(_PyInterpreterFrame, f_code);
    long instr = OFF(_PyInterpreterFrame, prev_instr), entry = -1;
    long owner = OFF(_PyInterpreterFrame, owner), cstack = FRAME_OWNED_BY_CSTACK;
#elif PY_VERSION_HEX >= 0x030B0000
    long back = OFF(_PyInterpreterFrame, previous), code = OFF(_PyInterpreterFrame, f_code);
    long instr = OFF(_PyInterpreterFrame, prev_instr), entry = OFF(_PyInterpreterFrame, is_entry);
    long owner = OFF(_PyInterpreterFrame, owner), cstack = -1;
#else
    long back = OFF(PyFrameObject, f_back), code = OFF(PyFrameObject, f_code);
    long instr = OFF(PyFrameObject, f_lasti), entry = -1, owner = -1, cstack = -1;
#endif
#if PY_VERSION_HEX >= 0x030B0000
    int instr_kind = 2, lines_kind = 2;
    long qual = OFF(PyCodeObject, co_qualname), lines = OFF(PyCodeObject, co_linetable);
    long cobytes = -1, adaptive = OFF(PyCodeObject, co_code_adaptive);
#elif PY_VERSION_HEX >= 0x030A0000
    int instr_kind = 1, lines_kind = 1;
    long qual = -1, lines = OFF(PyCodeObject, co_linetable);
    long cobytes = OFF(PyCodeObject, co_code), adaptive = -1;
#else
    int instr_kind = 0, lines_kind = 0;
    long qual = -1, lines = OFF(PyCodeObject, co_lnotab);
    long cobytes = OFF(PyCodeObject, co_code), adaptive = -1;
#endif
    printf("    {.major = %d, .minor = %d,\n", PY_MAJOR_VERSION, PY_MINOR_VERSION);
    printf("     .runtime_tss = %ld, .tss_initialized = %ld, .tss_key = %ld, "
           ".runtime_finalizing = %ld,\n",
           tss, OFF(Py_tss_t, _is_initialized), OFF(Py_tss_t, _key),
           OFF(_PyRuntimeState, _finalizing));
    printf("     .tstate_frame = %ld, .cframe_current = %ld,\n", tframe, ccur);
    printf("     .frame_back = %ld, .frame_code = %ld, .frame_instr = %ld, .frame_entry = %ld, "
           ".frame_owner = %ld, .owner_cstack = %ld,\n", back, code, instr, entry, owner, cstack);
    printf("     .instr_kind = %d, .lines_kind = %d,\n", instr_kind, lines_kind);
    printf("     .ob_type = %ld, .ob_size = %ld,\n", OFF(PyObject, ob_type), OFF(PyVarObject, ob_size));
    printf("     .co_filename = %ld, .co_name = %ld, .co_qualname = %ld, .co_firstlineno = %ld, "
           ".co_lines = %ld, .co_code = %ld, .co_code_adaptive = %ld,\n",
           OFF(PyCodeObject, co_filename), OFF(PyCodeObject, co_name), qual,
           OFF(PyCodeObject, co_firstlineno), lines, cobytes, adaptive);
    printf("     .bytes_sval = %ld,\n", OFF(PyBytesObject, ob_sval));
    printf("     .str_length = %ld, .str_state = %ld, .str_ascii_size = %zu, "
           ".str_compact_size = %zu,\n", OFF(PyASCIIObject, length), OFF(PyASCIIObject, state),
           sizeof(PyASCIIObject), sizeof(PyCompactUnicodeObject));
    printf("     .state_kind_shift = %u, .state_compact_bit = %u, .state_ascii_bit = %u,\n",
           state_bit(0), state_bit(1), state_bit(2));
#if PY_VERSION_HEX >= 0x030D0000
    uint64_t cookie = 0;
    memcpy(&cookie, _Py_Debug_Cookie, 8);
#define D(field) (OFF(_PyRuntimeState, debug_offsets) + OFF(_Py_DebugOffsets, field))
    struct { long at; unsigned long long expect; } c[] = {
        {D(cookie), cookie},
        {D(free_threaded), 0},
        {D(runtime_state.finalizing), (unsigned long long)OFF(_PyRuntimeState, _finalizing)},
        {D(thread_state.current_frame), (unsigned long long)tframe},
        {D(interpreter_frame.previous), (unsigned long long)back},
        {D(interpreter_frame.executable), (unsigned long long)code},
        {D(interpreter_frame.instr_ptr), (unsigned long long)instr},
        {D(interpreter_frame.owner), (unsigned long long)owner},
        {D(code_object.filename), (unsigned long long)OFF(PyCodeObject, co_filename)},
        {D(code_object.qualname), (unsigned long long)qual},
        {D(code_object.linetable), (unsigned long long)lines},
        {D(code_object.firstlineno), (unsigned long long)OFF(PyCodeObject, co_firstlineno)},
        {D(code_object.co_code_adaptive), (unsigned long long)adaptive},
        {D(pyobject.ob_type), (unsigned long long)OFF(PyObject, ob_type)},
    };
    printf("     .nchecks = %zu, .checks = {", sizeof c / sizeof c[0]);
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++)
        printf("%s{%ld, %lluu}", i ? (i % 4 == 0 ? ",\n                 " : ", ") : "", c[i].at,
               c[i].expect);
    printf("}},\n");
#else
    printf("     .nchecks = 0},\n");
#endif
    return 0;
}
