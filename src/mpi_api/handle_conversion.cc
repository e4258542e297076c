// C <-> Fortran handle conversion. Tagwire's handles are ints, which is
// what a Fortran INTEGER handle is, so each conversion is the identity;
// they exist so that C code written for any MPI compiles and behaves.
#include "mpi_api/state.h"

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

}  // extern "C"
