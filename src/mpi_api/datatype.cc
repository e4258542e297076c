#include "mpi_api/datatype.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "mpi_api/external32.h"

namespace tagwire::mpi {

namespace {

// Above this many runs per element a layout is refused: a type map that
// large is a mistake (or an attack on memory), not a data layout.
constexpr std::size_t kMaxRuns = std::size_t{1} << 22;

}  // namespace

TypeLayout TypeLayout::basic(std::size_t size, std::size_t basic_size, std::size_t alignment,
                             int basic_type) {
  TypeLayout t;
  if (size > 0) t.runs_.push_back({0, size, static_cast<std::uint32_t>(basic_size), basic_type});
  t.size_ = size;
  t.ub_ = static_cast<std::ptrdiff_t>(size);
  t.alignment_ = alignment;
  t.basic_per_element_ = basic_size == 0 ? 0 : size / basic_size;
  t.committed_ = true;
  return t;
}

Result<TypeLayout> TypeLayout::place(std::span<const int> blocks,
                                     std::span<const std::ptrdiff_t> displacements,
                                     std::span<const TypeLayout* const> types,
                                     bool pad_to_alignment) {
  TypeLayout t;
  t.committed_ = false;
  bool bounded = false;
  bool first_part = true;
  std::size_t runs = 0;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i] < 0) {
      return Status(ErrorCode::kInvalidCount, "negative block length " + std::to_string(blocks[i]) +
                                                  " in entry " + std::to_string(i));
    }
    // Copies of a one-run type back to back merge into one run (a block
    // of 8192 MPI_BYTEs is one piece, not 8192).
    runs +=
        types[i]->contiguous() ? 1 : static_cast<std::size_t>(blocks[i]) * types[i]->runs_.size();
    if (runs > kMaxRuns) {
      return Status(ErrorCode::kInvalidArgument,
                    "datatype would have more than " + std::to_string(kMaxRuns) + " pieces");
    }
  }
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const TypeLayout& old = *types[i];
    const auto n = static_cast<std::size_t>(blocks[i]);
    t.alignment_ = std::max(t.alignment_, old.alignment_);
    if (n == 0) continue;
    if (old.size_ > 0) {  // a part with no data leaves the element type alone
      t.element_type_ = first_part || t.element_type_ == old.element_type_ ? old.element_type_ : 0;
      first_part = false;
    }
    for (std::size_t k = 0; k < n; ++k) {
      const std::ptrdiff_t base = displacements[i] + static_cast<std::ptrdiff_t>(k) * old.extent();
      for (const Run& r : old.runs_) {
        Run placed{base + r.offset, r.length, r.basic_size, r.basic_type};
        Run* last = t.runs_.empty() ? nullptr : &t.runs_.back();
        if (last != nullptr && last->basic_size == placed.basic_size &&
            external32::converts_alike(last->basic_type, placed.basic_type) &&
            last->offset + static_cast<std::ptrdiff_t>(last->length) == placed.offset) {
          last->length += placed.length;  // adjacent in memory and in order: one run
        } else {
          t.runs_.push_back(placed);
        }
      }
    }
    // The copies' bounds: the lowest lower bound and the highest upper
    // bound among them, the last copy's or the first's as the old extent
    // is positive or negative (MPI_Type_create_resized allows either).
    const std::ptrdiff_t span = static_cast<std::ptrdiff_t>(n - 1) * old.extent();
    const std::ptrdiff_t lo = displacements[i] + old.lb_ + std::min<std::ptrdiff_t>(span, 0);
    const std::ptrdiff_t hi = displacements[i] + old.ub_ + std::max<std::ptrdiff_t>(span, 0);
    t.lb_ = bounded ? std::min(t.lb_, lo) : lo;
    t.ub_ = bounded ? std::max(t.ub_, hi) : hi;
    bounded = true;
    t.size_ += n * old.size_;
    t.basic_per_element_ += n * old.basic_per_element_;
  }
  if (pad_to_alignment && t.alignment_ > 1) {
    const auto a = static_cast<std::ptrdiff_t>(t.alignment_);
    const std::ptrdiff_t extent = t.ub_ - t.lb_;
    t.ub_ = t.lb_ + (extent + a - 1) / a * a;
  }
  return t;
}

TypeLayout TypeLayout::resized(std::ptrdiff_t lower_bound, std::ptrdiff_t extent) const {
  TypeLayout t = *this;
  t.lb_ = lower_bound;
  t.ub_ = lower_bound + extent;
  t.committed_ = false;
  return t;
}

bool TypeLayout::contiguous() const {
  if (runs_.empty()) return true;
  return runs_.size() == 1 && runs_[0].offset == lb_ &&
         static_cast<std::ptrdiff_t>(runs_[0].length) == extent();
}

void TypeLayout::pack(const void* buffer, std::size_t count, std::uint8_t* out) const {
  const auto* base = static_cast<const std::uint8_t*>(buffer);
  for (std::size_t e = 0; e < count; ++e) {
    const std::uint8_t* element = base + static_cast<std::ptrdiff_t>(e) * extent();
    for (const Run& r : runs_) {
      std::memcpy(out, element + r.offset, r.length);
      out += r.length;
    }
  }
}

void TypeLayout::unpack(const std::uint8_t* in, std::size_t bytes, std::size_t count,
                        void* buffer) const {
  auto* base = static_cast<std::uint8_t*>(buffer);
  for (std::size_t e = 0; e < count && bytes > 0; ++e) {
    std::uint8_t* element = base + static_cast<std::ptrdiff_t>(e) * extent();
    for (const Run& r : runs_) {
      const std::size_t n = std::min(r.length, bytes);
      std::memcpy(element + r.offset, in, n);
      in += n;
      bytes -= n;
      if (bytes == 0) return;
    }
  }
}

std::vector<TypeLayout::Piece> TypeLayout::pieces(std::size_t count) const {
  std::vector<Piece> out;
  for (std::size_t e = 0; e < count; ++e) {
    const std::ptrdiff_t element = static_cast<std::ptrdiff_t>(e) * extent();
    for (const Run& r : runs_) {
      const std::ptrdiff_t at = element + r.offset;
      if (!out.empty() &&
          out.back().offset + static_cast<std::ptrdiff_t>(out.back().length) == at) {
        out.back().length += r.length;
      } else {
        out.push_back({at, r.length});
      }
    }
  }
  return out;
}

std::size_t TypeLayout::basic_elements(std::size_t bytes) const {
  if (size_ == 0) return 0;
  std::size_t elements = bytes / size_ * basic_per_element_;
  std::size_t rest = bytes % size_;
  for (const Run& r : runs_) {
    if (rest == 0) break;
    const std::size_t n = std::min(r.length, rest);
    elements += r.basic_size == 0 ? 0 : n / r.basic_size;
    rest -= n;
  }
  return elements;
}

}  // namespace tagwire::mpi
