/* A NumPy data allocator (NEP 49 memory handler) whose blocks start on a 64-byte boundary.

   XLA's CPU client reads a NumPy array in place only when its data is 64-byte aligned; NumPy's
   own allocator gives 16 bytes, so most large arrays were copied on their way into a kernel
   (or passed as a window, which XLA still copies for concatenation and float reductions).
   dmlspec.kernels.host installs this handler once, when the kernel runtime is imported, with
   its ALIGNMENT (the one place that number is written).

   Each block is one malloc (calloc) block with a header just before the aligned address: the
   address malloc returned, to free, and the size asked for, to copy on realloc. Large blocks
   get the transparent-huge-page advice NumPy's own allocator gives them (fewer page faults).
   No NumPy headers: the handler struct is NEP 49's, and PyDataMem_SetHandler is reached
   through NumPy's C-API table, whose slots never move. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define HUGE_PAGE_MIN_BYTES ((size_t)1 << 22) /* NumPy's threshold for the advice */
#define PAGE_BYTES 4096u
#define SET_HANDLER_SLOT 304 /* PyDataMem_SetHandler in NumPy's C-API table (since 1.22) */

/* NEP 49's structs, version 1 (numpy/ndarraytypes.h). */
typedef struct {
    void *ctx;
    void *(*malloc)(void *ctx, size_t size);
    void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
    void *(*realloc)(void *ctx, void *ptr, size_t new_size);
    void (*free)(void *ctx, void *ptr, size_t size);
} DataAllocator;

typedef struct {
    char name[127];
    uint8_t version;
    DataAllocator allocator;
} DataHandler;

typedef struct {
    void *block; /* what malloc returned */
    size_t size; /* the bytes asked for */
} Header;

static size_t alignment = 0; /* a power of two, set by install() before any allocation */
static int advise_huge_pages = 0;

static void *place(void *block, size_t size) {
    if (block == NULL) {
        return NULL;
    }
    uintptr_t start = ((uintptr_t)block + sizeof(Header) + alignment - 1) & ~(uintptr_t)(alignment - 1);
    Header *header = (Header *)start - 1;
    header->block = block;
    header->size = size;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (advise_huge_pages && size >= HUGE_PAGE_MIN_BYTES) {
        uintptr_t page = (start + PAGE_BYTES - 1) & ~(uintptr_t)(PAGE_BYTES - 1);
        madvise((void *)page, size - (page - start), MADV_HUGEPAGE); /* advice: failure is harmless */
    }
#endif
    return (void *)start;
}

static void *aligned_malloc(void *ctx, size_t size) {
    (void)ctx;
    size_t extra = alignment + sizeof(Header);
    if (size > SIZE_MAX - extra) {
        return NULL;
    }
    return place(malloc(size + extra), size);
}

static void *aligned_calloc(void *ctx, size_t count, size_t item_size) {
    (void)ctx;
    size_t extra = alignment + sizeof(Header);
    if (item_size != 0 && count > (SIZE_MAX - extra) / item_size) {
        return NULL;
    }
    size_t size = count * item_size;
    return place(calloc(1, size + extra), size);
}

static void aligned_free(void *ctx, void *ptr, size_t size) {
    (void)ctx;
    (void)size;
    if (ptr != NULL) {
        free(((Header *)ptr - 1)->block);
    }
}

static void *aligned_realloc(void *ctx, void *ptr, size_t new_size) {
    if (ptr == NULL) {
        return aligned_malloc(ctx, new_size);
    }
    /* A new block rather than realloc: realloc may move the data to another alignment. */
    Header *header = (Header *)ptr - 1;
    void *moved = aligned_malloc(ctx, new_size);
    if (moved == NULL) {
        return NULL; /* the old block stays valid, as realloc's does */
    }
    memcpy(moved, ptr, header->size < new_size ? header->size : new_size);
    free(header->block);
    return moved;
}

static DataHandler handler = {
    "dmlspec_aligned_64",
    1,
    {NULL, aligned_malloc, aligned_calloc, aligned_realloc, aligned_free},
};

static void **numpy_api(void) {
    PyObject *module = PyImport_ImportModule("numpy._core._multiarray_umath");
    if (module == NULL) { /* NumPy 1.x */
        PyErr_Clear();
        module = PyImport_ImportModule("numpy.core._multiarray_umath");
    }
    if (module == NULL) {
        return NULL;
    }
    PyObject *capsule = PyObject_GetAttrString(module, "_ARRAY_API");
    Py_DECREF(module);
    if (capsule == NULL) {
        return NULL;
    }
    void **api = (void **)PyCapsule_GetPointer(capsule, NULL);
    Py_DECREF(capsule); /* the table is static in NumPy's module, which stays loaded */
    return api;
}

PyDoc_STRVAR(install_doc,
             "install(alignment, advise_huge_pages)\n--\n\n"
             "Make NumPy allocate array data aligned to `alignment` bytes (a power of two) in the\n"
             "calling context (NumPy keeps its handler in a context variable). Once per process.\n"
             "Returns the handler that was current before.");

static PyObject *install(PyObject *self, PyObject *args) {
    (void)self;
    Py_ssize_t wanted;
    int advise;
    if (!PyArg_ParseTuple(args, "np", &wanted, &advise)) {
        return NULL;
    }
    if (wanted < (Py_ssize_t)sizeof(void *) || (wanted & (wanted - 1)) != 0) {
        PyErr_Format(PyExc_ValueError, "alignment must be a power of two of at least %zd bytes; got %zd",
                     (Py_ssize_t)sizeof(void *), wanted);
        return NULL;
    }
    if (alignment != 0 && alignment != (size_t)wanted) {
        PyErr_Format(PyExc_ValueError, "the handler is installed with alignment %zu; got %zd",
                     alignment, wanted);
        return NULL;
    }
    void **api = numpy_api();
    if (api == NULL) {
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(&handler, "mem_handler", NULL);
    if (capsule == NULL) {
        return NULL;
    }
    alignment = (size_t)wanted;
    advise_huge_pages = advise;
    PyObject *(*set_handler)(PyObject *) = (PyObject * (*)(PyObject *)) api[SET_HANDLER_SLOT];
    PyObject *previous = set_handler(capsule);
    Py_DECREF(capsule); /* NumPy's context variable holds it now */
    return previous;
}

static PyMethodDef methods[] = {
    {"install", install, METH_VARARGS, install_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    "_aligned",
    "A 64-byte aligned NumPy data allocator (see dmlspec.kernels.host).",
    -1,
    methods,
    NULL, /* m_slots */
    NULL, /* m_traverse */
    NULL, /* m_clear */
    NULL, /* m_free */
};

PyMODINIT_FUNC PyInit__aligned(void) {
    PyObject *created = PyModule_Create(&module);
    if (created != NULL && PyModule_AddStringConstant(created, "HANDLER_NAME", handler.name) < 0) {
        Py_DECREF(created);
        return NULL;
    }
    return created;
}
