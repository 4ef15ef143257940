/* py_embed.c: a C program that embeds CPython: copies before Py_Initialize, from Python code, and after Py_FinalizeEx. */
#include <Python.h>
#include <cuda_runtime_api.h>
#include <stdio.h>

/* Python code run by the embedded interpreter: a copy of 202 bytes through
 * the program's own cudaMemcpy (the global scope: the preload's hook). */
static const char script[] =
    "import ctypes\n"
    "rt = ctypes.PyDLL(None)\n"
    "rt.cudaMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]\n"
    "buf = ctypes.create_string_buffer(4096)\n"
    "def embedded(dev):\n"
    "    assert rt.cudaMemcpy(dev, buf, 202, 1) == 0\n"
    "embedded(DEV)\n";

int main(void)
{
    static char host[4096];
    void *dev = NULL;
    if (cudaMalloc(&dev, sizeof host) != cudaSuccess ||
        cudaMemcpy(dev, host, 201, cudaMemcpyHostToDevice) != cudaSuccess)  /* before */
        return 1;
    Py_Initialize();
    PyObject *globals = PyDict_New(), *builtins = PyEval_GetBuiltins();
    PyDict_SetItemString(globals, "__builtins__", builtins);
    PyObject *d = PyLong_FromVoidPtr(dev);
    PyDict_SetItemString(globals, "DEV", d);
    PyObject *r = PyRun_String(script, Py_file_input, globals, globals);
    int ok = r != NULL;
    if (!ok)
        PyErr_Print();
    Py_XDECREF(r);
    Py_DECREF(d);
    Py_DECREF(globals);
    if (Py_FinalizeEx() != 0 || !ok)
        return 2;
    if (cudaMemcpy(dev, host, 203, cudaMemcpyHostToDevice) != cudaSuccess)  /* after */
        return 3;
    puts("embedded ok");
    return 0;
}
