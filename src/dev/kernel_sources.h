/* Kernel sources embedded at build time from the .cu files in src/dev/kernels. */
#ifndef GV_DEV_KERNEL_SOURCES_H
#define GV_DEV_KERNEL_SOURCES_H

struct gv_kernel_source {
    const char *name; /* file name, e.g. "elementwise.cu" */
    const char *text; /* NUL-terminated source */
};

extern const struct gv_kernel_source gv_kernel_sources[]; /* ends with {0,0} */
extern const int gv_kernel_source_count;

#endif
