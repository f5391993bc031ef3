/* Checks runtime/python_frames.c's row for the CPython whose headers this
 * is compiled against (tests/unit/python_layouts.sh compiles it once per
 * CPython found): every offset the frame reader uses is that version's
 * own. */
#define Py_BUILD_CORE 1
#include <Python.h>
#if PY_VERSION_HEX < 0x030B0000
#include <frameobject.h>
#else
#include <internal/pycore_frame.h>
#endif
#include <stddef.h>
#include <stdio.h>

#include "runtime/python_frames.c"

#define SAME(field, value)                                                                         \
    do {                                                                                           \
        if ((size_t)(field) != (size_t)(value)) {                                                  \
            printf("FAIL %s: %zu, the headers say %zu\n", #field, (size_t)(field),                 \
                   (size_t)(value));                                                               \
            bad++;                                                                                 \
        }                                                                                          \
    } while (0)

int main(void)
{
    unsigned v = PY_VERSION_HEX >> 16;
    const struct layout *l = NULL;
    for (size_t i = 0; i < sizeof layouts / sizeof *layouts; i++)
        if (layouts[i].version == v)
            l = &layouts[i];
    if (!l) {
        printf("FAIL no row for %x\n", v);
        return 1;
    }
    int bad = 0;
#if PY_VERSION_HEX < 0x030B0000
    SAME(l->ts_frame, offsetof(PyThreadState, frame));
    SAME(l->frame_previous, offsetof(PyFrameObject, f_back));
    SAME(l->frame_code, offsetof(PyFrameObject, f_code));
    SAME(l->frame_instr, offsetof(PyFrameObject, f_lasti));
    SAME(l->code_name, offsetof(PyCodeObject, co_name));
#else
#if PY_VERSION_HEX < 0x030D0000
    SAME(l->ts_frame, offsetof(PyThreadState, cframe));
    SAME(l->cframe_current, offsetof(_PyCFrame, current_frame));
    SAME(l->frame_code, offsetof(_PyInterpreterFrame, f_code));
    SAME(l->frame_instr, offsetof(_PyInterpreterFrame, prev_instr));
#else
    SAME(l->ts_frame, offsetof(PyThreadState, current_frame));
    SAME(l->frame_code, offsetof(_PyInterpreterFrame, f_executable));
    SAME(l->frame_instr, offsetof(_PyInterpreterFrame, instr_ptr));
#endif
    SAME(l->frame_previous, offsetof(_PyInterpreterFrame, previous));
    SAME(l->frame_owner, offsetof(_PyInterpreterFrame, owner));
    SAME(l->code_name, offsetof(PyCodeObject, co_qualname));
    SAME(l->code_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
    SAME(l->code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
    SAME(OWNED_BY_GENERATOR, FRAME_OWNED_BY_GENERATOR);
#endif
    SAME(l->code_filename, offsetof(PyCodeObject, co_filename));
    SAME(l->ascii_size, sizeof(PyASCIIObject));
    SAME(l->compact_size, sizeof(PyCompactUnicodeObject));
    SAME(OB_TYPE, offsetof(PyObject, ob_type));
    SAME(STR_LENGTH, offsetof(PyASCIIObject, length));
    SAME(STR_STATE, offsetof(PyASCIIObject, state));
    printf("python %x: %s\n", v, bad ? "layout differs" : "layout as the reader has it");
    return bad != 0;
}
