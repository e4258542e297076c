/* MPI_Pack_external / MPI_Unpack_external / MPI_Pack_external_size: the
 * external32 representation of MPI-3.1 §13.5.2. The sizes are Table 13.2's
 * and the bytes are what that section defines (big-endian, IEEE 754), so
 * every expected byte below comes from the standard, not from Tagwire.
 * And Fortran's named types as C uses them, and MPI_Type_create_f90_*. Runs on one rank (the one
 * reduction across ranks works at any number). */
#include <complex.h>
#include <limits.h>
#include <mpi.h>
#include <stdbool.h>
#include <string.h>
#include <wchar.h>

#include "check.h"

static MPI_Aint external_size(MPI_Datatype t, int count) {
  MPI_Aint n = -1;
  CHECK(MPI_Pack_external_size("external32", count, t, &n) == MPI_SUCCESS);
  return n;
}

/* Packs `count` elements of `t` and compares with `want` (`bytes` long). */
static void packs_to(MPI_Datatype t, const void* data, int count, const unsigned char* want,
                     int bytes) {
  unsigned char out[64];
  MPI_Aint position = 0;
  memset(out, 0xee, sizeof out);
  CHECK(MPI_Pack_external("external32", data, count, t, out, sizeof out, &position) == MPI_SUCCESS);
  CHECK(position == bytes && memcmp(out, want, (size_t)bytes) == 0);
  CHECK(out[bytes] == 0xee); /* nothing past the packed bytes */
}

static void table_sizes(void) {
  static const struct {
    MPI_Datatype type;
    MPI_Aint size;
  } table[] = {
      {MPI_PACKED, 1},
      {MPI_BYTE, 1},
      {MPI_CHAR, 1},
      {MPI_UNSIGNED_CHAR, 1},
      {MPI_SIGNED_CHAR, 1},
      {MPI_WCHAR, 2},
      {MPI_SHORT, 2},
      {MPI_UNSIGNED_SHORT, 2},
      {MPI_INT, 4},
      {MPI_UNSIGNED, 4},
      {MPI_LONG, 4},
      {MPI_UNSIGNED_LONG, 4},
      {MPI_LONG_LONG_INT, 8},
      {MPI_UNSIGNED_LONG_LONG, 8},
      {MPI_FLOAT, 4},
      {MPI_DOUBLE, 8},
      {MPI_LONG_DOUBLE, 16},
      {MPI_C_BOOL, 1},
      {MPI_INT8_T, 1},
      {MPI_INT16_T, 2},
      {MPI_INT32_T, 4},
      {MPI_INT64_T, 8},
      {MPI_UINT8_T, 1},
      {MPI_UINT16_T, 2},
      {MPI_UINT32_T, 4},
      {MPI_UINT64_T, 8},
      {MPI_AINT, 8},
      {MPI_COUNT, 8},
      {MPI_OFFSET, 8},
      {MPI_C_COMPLEX, 8},
      {MPI_C_FLOAT_COMPLEX, 8},
      {MPI_C_DOUBLE_COMPLEX, 16},
      {MPI_C_LONG_DOUBLE_COMPLEX, 32},
      {MPI_CXX_BOOL, 1},
      {MPI_CXX_FLOAT_COMPLEX, 8},
      {MPI_CXX_DOUBLE_COMPLEX, 16},
      {MPI_CXX_LONG_DOUBLE_COMPLEX, 32},
      /* A pair is its two parts: the value and an int, no padding. */
      {MPI_DOUBLE_INT, 12},
      {MPI_LONG_INT, 8},
      {MPI_2INT, 8},
      {MPI_LONG_DOUBLE_INT, 20},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    MPI_Aint got = external_size(table[i].type, 3);
    if (got != 3 * table[i].size) {
      char name[MPI_MAX_OBJECT_NAME];
      int len;
      MPI_Type_get_name(table[i].type, name, &len);
      fprintf(stderr, "%s: %ld bytes for 3, want %ld\n", name, (long)got,
              (long)(3 * table[i].size));
    }
    CHECK(got == 3 * table[i].size);
  }
}

static void standard_bytes(void) {
  const int ints[2] = {1, -2};
  const unsigned char int_bytes[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
  packs_to(MPI_INT, ints, 2, int_bytes, 8);
  const long longs[2] = {1, -2}; /* 4 bytes each there, whatever long is here */
  packs_to(MPI_LONG, longs, 2, int_bytes, 8);
  const long long wide[2] = {1, -2};
  const unsigned char wide_bytes[] = {0,    0,    0,    0,    0,    0,    0,    1,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe};
  packs_to(MPI_LONG_LONG, wide, 2, wide_bytes, 16);
  const float floats[2] = {1.0f, 2.0f};
  const unsigned char float_bytes[] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
  packs_to(MPI_FLOAT, floats, 2, float_bytes, 8);
  const double d = -2.5; /* sign 1, exponent 0x400, fraction .01 */
  const unsigned char double_bytes[] = {0xc0, 0x04, 0, 0, 0, 0, 0, 0};
  packs_to(MPI_DOUBLE, &d, 1, double_bytes, 8);
  /* binary128: 1.0 is 0x3fff then zeros; 1.5 sets the fraction's first bit;
   * -0.75 is 1.5 * 2^-1 with the sign. */
  const long double quads[3] = {1.0L, 1.5L, -0.75L};
  unsigned char quad_bytes[48] = {0x3f, 0xff};
  quad_bytes[16] = 0x3f, quad_bytes[17] = 0xff, quad_bytes[18] = 0x80;
  quad_bytes[32] = 0xbf, quad_bytes[33] = 0xfe, quad_bytes[34] = 0x80;
  packs_to(MPI_LONG_DOUBLE, quads, 3, quad_bytes, 48);
  const float complex z = 1.0f + 2.0f * I; /* real part first */
  const unsigned char complex_bytes[] = {0x3f, 0x80, 0, 0, 0x40, 0, 0, 0};
  packs_to(MPI_C_FLOAT_COMPLEX, &z, 1, complex_bytes, 8);
  const bool flags[2] = {true, false};
  const unsigned char bool_bytes[] = {1, 0};
  packs_to(MPI_C_BOOL, flags, 2, bool_bytes, 2);
  const wchar_t wide_chars[2] = {L'A', 0x263a};
  const unsigned char wchar_bytes[] = {0, 0x41, 0x26, 0x3a};
  packs_to(MPI_WCHAR, wide_chars, 2, wchar_bytes, 4);
  /* MPI_DOUBLE_INT: the double, then the int, no padding between. */
  struct {
    double value;
    int index;
  } pair = {-2.5, 1};
  const unsigned char pair_bytes[] = {0xc0, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  packs_to(MPI_DOUBLE_INT, &pair, 1, pair_bytes, 12);
}

/* A struct with gaps, every conversion in it, packed and unpacked back. */
struct record {
  char c;
  long l;
  unsigned long ul;
  double d;
  long double q;
  wchar_t w;
  short s;
  double complex z;
};

static void round_trip(void) {
  int blocks[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  MPI_Aint displacements[8] = {offsetof(struct record, c),  offsetof(struct record, l),
                               offsetof(struct record, ul), offsetof(struct record, d),
                               offsetof(struct record, q),  offsetof(struct record, w),
                               offsetof(struct record, s),  offsetof(struct record, z)};
  MPI_Datatype types[8] = {MPI_CHAR,        MPI_LONG,  MPI_UNSIGNED_LONG, MPI_DOUBLE,
                           MPI_LONG_DOUBLE, MPI_WCHAR, MPI_SHORT,         MPI_C_DOUBLE_COMPLEX};
  MPI_Datatype record_type, two;
  MPI_Type_create_struct(8, blocks, displacements, types, &record_type);
  MPI_Type_vector(2, 1, 2, record_type, &two); /* every other record */
  MPI_Type_commit(&two);
  CHECK(external_size(two, 1) == 2 * (1 + 4 + 4 + 8 + 16 + 2 + 2 + 16));
  struct record in[4], out[4];
  memset(in, 0, sizeof in);
  memset(out, 0, sizeof out);
  for (int i = 0; i < 4; ++i) {
    in[i] = (struct record){(char)('a' + i),
                            -123456 - i,
                            4000000000UL - (unsigned long)i,
                            -1.0 / 3 + i,
                            1.0L / 3 + i,
                            (wchar_t)(0x263a + i),
                            (short)(-7 - i),
                            (1.0 + i) + (2.0 - i) * I};
  }
  unsigned char buffer[256];
  MPI_Aint position = 0;
  CHECK(MPI_Pack_external("external32", in, 1, two, buffer, sizeof buffer, &position) ==
        MPI_SUCCESS);
  CHECK(position == external_size(two, 1));
  MPI_Aint read = 0;
  CHECK(MPI_Unpack_external("external32", buffer, position, &read, out, 1, two) == MPI_SUCCESS);
  CHECK(read == position);
  for (int i = 0; i < 4; i += 2) {
    CHECK(out[i].c == in[i].c && out[i].l == in[i].l && out[i].ul == in[i].ul);
    CHECK(out[i].d == in[i].d && out[i].w == in[i].w && out[i].s == in[i].s);
    CHECK(out[i].z == in[i].z);
    /* binary128 holds every bit of a long double (x87's 64 or binary128's 113). */
    CHECK(out[i].q == in[i].q);
  }
  CHECK(out[1].c == 0 && out[3].l == 0); /* the gaps stay untouched */
  MPI_Type_free(&two);
  MPI_Type_free(&record_type);
}

static void refusals(void) {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  unsigned char buffer[16];
  MPI_Aint position = 0, n = 0;
  int i = 5;
  CHECK(tw_class(MPI_Pack_external("native", &i, 1, MPI_INT, buffer, 16, &position)) ==
        MPI_ERR_ARG);
  CHECK(tw_class(MPI_Pack_external_size("external64", 1, MPI_INT, &n)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Pack_external("external32", &i, -1, MPI_INT, buffer, 16, &position)) ==
        MPI_ERR_COUNT);
  position = 14;
  CHECK(tw_class(MPI_Pack_external("external32", &i, 1, MPI_INT, buffer, 16, &position)) ==
        MPI_ERR_TRUNCATE);
  CHECK(position == 14);
  position = 0;
  CHECK(tw_class(MPI_Unpack_external("external32", buffer, 6, &position, &i, 2, MPI_INT)) ==
        MPI_ERR_TRUNCATE);
  CHECK(position == 0 && i == 5);
  if (sizeof(long) > 4) {
    /* A long that external32's 4 bytes cannot hold is refused, not cut. */
    long values[2] = {7, (long)INT_MAX + 1};
    CHECK(tw_class(MPI_Pack_external("external32", values, 2, MPI_LONG, buffer, 16, &position)) ==
          MPI_ERR_CONVERSION);
    CHECK(position == 0);
    long lowest = INT_MIN;
    CHECK(MPI_Pack_external("external32", &lowest, 1, MPI_LONG, buffer, 16, &position) ==
          MPI_SUCCESS);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Fortran's named types, as C uses them: their names, gfortran's sizes,
 * the C type's arithmetic and external32 bytes. */
static void fortran_types(void) {
  static const struct {
    MPI_Datatype type;
    const char* name;
    int size;
    MPI_Datatype as; /* the C type with its layout and arithmetic */
  } table[] = {
      {MPI_CHARACTER, "MPI_CHARACTER", 1, MPI_CHAR},
      {MPI_LOGICAL, "MPI_LOGICAL", 4, MPI_INT},
      {MPI_INTEGER, "MPI_INTEGER", 4, MPI_INT},
      {MPI_REAL, "MPI_REAL", 4, MPI_FLOAT},
      {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, MPI_DOUBLE},
      {MPI_COMPLEX, "MPI_COMPLEX", 8, MPI_C_FLOAT_COMPLEX},
      {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, MPI_C_DOUBLE_COMPLEX},
      {MPI_INTEGER1, "MPI_INTEGER1", 1, MPI_INT8_T},
      {MPI_INTEGER2, "MPI_INTEGER2", 2, MPI_INT16_T},
      {MPI_INTEGER4, "MPI_INTEGER4", 4, MPI_INT32_T},
      {MPI_INTEGER8, "MPI_INTEGER8", 8, MPI_INT64_T},
      {MPI_REAL4, "MPI_REAL4", 4, MPI_FLOAT},
      {MPI_REAL8, "MPI_REAL8", 8, MPI_DOUBLE},
      {MPI_COMPLEX8, "MPI_COMPLEX8", 8, MPI_C_FLOAT_COMPLEX},
      {MPI_COMPLEX16, "MPI_COMPLEX16", 16, MPI_C_DOUBLE_COMPLEX},
  };
  for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i) {
    char name[MPI_MAX_OBJECT_NAME];
    int len = 0, type_size = 0, combiner = -1, ni, na, nt;
    MPI_Aint lb, extent;
    CHECK(MPI_Type_get_name(table[i].type, name, &len) == MPI_SUCCESS &&
          strcmp(name, table[i].name) == 0);
    CHECK(MPI_Type_size(table[i].type, &type_size) == MPI_SUCCESS && type_size == table[i].size);
    CHECK(MPI_Type_get_extent(table[i].type, &lb, &extent) == MPI_SUCCESS && lb == 0 &&
          extent == table[i].size);
    CHECK(MPI_Type_get_envelope(table[i].type, &ni, &na, &nt, &combiner) == MPI_SUCCESS &&
          combiner == MPI_COMBINER_NAMED);
    CHECK(external_size(table[i].type, 2) == external_size(table[i].as, 2));
  }
  /* Reductions compute as the C type does. */
  int integers[3] = {1, 2, 3}, sums[3] = {10, 20, 30};
  CHECK(MPI_Reduce_local(integers, sums, 3, MPI_INTEGER, MPI_SUM) == MPI_SUCCESS);
  CHECK(sums[0] == 11 && sums[1] == 22 && sums[2] == 33);
  int truths[2] = {1, 0}, both[2] = {5, 1};
  CHECK(MPI_Reduce_local(truths, both, 2, MPI_LOGICAL, MPI_LAND) == MPI_SUCCESS);
  CHECK(both[0] != 0 && both[1] == 0);
  float reals[2] = {1.5f, -2.0f}, highest[2] = {1.0f, 1.0f};
  CHECK(MPI_Reduce_local(reals, highest, 2, MPI_REAL, MPI_MAX) == MPI_SUCCESS);
  CHECK(highest[0] == 1.5f && highest[1] == 1.0f);
  double complex z = 1.0 + 2.0 * I, product = 3.0 - 1.0 * I;
  CHECK(MPI_Reduce_local(&z, &product, 1, MPI_DOUBLE_COMPLEX, MPI_PROD) == MPI_SUCCESS);
  CHECK(creal(product) == 5.0 && cimag(product) == 5.0);
  /* Across ranks, through a derived type of one (MPI_INTEGER8 pairs). */
  long long mine[4] = {rank, 1, rank, 1}, all[4];
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_INTEGER8, &two);
  MPI_Type_commit(&two);
  CHECK(MPI_Allreduce(mine, all, 2, two, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(all[0] == (long long)size * (size - 1) / 2 && all[1] == size && all[3] == size);
  MPI_Type_free(&two);
  /* external32: MPI_INTEGER's bytes are MPI_INT's. */
  const int values[2] = {1, -2};
  const unsigned char int_bytes[] = {0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe};
  packs_to(MPI_INTEGER, values, 2, int_bytes, 8);
  /* Predefined: not to be freed. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype named = MPI_REAL;
  CHECK(tw_class(MPI_Type_free(&named)) == MPI_ERR_TYPE && named == MPI_REAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_Type_create_f90_*: the kind a precision and range select, the same
 * handle for the same question, never freed. */
static void f90_kinds(void) {
  MPI_Datatype t, again;
  int ni, na, nt, combiner, ints[2] = {0, 0}, type_size = 0;
  CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &t) == MPI_SUCCESS);
  CHECK(MPI_Type_size(t, &type_size) == MPI_SUCCESS && type_size == 4);
  CHECK(MPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) == MPI_SUCCESS &&
        combiner == MPI_COMBINER_F90_REAL && ni == 2 && na == 0 && nt == 0);
  CHECK(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL) == MPI_SUCCESS && ints[0] == 6 &&
        ints[1] == MPI_UNDEFINED);
  CHECK(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &again) == MPI_SUCCESS && again == t);
  CHECK(MPI_Type_create_f90_real(7, 30, &t) == MPI_SUCCESS);
  CHECK(MPI_Type_size(t, &type_size) == MPI_SUCCESS && type_size == 8); /* double */
  CHECK(MPI_Type_create_f90_real(MPI_UNDEFINED, 400, &t) == MPI_SUCCESS);
  CHECK(MPI_Type_size(t, &type_size) == MPI_SUCCESS && type_size == (int)sizeof(long double));
  CHECK(MPI_Type_create_f90_complex(15, 300, &t) == MPI_SUCCESS);
  CHECK(MPI_Type_size(t, &type_size) == MPI_SUCCESS && type_size == 16);
  CHECK(MPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) == MPI_SUCCESS &&
        combiner == MPI_COMBINER_F90_COMPLEX);
  double complex a = 1.0 + 1.0 * I, b = 2.0;
  CHECK(MPI_Reduce_local(&a, &b, 1, t, MPI_SUM) == MPI_SUCCESS && b == 3.0 + 1.0 * I);
  CHECK(MPI_Type_create_f90_integer(5, &t) == MPI_SUCCESS);
  CHECK(MPI_Type_size(t, &type_size) == MPI_SUCCESS && type_size == 4);
  CHECK(MPI_Type_get_envelope(t, &ni, &na, &nt, &combiner) == MPI_SUCCESS &&
        combiner == MPI_COMBINER_F90_INTEGER && ni == 1);
  /* Usable in communication, as any type. */
  int sent = 77, got = 0;
  MPI_Request requests[2];
  MPI_Irecv(&got, 1, t, 0, 5, MPI_COMM_SELF, &requests[0]);
  MPI_Isend(&sent, 1, t, 0, 5, MPI_COMM_SELF, &requests[1]);
  CHECK(MPI_Waitall(2, requests, MPI_STATUSES_IGNORE) == MPI_SUCCESS && got == 77);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  again = t;
  CHECK(tw_class(MPI_Type_free(&again)) == MPI_ERR_TYPE && again == t);
  CHECK(tw_class(MPI_Type_create_f90_real(40, MPI_UNDEFINED, &t)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Type_create_f90_integer(19, &t)) == MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  table_sizes();
  standard_bytes();
  round_trip();
  refusals();
  fortran_types();
  f90_kinds();
  return tw_finish("portable_data") == 0 ? 0 : 1;
}
