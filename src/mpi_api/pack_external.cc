// MPI_Pack_external, MPI_Unpack_external and MPI_Pack_external_size: the
// portable pack format (external32.h), for files and for programs that
// exchange packed bytes between different machines.
#include <cstring>
#include <string>

#include "mpi_api/error_handlers.h"
#include "mpi_api/external32.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// The one data representation MPI-3.1 requires of these calls.
Status check_datarep(const char* datarep) {
  if (datarep != nullptr && std::strcmp(datarep, "external32") == 0) return {};
  return Status(ErrorCode::kInvalidArgument, std::string("data representation \"") +
                                                 (datarep ? datarep : "(null)") +
                                                 "\": only \"external32\" is provided");
}

// The committed layout of `count` elements, checked as MPI_Pack checks them.
Result<const TypeLayout*> checked_layout(const char* datarep, int count, MPI_Datatype datatype) {
  if (Status s = check_initialized(); !s) return s;
  if (Status s = check_datarep(datarep); !s) return s;
  if (auto bytes = bytes_of(count, datatype); !bytes) return bytes.status();
  return layout_of(datatype);
}

}  // namespace

extern "C" {

int MPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                           MPI_Aint* size) {
  auto layout = checked_layout(datarep, incount, datatype);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  *size =
      static_cast<MPI_Aint>(external32::packed_size(**layout, static_cast<std::size_t>(incount)));
  return MPI_SUCCESS;
}

int MPI_Pack_external(const char datarep[], const void* inbuf, int incount, MPI_Datatype datatype,
                      void* outbuf, MPI_Aint outsize, MPI_Aint* position) {
  auto layout = checked_layout(datarep, incount, datatype);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  const std::size_t bytes = external32::packed_size(**layout, static_cast<std::size_t>(incount));
  TW_MPI_TRY(MPI_COMM_WORLD, check_pack_room("MPI_Pack_external", true, bytes, *position, outsize));
  // On a value external32 cannot hold the position stays where it was.
  TW_MPI_TRY(MPI_COMM_WORLD, external32::pack(**layout, inbuf, static_cast<std::size_t>(incount),
                                              static_cast<std::uint8_t*>(outbuf) + *position));
  *position += static_cast<MPI_Aint>(bytes);
  return MPI_SUCCESS;
}

int MPI_Unpack_external(const char datarep[], const void* inbuf, MPI_Aint insize,
                        MPI_Aint* position, void* outbuf, int outcount, MPI_Datatype datatype) {
  auto layout = checked_layout(datarep, outcount, datatype);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  const std::size_t bytes = external32::packed_size(**layout, static_cast<std::size_t>(outcount));
  TW_MPI_TRY(MPI_COMM_WORLD,
             check_pack_room("MPI_Unpack_external", false, bytes, *position, insize));
  external32::unpack(**layout, static_cast<const std::uint8_t*>(inbuf) + *position,
                     static_cast<std::size_t>(outcount), outbuf);
  *position += static_cast<MPI_Aint>(bytes);
  return MPI_SUCCESS;
}

}  // extern "C"
