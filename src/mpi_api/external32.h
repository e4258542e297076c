// external32, the portable data representation of MPI-3.1 §13.5.2 that
// MPI_Pack_external writes and MPI_Unpack_external reads: every value
// big-endian, IEEE formats, and a size per predefined type that does not
// depend on the machine (Table 13.2: MPI_LONG is 4 bytes, MPI_WCHAR 2,
// MPI_LONG_DOUBLE 16, IEEE binary128). Packed bytes from one machine
// unpack on any other, whatever its C types are.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/status.h"
#include "mpi_api/datatype.h"

namespace tagwire::mpi::external32 {

// Bytes one element of the predefined type `type` (a handle) takes in
// external32; 0 for a handle that is no predefined value type.
std::size_t size_of(int type);

// True when values of `a` and `b`, both of the same native size, convert
// the same way (an int and a float: four bytes reversed), so that a layout
// may keep them in one run (datatype.cc).
bool converts_alike(int a, int b);

// Bytes `count` elements of `layout` take in external32.
std::size_t packed_size(const TypeLayout& layout, std::size_t count);

// Writes `count` elements of `layout` at `buffer` to `out`
// (packed_size(layout, count) bytes). Fails with kConversion on a value
// external32 cannot hold (a long beyond 32 bits, a wchar_t beyond 16),
// having written what came before it.
Status pack(const TypeLayout& layout, const void* buffer, std::size_t count, std::uint8_t* out);

// Reads `count` elements of `layout` from `in` into `buffer`.
void unpack(const TypeLayout& layout, const std::uint8_t* in, std::size_t count, void* buffer);

}  // namespace tagwire::mpi::external32
