/* The MPI subset the fleet's gather calls, opened at run time by mpi.c (never
 * linked). Signatures from the MPI standard (MPI-3.1, sections 5.5 "Gather",
 * 8.7 "Startup", 6.4 "Communicator accessors"); MPI_SUCCESS = 0 (section 8.4).
 * Open MPI's handles are pointers to exported objects (Open MPI's mpi.h:
 * "#define MPI_COMM_WORLD OMPI_PREDEFINED_GLOBAL(MPI_Comm, ompi_mpi_comm_world)",
 * OMPI_PREDEFINED_GLOBAL(type, global) being ((type) ((void *) &(global)));
 * the same for MPI_BYTE = ompi_mpi_byte and MPI_INT = ompi_mpi_int), so a
 * handle is the address dlsym gives for that name; src/kb/mpi_abi.c holds
 * those facts. Open MPI 4.x ships them in libmpi.so.40. */
#ifndef GV_FLEET_SYMS_MPI_H
#define GV_FLEET_SYMS_MPI_H

typedef void *gv_mpi_comm;
typedef void *gv_mpi_datatype;

enum { GV_MPI_SUCCESS = 0 };

/* X(REQ|OPT, field, return type, (parameters), "exported name") */
#define GV_SYMS_MPI(X)                                                                        \
    X(REQ, Init, int, (int *, char ***), "MPI_Init")                                         \
    X(REQ, Initialized, int, (int *), "MPI_Initialized")                                     \
    X(REQ, Comm_rank, int, (gv_mpi_comm, int *), "MPI_Comm_rank")                            \
    X(REQ, Comm_size, int, (gv_mpi_comm, int *), "MPI_Comm_size")                            \
    X(REQ, Gather, int,                                                                       \
      (const void *, int, gv_mpi_datatype, void *, int, gv_mpi_datatype, int, gv_mpi_comm),  \
      "MPI_Gather")                                                                           \
    X(REQ, Gatherv, int,                                                                      \
      (const void *, int, gv_mpi_datatype, void *, const int *, const int *,                 \
       gv_mpi_datatype, int, gv_mpi_comm),                                                    \
      "MPI_Gatherv")                                                                          \
    X(REQ, Finalize, int, (void), "MPI_Finalize")                                            \
    X(REQ, Error_string, int, (int, char *, int *), "MPI_Error_string")

#endif
