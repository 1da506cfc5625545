/* Files embedded at build time (cmake/embed_files.cmake): the GPU kernel
 * sources from src/dev/kernels (.cu) and the PyTorch worker from python (.py);
 * and (cmake/embed_blob.cmake) the capture's recorder in C, a CPython extension
 * module built from python/native/_gpuvet_capture_record.c (size 0 where it was not
 * built). */
#ifndef GV_DEV_KERNEL_SOURCES_H
#define GV_DEV_KERNEL_SOURCES_H

struct gv_kernel_source {
    const char *name; /* file name, e.g. "elementwise.cu" */
    const char *text; /* NUL-terminated source */
};

extern const struct gv_kernel_source gv_kernel_sources[]; /* ends with {0,0} */
extern const int gv_kernel_sources_count;
extern const struct gv_kernel_source gv_python_sources[]; /* ends with {0,0} */
extern const int gv_python_sources_count;
extern const unsigned char gv_python_capture_record[];
extern const unsigned long gv_python_capture_record_size;

#endif
