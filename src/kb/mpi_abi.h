/* Open MPI's run-time ABI as the fleet's gather uses it (src/fleet/mpi.c):
 * the library file and the exported objects whose addresses are its handles.
 * Facts with their source; nothing here prints. */
#ifndef GV_KB_MPI_ABI_H
#define GV_KB_MPI_ABI_H

struct kb_mpi_abi {
    const char *implementation;  /* "Open MPI" */
    const char *versions;        /* the releases the row holds for */
    const char *library;         /* the file dlopen opens */
    const char *comm_world;      /* MPI_COMM_WORLD is the address of this object */
    const char *byte_type;       /* MPI_BYTE */
    const char *int_type;        /* MPI_INT */
    const char *source;
};

/* The rows, newest first; *n their count. */
const struct kb_mpi_abi *kb_mpi_abis(int *n);

#endif
