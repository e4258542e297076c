#include "mpi_api/external32.h"

#include <cfloat>
#include <cstring>
#include <string>

#include "mpi.h"

namespace tagwire::mpi::external32 {

namespace {

// How a native value becomes its external32 bytes.
enum class Conversion {
  kNone,      // no predefined value type
  kReverse,   // the same size, bytes reversed (integers, float, double, bool)
  kSigned,    // a signed integer narrowed (MPI_LONG: 8 bytes here, 4 there)
  kUnsigned,  // an unsigned one narrowed (MPI_UNSIGNED_LONG, MPI_WCHAR)
  kQuad,      // long double to IEEE binary128
  kComplex,   // two reals, each reversed
  kComplexQuad,
};

struct Rule {
  Conversion conversion;
  std::size_t native;    // bytes of one element here
  std::size_t external;  // and in external32
};

// The x86 80-bit format in 16 bytes, or binary128 itself (aarch64,
// POWER's IEEE mode): the two whose conversion is written below.
static_assert(LDBL_MANT_DIG == 64 || LDBL_MANT_DIG == 113,
              "external32: long double is neither x87 extended nor IEEE binary128");
static_assert(sizeof(long double) == 16, "external32: long double must take 16 bytes");

Rule rule_of(int type) {
  switch (type) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_PACKED:
    case MPI_C_BOOL:
    case MPI_CXX_BOOL:
    case MPI_INT8_T:
    case MPI_UINT8_T:
      return {Conversion::kReverse, 1, 1};
    case MPI_SHORT:
    case MPI_UNSIGNED_SHORT:
    case MPI_INT16_T:
    case MPI_UINT16_T:
      return {Conversion::kReverse, 2, 2};
    case MPI_INT:
    case MPI_UNSIGNED:
    case MPI_FLOAT:
    case MPI_INT32_T:
    case MPI_UINT32_T:
      return {Conversion::kReverse, 4, 4};
    case MPI_LONG_LONG:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_DOUBLE:
    case MPI_INT64_T:
    case MPI_UINT64_T:
    case MPI_AINT:
    case MPI_COUNT:
    case MPI_OFFSET:
      return {Conversion::kReverse, 8, 8};
    case MPI_LONG:
      return {sizeof(long) == 4 ? Conversion::kReverse : Conversion::kSigned, sizeof(long), 4};
    case MPI_UNSIGNED_LONG:
      return {sizeof(long) == 4 ? Conversion::kReverse : Conversion::kUnsigned, sizeof(long), 4};
    case MPI_WCHAR:
      return {sizeof(wchar_t) == 2 ? Conversion::kReverse : Conversion::kUnsigned, sizeof(wchar_t),
              2};
    case MPI_LONG_DOUBLE:
      return {Conversion::kQuad, 16, 16};
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX:
      return {Conversion::kComplex, 8, 8};
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX:
      return {Conversion::kComplex, 16, 16};
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
      return {Conversion::kComplexQuad, 32, 32};
    default:
      return {Conversion::kNone, 0, 0};
  }
}

void reverse(const std::uint8_t* in, std::size_t n, std::uint8_t* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = in[n - 1 - i];
}

std::uint64_t load_le(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = n; i-- > 0;) v = v << 8 | p[i];
  return v;
}
void store_le(std::uint64_t v, std::size_t n, std::uint8_t* p) {
  for (std::size_t i = 0; i < n; ++i, v >>= 8) p[i] = static_cast<std::uint8_t>(v);
}
std::uint64_t load_be(const std::uint8_t* p, std::size_t n) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < n; ++i) v = v << 8 | p[i];
  return v;
}
void store_be(std::uint64_t v, std::size_t n, std::uint8_t* p) {
  for (std::size_t i = n; i-- > 0; v >>= 8) p[i] = static_cast<std::uint8_t>(v);
}

// A native long double (little-endian here) to binary128, big-endian. The
// x87 format has binary128's sign, exponent and bias; its 63 fraction bits
// are the first 63 of binary128's 112, and its explicit integer bit goes.
void quad_out(const std::uint8_t* native, std::uint8_t* out) {
  if constexpr (LDBL_MANT_DIG == 113) {
    reverse(native, 16, out);
  } else {
    const std::uint64_t mantissa = load_le(native, 8);
    const std::uint64_t sign_exponent = load_le(native + 8, 2);
    const std::uint64_t fraction = mantissa & ~(std::uint64_t{1} << 63);
    store_be(sign_exponent << 48 | fraction >> 15, 8, out);
    store_be((fraction & 0x7fff) << 49, 8, out + 8);
  }
}

// binary128 to x87: its fraction's last 49 bits have no place and are
// dropped (rounded toward zero); the integer bit is 1 but for zeros and
// subnormals (exponent 0).
void quad_in(const std::uint8_t* in, std::uint8_t* native) {
  if constexpr (LDBL_MANT_DIG == 113) {
    reverse(in, 16, native);
  } else {
    const std::uint64_t high = load_be(in, 8);
    const std::uint64_t low = load_be(in + 8, 8);
    const std::uint64_t sign_exponent = high >> 48;
    std::uint64_t mantissa = (high & ((std::uint64_t{1} << 48) - 1)) << 15 | low >> 49;
    if ((sign_exponent & 0x7fff) != 0) mantissa |= std::uint64_t{1} << 63;
    std::memset(native, 0, 16);
    store_le(mantissa, 8, native);
    store_le(sign_exponent, 2, native + 8);
  }
}

// `n` elements of one predefined type, native to external32.
Status encode(const Rule& r, const std::uint8_t* in, std::size_t n, std::uint8_t* out) {
  for (std::size_t i = 0; i < n; ++i, in += r.native, out += r.external) {
    switch (r.conversion) {
      case Conversion::kReverse:
        reverse(in, r.native, out);
        break;
      case Conversion::kSigned: {
        const auto v = static_cast<std::int64_t>(load_le(in, r.native));
        const std::int64_t limit = std::int64_t{1} << (8 * r.external - 1);
        if (v < -limit || v >= limit) {
          return Status(ErrorCode::kConversion, "the value " + std::to_string(v) +
                                                    " does not fit external32's " +
                                                    std::to_string(r.external) + "-byte integer");
        }
        store_be(static_cast<std::uint64_t>(v), r.external, out);
        break;
      }
      case Conversion::kUnsigned: {
        const std::uint64_t v = load_le(in, r.native);
        if (v >> (8 * r.external) != 0) {
          return Status(ErrorCode::kConversion,
                        "the value " + std::to_string(v) + " does not fit external32's " +
                            std::to_string(r.external) + "-byte unsigned integer");
        }
        store_be(v, r.external, out);
        break;
      }
      case Conversion::kQuad:
        quad_out(in, out);
        break;
      case Conversion::kComplex:
        reverse(in, r.native / 2, out);
        reverse(in + r.native / 2, r.native / 2, out + r.external / 2);
        break;
      case Conversion::kComplexQuad:
        quad_out(in, out);
        quad_out(in + 16, out + 16);
        break;
      case Conversion::kNone:
        return Status(ErrorCode::kInternal, "external32: a run of no predefined type");
    }
  }
  return {};
}

void decode(const Rule& r, const std::uint8_t* in, std::size_t n, std::uint8_t* out) {
  for (std::size_t i = 0; i < n; ++i, in += r.external, out += r.native) {
    switch (r.conversion) {
      case Conversion::kReverse:
        reverse(in, r.native, out);
        break;
      case Conversion::kSigned: {
        // Sign-extended from the external width.
        const unsigned shift = static_cast<unsigned>(64 - 8 * r.external);
        const auto v = static_cast<std::int64_t>(load_be(in, r.external) << shift) >> shift;
        store_le(static_cast<std::uint64_t>(v), r.native, out);
        break;
      }
      case Conversion::kUnsigned:
        store_le(load_be(in, r.external), r.native, out);
        break;
      case Conversion::kQuad:
        quad_in(in, out);
        break;
      case Conversion::kComplex:
        reverse(in, r.native / 2, out);
        reverse(in + r.external / 2, r.native / 2, out + r.native / 2);
        break;
      case Conversion::kComplexQuad:
        quad_in(in, out);
        quad_in(in + 16, out + 16);
        break;
      case Conversion::kNone:
        break;  // pack refused it: nothing of it was written
    }
  }
}

}  // namespace

std::size_t size_of(int type) {
  return rule_of(type).external;
}

bool converts_alike(int a, int b) {
  if (a == b) return true;
  const Rule ra = rule_of(a), rb = rule_of(b);
  return ra.conversion == rb.conversion && ra.native == rb.native && ra.external == rb.external;
}

std::size_t packed_size(const TypeLayout& layout, std::size_t count) {
  std::size_t per_element = 0;
  for (const TypeLayout::Run& run : layout.runs()) {
    per_element += run.repeat * (run.length / run.basic_size) * size_of(run.basic_type);
  }
  return per_element * count;
}

Status pack(const TypeLayout& layout, const void* buffer, std::size_t count, std::uint8_t* out) {
  const auto* base = static_cast<const std::uint8_t*>(buffer);
  for (std::size_t e = 0; e < count; ++e) {
    const std::uint8_t* element = base + static_cast<std::ptrdiff_t>(e) * layout.extent();
    for (const TypeLayout::Run& run : layout.runs()) {
      const Rule r = rule_of(run.basic_type);
      const std::size_t n = run.length / run.basic_size;
      for (std::uint64_t k = 0; k < run.repeat; ++k) {
        if (Status s = encode(r, element + run.at(k), n, out); !s) return s;
        out += n * r.external;
      }
    }
  }
  return {};
}

void unpack(const TypeLayout& layout, const std::uint8_t* in, std::size_t count, void* buffer) {
  auto* base = static_cast<std::uint8_t*>(buffer);
  for (std::size_t e = 0; e < count; ++e) {
    std::uint8_t* element = base + static_cast<std::ptrdiff_t>(e) * layout.extent();
    for (const TypeLayout::Run& run : layout.runs()) {
      const Rule r = rule_of(run.basic_type);
      const std::size_t n = run.length / run.basic_size;
      for (std::uint64_t k = 0; k < run.repeat; ++k) {
        decode(r, in, n, element + run.at(k));
        in += n * r.external;
      }
    }
  }
}

}  // namespace tagwire::mpi::external32
