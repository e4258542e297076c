// The MPI-1 calls MPI-3.0 removed (mpi.h lists them): each is the MPI-2
// call that replaced it, through PMPI_ so that a profiler sees one call.
// MPI_LB and MPI_UB are handled where struct types are made
// (datatypes.cc).
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

extern "C" {

int MPI_Address(const void* location, MPI_Aint* address) {
  return PMPI_Get_address(location, address);
}

int MPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  MPI_Aint lb = 0;
  return PMPI_Type_get_extent(datatype, &lb, extent);
}

int MPI_Type_lb(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint extent = 0;
  return PMPI_Type_get_extent(datatype, displacement, &extent);
}

int MPI_Type_ub(MPI_Datatype datatype, MPI_Aint* displacement) {
  MPI_Aint lb = 0, extent = 0;
  const int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
  if (rc == MPI_SUCCESS) *displacement = lb + extent;
  return rc;
}

int MPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}

int MPI_Type_hindexed(int count, const int array_of_blocklengths[],
                      const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype* newtype) {
  return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                   newtype);
}

int MPI_Type_struct(int count, const int array_of_blocklengths[],
                    const MPI_Aint array_of_displacements[], const MPI_Datatype array_of_types[],
                    MPI_Datatype* newtype) {
  return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                 array_of_types, newtype);
}

int MPI_Errhandler_create(MPI_Handler_function* function, MPI_Errhandler* errhandler) {
  return PMPI_Comm_create_errhandler(function, errhandler);
}

int MPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler) {
  return PMPI_Comm_set_errhandler(comm, errhandler);
}

int MPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* errhandler) {
  return PMPI_Comm_get_errhandler(comm, errhandler);
}

}  // extern "C"
