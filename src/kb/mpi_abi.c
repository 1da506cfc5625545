/* Open MPI's handles are addresses of exported objects: its mpi.h defines
 * MPI_COMM_WORLD as OMPI_PREDEFINED_GLOBAL(MPI_Comm, ompi_mpi_comm_world),
 * MPI_BYTE as OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_byte) and MPI_INT
 * as OMPI_PREDEFINED_GLOBAL(MPI_Datatype, ompi_mpi_int), with
 * #define OMPI_PREDEFINED_GLOBAL(type, global) ((type) ((void *) &(global))).
 * The library's soname is libmpi.so.40 from Open MPI 3.0 through 5.0 (Open MPI's
 * "Shared library version numbers" in docs/developers, and VERSION's
 * libmpi_so_version=40:x:y); Debian 12 ships Open MPI 4.1.4 as libopenmpi3
 * with /usr/lib/x86_64-linux-gnu/libmpi.so.40. */
#include "kb/mpi_abi.h"

static const struct kb_mpi_abi abis[] = {
    {"Open MPI", "3.0 to 5.0", "libmpi.so.40", "ompi_mpi_comm_world", "ompi_mpi_byte",
     "ompi_mpi_int",
     "Open MPI ompi/include/mpi.h.in (OMPI_PREDEFINED_GLOBAL, MPI_COMM_WORLD, MPI_BYTE, "
     "MPI_INT); VERSION libmpi_so_version 40"},
};

const struct kb_mpi_abi *kb_mpi_abis(int *n)
{
    *n = (int)(sizeof abis / sizeof abis[0]);
    return abis;
}
