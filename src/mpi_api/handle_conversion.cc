// C <-> Fortran handle conversion. Tagwire's handles are ints, which is
// what a Fortran INTEGER handle is, so each conversion is the identity;
// they exist so that C code written for any MPI compiles and behaves.
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

extern "C" {

MPI_Fint MPI_Comm_c2f(MPI_Comm comm) {
  return comm;
}
MPI_Comm MPI_Comm_f2c(MPI_Fint comm) {
  return comm;
}
MPI_Fint MPI_Type_c2f(MPI_Datatype datatype) {
  return datatype;
}
MPI_Datatype MPI_Type_f2c(MPI_Fint datatype) {
  return datatype;
}
MPI_Fint MPI_Request_c2f(MPI_Request request) {
  return request;
}
MPI_Request MPI_Request_f2c(MPI_Fint request) {
  return request;
}
MPI_Fint MPI_Message_c2f(MPI_Message message) {
  return message;
}
MPI_Message MPI_Message_f2c(MPI_Fint message) {
  return message;
}
MPI_Fint MPI_Group_c2f(MPI_Group group) {
  return group;
}
MPI_Group MPI_Group_f2c(MPI_Fint group) {
  return group;
}
MPI_Fint MPI_Info_c2f(MPI_Info info) {
  return info;
}
MPI_Info MPI_Info_f2c(MPI_Fint info) {
  return info;
}
MPI_Fint MPI_Op_c2f(MPI_Op op) {
  return op;
}
MPI_Op MPI_Op_f2c(MPI_Fint op) {
  return op;
}
MPI_Fint MPI_Win_c2f(MPI_Win win) {
  return win;
}
MPI_Win MPI_Win_f2c(MPI_Fint win) {
  return win;
}

MPI_Fint MPI_Errhandler_c2f(MPI_Errhandler errhandler) {
  return errhandler;
}
MPI_Errhandler MPI_Errhandler_f2c(MPI_Fint errhandler) {
  return errhandler;
}

int MPI_Status_c2f(const MPI_Status* c_status, MPI_Fint* f_status) {
  if (c_status == MPI_STATUS_IGNORE || f_status == MPI_F_STATUS_IGNORE) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "an ignored status cannot be converted"});
  }
  const auto count = static_cast<std::uint64_t>(c_status->tagwire_count);
  f_status[0] = c_status->MPI_SOURCE;
  f_status[1] = c_status->MPI_TAG;
  f_status[2] = c_status->MPI_ERROR;
  f_status[3] = c_status->tagwire_cancelled;
  f_status[4] = static_cast<MPI_Fint>(count & 0xffffffffu);
  f_status[5] = static_cast<MPI_Fint>(count >> 32);
  return MPI_SUCCESS;
}

int MPI_Status_f2c(const MPI_Fint* f_status, MPI_Status* c_status) {
  if (c_status == MPI_STATUS_IGNORE || f_status == MPI_F_STATUS_IGNORE) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "an ignored status cannot be converted"});
  }
  c_status->MPI_SOURCE = f_status[0];
  c_status->MPI_TAG = f_status[1];
  c_status->MPI_ERROR = f_status[2];
  c_status->tagwire_cancelled = f_status[3];
  c_status->tagwire_count = static_cast<std::size_t>(static_cast<std::uint32_t>(f_status[4]) |
                                                     static_cast<std::uint64_t>(f_status[5]) << 32);
  return MPI_SUCCESS;
}

}  // extern "C"
