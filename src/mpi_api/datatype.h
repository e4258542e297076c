// TypeLayout: where the bytes of one element of an MPI datatype lie, as a
// list of byte runs relative to the element's start (a run may repeat at a
// stride: a vector of 135 M blocks is one run, not 135 M), with the element's
// size (bytes of data), lower bound and extent (the stride between
// consecutive elements). Every constructor (contiguous, vector, hvector,
// indexed, struct) is one general placement of copies of older layouts, so
// one piece of code builds them all, and pack / unpack walk the runs.
//
// Communication sends the packed bytes: a layout that is one run covering
// its whole extent is sent in place, anything else goes through a pack
// buffer, so a non-contiguous type never puts wrong bytes on the wire.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "common/status.h"

namespace tagwire::mpi {

class TypeLayout;

// How a derived type was made (MPI_Type_get_envelope / get_contents): the
// combiner and the constructor's arguments, the old types kept alive by
// their layouts (a freed old type must still be described).
struct TypeConstructor {
  int combiner = 0;  // MPI_COMBINER_*
  std::vector<int> integers;
  std::vector<std::ptrdiff_t> addresses;
  std::vector<int> type_handles;  // as the user named them (predefined ones stay valid)
  std::vector<std::shared_ptr<const TypeLayout>> type_layouts;  // null for predefined ones
};

class TypeLayout {
 public:
  struct Run {
    std::ptrdiff_t offset;     // from the element's start (its buffer address)
    std::size_t length;        // bytes
    std::uint32_t basic_size;  // size of the predefined type the run is made of
    // That predefined type's handle: runs merge only where their types
    // convert alike (external32.h), so a data representation that converts
    // each type its own way knows what every byte is.
    std::int32_t basic_type;
    // The run, `repeat` times, `stride` bytes apart (its pieces, in packed
    // order; repeat 1 is the run alone).
    std::uint64_t repeat = 1;
    std::ptrdiff_t stride = 0;
    std::ptrdiff_t at(std::uint64_t k) const {
      return offset + static_cast<std::ptrdiff_t>(k) * stride;
    }
  };

  // A predefined type: `size` bytes of `basic_size`-byte elements of the
  // predefined type `basic_type` (a handle).
  static TypeLayout basic(std::size_t size, std::size_t basic_size, std::size_t alignment,
                          int basic_type);

  // The general constructor: entry i places blocks[i] consecutive copies of
  // *types[i] starting `displacements[i]` bytes from the new element's
  // start. `pad_to_alignment`: round the extent up to the strictest
  // alignment of the parts (MPI_Type_create_struct, as C lays out structs).
  static Result<TypeLayout> place(std::span<const int> blocks,
                                  std::span<const std::ptrdiff_t> displacements,
                                  std::span<const TypeLayout* const> types, bool pad_to_alignment);

  // `count` blocks of `blocklength` copies of `old`, `stride` bytes apart
  // (vector, hvector) in a few runs whatever `count` is, or nothing when
  // the block is not one run (then place() builds it piece by piece).
  static std::optional<TypeLayout> strided(std::size_t count, std::size_t blocklength,
                                           std::ptrdiff_t stride, const TypeLayout& old);

  // The same runs with a new lower bound and extent (MPI_Type_create_resized).
  TypeLayout resized(std::ptrdiff_t lower_bound, std::ptrdiff_t extent) const;

  std::size_t size() const { return size_; }
  std::ptrdiff_t lower_bound() const { return lb_; }
  std::ptrdiff_t extent() const { return ub_ - lb_; }
  std::size_t alignment() const { return alignment_; }
  bool committed() const { return committed_; }
  void commit() { committed_ = true; }
  const std::vector<Run>& runs() const { return runs_; }
  // Null for a predefined type.
  const TypeConstructor* constructor() const { return constructor_.get(); }
  void set_constructor(TypeConstructor c) {
    constructor_ = std::make_shared<const TypeConstructor>(std::move(c));
  }

  // True when `count` elements are `count * size()` bytes in a row from
  // buffer + lower_bound(): sent and received in place.
  bool contiguous() const;
  // contiguous() from the buffer's own address (lower bound 0): the packed
  // bytes are the buffer's, used where they are, without pack or unpack.
  bool in_place() const { return contiguous() && lb_ == 0; }

  // Packs `count` elements at `buffer` into `out` (count * size() bytes).
  void pack(const void* buffer, std::size_t count, std::uint8_t* out) const;
  // Unpacks the first `bytes` packed bytes into `count` elements at `buffer`;
  // nothing beyond `bytes` (a truncated message) is written.
  void unpack(const std::uint8_t* in, std::size_t bytes, std::size_t count, void* buffer) const;
  // Where the packed bytes of `count` elements lie, in packed order, from
  // the buffer's address: runs that meet merged (one-sided operations
  // move each piece with one transfer).
  struct Piece {
    std::ptrdiff_t offset;
    std::size_t length;
  };
  std::vector<Piece> pieces(std::size_t count) const;

  // The bytes the data of one element spans, from its lowest piece to
  // the end of its highest (0, 0 without data): the true extent.
  struct Span {
    std::ptrdiff_t lo = 0;
    std::ptrdiff_t hi = 0;
  };
  Span data_span() const;

  // Whole predefined elements in the first `bytes` packed bytes.
  std::size_t basic_elements(std::size_t bytes) const { return count_basic(bytes).whole; }
  // True when the first `bytes` packed bytes stop inside a predefined
  // element: a message whose type signature does not match this type's.
  bool ends_inside_element(std::size_t bytes) const { return count_basic(bytes).cut != 0; }
  // The packed bytes `elements` predefined elements take, from the
  // start (the inverse of basic_elements; MPI_Status_set_elements).
  std::size_t basic_bytes(std::size_t elements) const;

  // The predefined datatype handle every basic element of this type is (a
  // MINLOC pair such as MPI_DOUBLE_INT counts as one element), or 0 when
  // it mixes types or has none: what a predefined reduction operation
  // combines, element by element, in the packed bytes (MPI-3.1 §5.9.2
  // allows derived datatypes of one predefined type there).
  int element_type() const { return element_type_; }
  void set_element_type(int handle) { element_type_ = handle; }

 private:
  // Whole predefined elements in the first `bytes` packed bytes, and the
  // bytes past the last of them.
  struct BasicCount {
    std::size_t whole = 0;
    std::size_t cut = 0;
  };
  BasicCount count_basic(std::size_t bytes) const;

  std::vector<Run> runs_;
  std::size_t size_ = 0;
  std::ptrdiff_t lb_ = 0;
  std::ptrdiff_t ub_ = 0;
  std::size_t alignment_ = 1;
  std::size_t basic_per_element_ = 0;
  int element_type_ = 0;
  bool committed_ = false;
  std::shared_ptr<const TypeConstructor> constructor_;
};

}  // namespace tagwire::mpi
