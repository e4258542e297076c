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

using Run = TypeLayout::Run;

// Appends `p` to `runs`, folding it into the last run where the two are
// one: adjacent in memory (one longer run), or the next piece of the
// last run's stride (one more repeat). Either way packed order is kept.
void append(std::vector<Run>& runs, const Run& p) {
  if (!runs.empty()) {
    Run& last = runs.back();
    const bool alike = last.basic_size == p.basic_size &&
                       external32::converts_alike(last.basic_type, p.basic_type);
    if (alike && last.repeat == 1 && p.repeat == 1 &&
        last.offset + static_cast<std::ptrdiff_t>(last.length) == p.offset) {
      last.length += p.length;
      return;
    }
    if (alike && p.repeat == 1 && last.length == p.length) {
      if (last.repeat == 1 && p.offset != last.offset) {
        last.stride = p.offset - last.offset;
        last.repeat = 2;
        return;
      }
      if (last.repeat > 1 && p.offset == last.at(last.repeat)) {
        ++last.repeat;
        return;
      }
    }
  }
  runs.push_back(p);
}

// The bounds of `n` copies, `step` bytes apart from `at`, of something
// bounded by [lb, ub): the lowest lower bound and the highest upper bound
// among them, the last copy's or the first's as the step is positive or
// negative (MPI_Type_create_resized allows either).
TypeLayout::Span copies_bounds(std::ptrdiff_t lb, std::ptrdiff_t ub, std::size_t n,
                               std::ptrdiff_t step, std::ptrdiff_t at) {
  const std::ptrdiff_t span = static_cast<std::ptrdiff_t>(n - 1) * step;
  return {at + lb + std::min<std::ptrdiff_t>(span, 0), at + ub + std::max<std::ptrdiff_t>(span, 0)};
}

// `n` copies of `old`'s one unrepeated run, an extent apart, from `base`:
// one run, longer or repeated.
Run copies_of(const Run& r, std::size_t n, std::ptrdiff_t extent, std::ptrdiff_t base) {
  Run placed = r;
  placed.offset = base + r.offset;
  if (n > 1 && extent == static_cast<std::ptrdiff_t>(r.length)) {
    placed.length = n * r.length;
  } else if (n > 1) {
    placed.repeat = n;
    placed.stride = extent;
  }
  return placed;
}

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
    // Copies of a one-run type are one run (a block of 8192 MPI_BYTEs is
    // one piece, not 8192; 8192 strided ints one repeated run).
    const auto& old_runs = types[i]->runs_;
    runs += old_runs.size() == 1 && old_runs[0].repeat == 1
                ? 1
                : static_cast<std::size_t>(blocks[i]) * old_runs.size();
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
    if (old.runs_.size() == 1 && old.runs_[0].repeat == 1) {
      // One run: the n copies are one run too, without a loop over them.
      append(t.runs_, copies_of(old.runs_[0], n, old.extent(), displacements[i]));
    } else {
      for (std::size_t k = 0; k < n; ++k) {
        const std::ptrdiff_t base =
            displacements[i] + static_cast<std::ptrdiff_t>(k) * old.extent();
        for (Run r : old.runs_) {
          r.offset += base;
          append(t.runs_, r);
        }
      }
    }
    const Span copies = copies_bounds(old.lb_, old.ub_, n, old.extent(), displacements[i]);
    t.lb_ = bounded ? std::min(t.lb_, copies.lo) : copies.lo;
    t.ub_ = bounded ? std::max(t.ub_, copies.hi) : copies.hi;
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

std::optional<TypeLayout> TypeLayout::strided(std::size_t count, std::size_t blocklength,
                                              std::ptrdiff_t stride, const TypeLayout& old) {
  if (count == 0 || blocklength == 0 || old.runs_.size() != 1 || old.runs_[0].repeat != 1) {
    return std::nullopt;  // place() takes these (and bounds them as it does)
  }
  // One block: blocklength copies of the run; then the blocks.
  const Run block = copies_of(old.runs_[0], blocklength, old.extent(), 0);
  if (block.repeat != 1) return std::nullopt;  // a block of several pieces
  TypeLayout t;
  t.committed_ = false;
  t.runs_.push_back(copies_of(block, count, stride, 0));
  // The bounds place() would find: one block's, then the blocks'.
  const Span one = copies_bounds(old.lb_, old.ub_, blocklength, old.extent(), 0);
  const Span all = copies_bounds(one.lo, one.hi, count, stride, 0);
  t.lb_ = all.lo;
  t.ub_ = all.hi;
  t.size_ = count * blocklength * old.size_;
  t.basic_per_element_ = count * blocklength * old.basic_per_element_;
  t.alignment_ = old.alignment_;
  t.element_type_ = old.element_type_;
  return t;
}

TypeLayout::Span TypeLayout::data_span() const {
  Span s;
  bool any = false;
  for (const Run& r : runs_) {
    const std::ptrdiff_t last = r.at(r.repeat - 1);
    const std::ptrdiff_t lo = std::min(r.offset, last);
    const std::ptrdiff_t hi = std::max(r.offset, last) + static_cast<std::ptrdiff_t>(r.length);
    s.lo = any ? std::min(s.lo, lo) : lo;
    s.hi = any ? std::max(s.hi, hi) : hi;
    any = true;
  }
  return s;
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
  if (runs_.size() == 1) {
    return runs_[0].repeat == 1 && runs_[0].offset == lb_ &&
           static_cast<std::ptrdiff_t>(runs_[0].length) == extent();
  }
  // Runs of types that convert differently stay apart (a long beside a
  // double), yet back to back they are one block all the same: sent in
  // place, not packed.
  std::ptrdiff_t at = lb_;
  for (const Run& r : runs_) {
    if (r.repeat != 1 || r.offset != at) return false;
    at += static_cast<std::ptrdiff_t>(r.length);
  }
  return at - lb_ == extent();
}

void TypeLayout::pack(const void* buffer, std::size_t count, std::uint8_t* out) const {
  const auto* base = static_cast<const std::uint8_t*>(buffer);
  for (std::size_t e = 0; e < count; ++e) {
    const std::uint8_t* element = base + static_cast<std::ptrdiff_t>(e) * extent();
    for (const Run& r : runs_) {
      const std::uint8_t* from = element + r.offset;
      for (std::uint64_t k = 0; k < r.repeat; ++k, from += r.stride) {
        std::memcpy(out, from, r.length);
        out += r.length;
      }
    }
  }
}

void TypeLayout::unpack(const std::uint8_t* in, std::size_t bytes, std::size_t count,
                        void* buffer) const {
  auto* base = static_cast<std::uint8_t*>(buffer);
  for (std::size_t e = 0; e < count && bytes > 0; ++e) {
    std::uint8_t* element = base + static_cast<std::ptrdiff_t>(e) * extent();
    for (const Run& r : runs_) {
      std::uint8_t* to = element + r.offset;
      for (std::uint64_t k = 0; k < r.repeat; ++k, to += r.stride) {
        const std::size_t n = std::min(r.length, bytes);
        std::memcpy(to, in, n);
        in += n;
        bytes -= n;
        if (bytes == 0) return;
      }
    }
  }
}

std::vector<TypeLayout::Piece> TypeLayout::pieces(std::size_t count) const {
  std::vector<Piece> out;
  for (std::size_t e = 0; e < count; ++e) {
    const std::ptrdiff_t element = static_cast<std::ptrdiff_t>(e) * extent();
    for (const Run& r : runs_) {
      for (std::uint64_t k = 0; k < r.repeat; ++k) {
        const std::ptrdiff_t at = element + r.at(k);
        if (!out.empty() &&
            out.back().offset + static_cast<std::ptrdiff_t>(out.back().length) == at) {
          out.back().length += r.length;
        } else {
          out.push_back({at, r.length});
        }
      }
    }
  }
  return out;
}

TypeLayout::BasicCount TypeLayout::count_basic(std::size_t bytes) const {
  BasicCount c;
  if (size_ == 0) return c;
  c.whole = bytes / size_ * basic_per_element_;
  std::size_t rest = bytes % size_;
  for (const Run& r : runs_) {
    if (rest == 0) break;
    // Every piece is whole basic elements: only the last one reached may
    // be cut short.
    const std::size_t n = std::min<std::size_t>(r.length * r.repeat, rest);
    if (r.basic_size != 0) {
      c.whole += n / r.basic_size;
      c.cut = n % r.basic_size;
    }
    rest -= n;
  }
  return c;
}

std::size_t TypeLayout::basic_bytes(std::size_t elements) const {
  if (basic_per_element_ == 0) return 0;
  std::size_t bytes = elements / basic_per_element_ * size_;
  std::size_t rest = elements % basic_per_element_;
  for (const Run& r : runs_) {
    if (rest == 0) break;
    if (r.basic_size == 0) continue;
    const std::size_t here = std::min<std::size_t>(r.length * r.repeat / r.basic_size, rest);
    bytes += here * r.basic_size;
    rest -= here;
  }
  return bytes;
}

}  // namespace tagwire::mpi
