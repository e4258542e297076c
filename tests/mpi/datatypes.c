/* Derived datatypes, pack / unpack and MAXLOC / MINLOC as MPI programs use
 * them: a matrix column by MPI_Type_vector, an indexed pattern, a C struct
 * by MPI_Type_create_struct (with its padding), nested types, persistent
 * sends that repack on every start, truncation into a strided buffer that
 * leaves the gaps alone, Get_count / Get_elements, bad-type errors,
 * value-index reductions and the pairs' size and extent. Ranks 0 and 1 exchange; every rank
 * reduces. */
#include <mpi.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

#define N 8

typedef struct {
  char c;
  double d;
  int i[3];
} Particle;

static int other(void) {
  return rank == 0 ? 1 : 0;
}

static void matrix_column(void) {
  int m[N][N], col[N];
  MPI_Datatype column;
  MPI_Type_vector(N, 1, N, MPI_INT, &column);
  MPI_Type_commit(&column);
  MPI_Aint lb, extent;
  MPI_Type_get_extent(column, &lb, &extent);
  CHECK(lb == 0 && extent == (MPI_Aint)(((N - 1) * N + 1) * sizeof(int)));
  int size;
  MPI_Type_size(column, &size);
  CHECK(size == N * (int)sizeof(int));
  if (rank == 0) {
    for (int r = 0; r < N; ++r)
      for (int c = 0; c < N; ++c) m[r][c] = r * 100 + c;
    MPI_Send(&m[0][3], 1, column, 1, 1, MPI_COMM_WORLD); /* column 3, packed */
    MPI_Recv(&m[0][5], 1, column, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int r = 0; r < N; ++r) {
      CHECK(m[r][5] == -r);
      CHECK(m[r][4] == r * 100 + 4 && m[r][6] == r * 100 + 6); /* neighbours untouched */
    }
  } else if (rank == 1) {
    MPI_Status st;
    MPI_Recv(col, N, MPI_INT, 0, 1, MPI_COMM_WORLD, &st);
    for (int r = 0; r < N; ++r) CHECK(col[r] == r * 100 + 3);
    int count = -1;
    MPI_Get_count(&st, column, &count);
    CHECK(count == 1);
    for (int r = 0; r < N; ++r) col[r] = -r;
    MPI_Send(col, N, MPI_INT, 0, 2, MPI_COMM_WORLD);
  }
  MPI_Type_free(&column);
  CHECK(column == MPI_DATATYPE_NULL);
}

static void struct_array(void) {
  Particle p[5];
  int blocks[3] = {1, 1, 3};
  MPI_Aint displs[3] = {offsetof(Particle, c), offsetof(Particle, d), offsetof(Particle, i)};
  MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, particle;
  MPI_Type_create_struct(3, blocks, displs, types, &particle);
  MPI_Type_commit(&particle);
  MPI_Aint lb, extent;
  MPI_Type_get_extent(particle, &lb, &extent);
  CHECK(extent == (MPI_Aint)sizeof(Particle)); /* padded to the double's alignment */
  int size;
  MPI_Type_size(particle, &size);
  CHECK(size == 1 + 8 + 12);
  memset(p, 0x5A, sizeof(p));
  if (rank == 0) {
    for (int k = 0; k < 5; ++k) {
      p[k].c = (char)('a' + k);
      p[k].d = k * 1.5;
      for (int j = 0; j < 3; ++j) p[k].i[j] = k * 10 + j;
    }
    MPI_Send(p, 5, particle, 1, 3, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Status st;
    MPI_Recv(p, 5, particle, 0, 3, MPI_COMM_WORLD, &st);
    for (int k = 0; k < 5; ++k) {
      CHECK(p[k].c == 'a' + k && p[k].d == k * 1.5 && p[k].i[2] == k * 10 + 2);
      /* padding after c is not data: left as it was */
      CHECK(((unsigned char*)&p[k])[1] == 0x5A);
    }
    int elements = 0;
    MPI_Get_elements(&st, particle, &elements);
    CHECK(elements == 5 * 5);
  }
  MPI_Type_free(&particle);
}

static void indexed_and_nested(void) {
  double a[32], b[32]; /* two copies of a 13-double extent, and room */
  int blocks[3] = {2, 1, 3}, displs[3] = {0, 5, 10};
  MPI_Datatype idx, pair_of_idx;
  MPI_Type_indexed(3, blocks, displs, MPI_DOUBLE, &idx);
  MPI_Type_contiguous(2, idx, &pair_of_idx); /* nested: two copies, one extent apart */
  MPI_Type_commit(&pair_of_idx);
  for (int k = 0; k < 32; ++k) a[k] = k, b[k] = -1;
  /* Round trip through Pack / Unpack, with positions. */
  int need = 0;
  MPI_Pack_size(1, pair_of_idx, MPI_COMM_WORLD, &need);
  CHECK(need == 12 * (int)sizeof(double));
  char packed[256];
  int pos = 0;
  MPI_Pack(a, 1, pair_of_idx, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
  CHECK(pos == need);
  pos = 0;
  MPI_Unpack(packed, need, &pos, b, 1, pair_of_idx, MPI_COMM_WORLD);
  CHECK(pos == need);
  /* idx covers 0,1,5,10,11,12 (extent 13): the copy adds 13,14,18,23.. */
  CHECK(b[0] == 0 && b[1] == 1 && b[5] == 5 && b[12] == 12 && b[13] == 13 && b[18] == 18);
  CHECK(b[23] == 23 && b[25] == 25);
  CHECK(b[2] == -1 && b[9] == -1 && b[15] == -1 && b[26] == -1); /* gaps and beyond untouched */
  MPI_Type_free(&pair_of_idx);
  MPI_Type_free(&idx);
}

static void persistent_repacks_and_truncation(void) {
  int m[4][4];
  MPI_Datatype column;
  MPI_Type_vector(4, 1, 4, MPI_INT, &column);
  MPI_Type_commit(&column);
  if (rank == 0) {
    MPI_Request req;
    MPI_Send_init(&m[0][0], 1, column, 1, 4, MPI_COMM_WORLD, &req);
    for (int round = 0; round < 3; ++round) {
      for (int r = 0; r < 4; ++r) m[r][0] = round * 10 + r;
      MPI_Start(&req);
      MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&req);
    int six[6] = {1, 2, 3, 4, 5, 6};
    MPI_Send(six, 6, MPI_INT, 1, 5, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int got[4];
    for (int round = 0; round < 3; ++round) {
      MPI_Recv(got, 4, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      CHECK(got[0] == round * 10 && got[3] == round * 10 + 3);
    }
    /* Six ints into one column of four: truncated, gaps untouched. */
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) m[r][c] = 7;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Status st;
    int rc = MPI_Recv(&m[0][1], 1, column, 0, 5, MPI_COMM_WORLD, &st);
    CHECK(tw_class(rc) == MPI_ERR_TRUNCATE);
    CHECK(m[0][1] == 1 && m[3][1] == 4);
    CHECK(m[0][0] == 7 && m[0][2] == 7 && m[3][2] == 7);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  }
  MPI_Type_free(&column);
}

static void counts_and_errors(void) {
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_INT, &two);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rc, dummy[4] = {0};
  rc = MPI_Send(dummy, 1, two, MPI_PROC_NULL, 0, MPI_COMM_WORLD); /* not committed yet */
  CHECK(tw_class(rc) == MPI_ERR_TYPE);
  MPI_Type_commit(&two);
  if (rank == 0) {
    int seven[7] = {0};
    MPI_Send(seven, 7, MPI_INT, 1, 6, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int in[8];
    MPI_Status st;
    MPI_Recv(in, 4, two, 0, 6, MPI_COMM_WORLD, &st);
    int count = 0, elements = 0;
    MPI_Get_count(&st, two, &count);
    MPI_Get_elements(&st, two, &elements);
    CHECK(count == MPI_UNDEFINED);
    CHECK(elements == 7);
  }
  /* Six chars into a strided receive of ints: the signatures do not match
   * (the bytes stop inside the second int). Every byte of the message
   * lands where the type puts it, as a contiguous receive would store
   * them, the gap and the bytes past the message are left alone, and the
   * receive says MPI_ERR_TYPE rather than pretending. */
  MPI_Datatype every_other_int;
  MPI_Type_vector(3, 1, 2, MPI_INT, &every_other_int);
  MPI_Type_commit(&every_other_int);
  if (rank == 0) {
    char six[6] = {1, 2, 3, 4, 5, 6};
    MPI_Send(six, 6, MPI_CHAR, 1, 7, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int in[6] = {-1, -1, -1, -1, -1, -1};
    MPI_Status st;
    rc = MPI_Recv(in, 1, every_other_int, 0, 7, MPI_COMM_WORLD, &st);
    CHECK(tw_class(rc) == MPI_ERR_TYPE);
    int first;
    memcpy(&first, (char[]){1, 2, 3, 4}, sizeof first);
    CHECK(in[0] == first && in[1] == -1 && in[3] == -1);
    const unsigned char* cut = (const unsigned char*)&in[2];
    CHECK(cut[0] == 5 && cut[1] == 6 && cut[2] == 0xff && cut[3] == 0xff);
    int elements = 0;
    MPI_Get_elements(&st, every_other_int, &elements);
    CHECK(elements == 1);
  }
  MPI_Type_free(&every_other_int);
  MPI_Datatype predefined = MPI_INT;
  rc = MPI_Type_free(&predefined);
  CHECK(tw_class(rc) == MPI_ERR_TYPE);
  MPI_Datatype freed = two;
  MPI_Type_free(&two);
  rc = MPI_Send(dummy, 1, freed, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
  CHECK(tw_class(rc) == MPI_ERR_TYPE);
  /* Collectives move derived types as point-to-point does: a strided
   * broadcast writes its elements and leaves the gaps alone, and so does a
   * reduction (more in reductions_typed.c). */
  MPI_Datatype strided;
  MPI_Type_vector(2, 1, 2, MPI_INT, &strided);
  MPI_Type_commit(&strided);
  int spread[4] = {-1, -1, -1, -1};
  if (rank == 0) spread[0] = 10, spread[1] = 11, spread[2] = 12, spread[3] = 13;
  CHECK(MPI_Bcast(spread, 1, strided, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(spread[0] == 10 && spread[2] == 12);
  CHECK(rank == 0 ? spread[1] == 11 && spread[3] == 13 : spread[1] == -1 && spread[3] == -1);
  int reduced[4] = {-1, -5, -1, -5};
  rc = MPI_Allreduce(spread, reduced, 1, strided, MPI_SUM, MPI_COMM_WORLD);
  CHECK(rc == MPI_SUCCESS);
  CHECK(reduced[0] == 10 * size && reduced[2] == 12 * size);
  CHECK(reduced[1] == -5 && reduced[3] == -5);
  MPI_Type_free(&strided);
  /* Address arithmetic (MPI-3.1): back and forth between two members. */
  double pair_of[2];
  MPI_Aint first, second;
  MPI_Get_address(&pair_of[0], &first);
  MPI_Get_address(&pair_of[1], &second);
  CHECK(MPI_Aint_diff(second, first) == (MPI_Aint)sizeof(double));
  CHECK(MPI_Aint_add(first, (MPI_Aint)sizeof(double)) == second);
  CHECK(MPI_Aint_add(second, -(MPI_Aint)sizeof(double)) == first);
  /* A layout of more than 2^22 runs is refused; blocks of many bytes
   * are one piece each (MPICH's put_base: 1024 blocks of 8192 bytes), and
   * a vector of one-run blocks is one run whatever its count (MPICH's
   * large_vec: 135 M blocks), packed and unpacked piece by piece. */
  MPI_Datatype huge, rows, two_runs, too_many;
  struct {
    int i;
    double d;
  } mixed_pair;
  int pair_lengths[2] = {1, 1};
  MPI_Aint pair_at[2] = {0, (MPI_Aint)((char*)&mixed_pair.d - (char*)&mixed_pair)};
  MPI_Datatype pair_types[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(2, pair_lengths, pair_at, pair_types, &two_runs);
  CHECK(tw_class(MPI_Type_contiguous(3000000, two_runs, &too_many)) == MPI_ERR_ARG);
  MPI_Type_free(&two_runs);
  enum { kHuge = 5000000 };
  CHECK(MPI_Type_vector(kHuge, 1, 2, MPI_INT, &huge) == MPI_SUCCESS);
  CHECK(MPI_Type_commit(&huge) == MPI_SUCCESS);
  int huge_size = 0;
  MPI_Aint huge_lb = -1, huge_extent = 0, true_lb = -1, true_extent = 0;
  MPI_Type_size(huge, &huge_size);
  MPI_Type_get_extent(huge, &huge_lb, &huge_extent);
  MPI_Type_get_true_extent(huge, &true_lb, &true_extent);
  CHECK(huge_size == 4 * kHuge && huge_lb == 0 && true_lb == 0);
  CHECK(huge_extent == (MPI_Aint)(2 * kHuge - 1) * 4 && true_extent == huge_extent);
  int* wide = malloc(sizeof(int) * 2 * kHuge);
  int* dense = malloc(sizeof(int) * kHuge);
  for (int k = 0; k < 2 * kHuge; ++k) wide[k] = k;
  int at = 0;
  CHECK(MPI_Pack(wide, 1, huge, dense, 4 * kHuge, &at, MPI_COMM_WORLD) == MPI_SUCCESS);
  int every_other = at == 4 * kHuge;
  for (int k = 0; k < kHuge; ++k) every_other &= dense[k] == 2 * k;
  CHECK(every_other);
  for (int k = 0; k < 2 * kHuge; ++k) wide[k] = -1;
  at = 0;
  CHECK(MPI_Unpack(dense, 4 * kHuge, &at, wide, 1, huge, MPI_COMM_WORLD) == MPI_SUCCESS);
  int back = 1;
  for (int k = 0; k < 2 * kHuge; ++k) back &= wide[k] == (k % 2 == 0 ? k : -1);
  CHECK(back);
  free(wide);
  free(dense);
  /* Past an int of bytes (1 G blocks of 16): no memory for its pieces,
   * and MPI_Type_size says MPI_UNDEFINED where _x has the figure. */
  MPI_Datatype giant;
  MPI_Count giant_size = 0;
  CHECK(MPI_Type_vector(1 << 30, 4, 8, MPI_INT, &giant) == MPI_SUCCESS);
  CHECK(MPI_Type_size(giant, &huge_size) == MPI_SUCCESS && huge_size == MPI_UNDEFINED);
  CHECK(MPI_Type_size_x(giant, &giant_size) == MPI_SUCCESS && giant_size == (MPI_Count)16 << 30);
  MPI_Type_free(&giant);
  MPI_Type_free(&huge);
  CHECK(MPI_Type_vector(1024, 8192, 16384, MPI_BYTE, &rows) == MPI_SUCCESS);
  CHECK(MPI_Type_commit(&rows) == MPI_SUCCESS);
  int rows_size = 0;
  MPI_Type_size(rows, &rows_size);
  CHECK(rows_size == 1024 * 8192);
  MPI_Type_free(&rows);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void type_freed_while_in_flight(void) {
  int m[3][3] = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
  MPI_Datatype diag;
  MPI_Type_vector(3, 1, 4, MPI_INT, &diag);
  MPI_Type_commit(&diag);
  MPI_Request req = MPI_REQUEST_NULL;
  int d[3] = {0};
  if (rank == 0) MPI_Isend(m, 1, diag, 1, 7, MPI_COMM_WORLD, &req);
  if (rank == 1) MPI_Irecv(d, 3, MPI_INT, 0, 7, MPI_COMM_WORLD, &req);
  MPI_Type_free(&diag); /* allowed: pending operations finish normally */
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  if (rank == 1) CHECK(d[0] == 1 && d[1] == 5 && d[2] == 9);
}

static void maxloc_minloc(void) {
  struct {
    double v;
    int i;
  } in[2], out[2];
  in[0].v = (rank * 7) % 5;
  in[0].i = rank; /* several ranks may tie: lowest index wins */
  in[1].v = -rank;
  in[1].i = rank;
  MPI_Allreduce(in, out, 2, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  double best = -1;
  int where = -1;
  for (int r = 0; r < size; ++r)
    if ((r * 7) % 5 > best) best = (r * 7) % 5, where = r;
  CHECK(out[0].v == best && out[0].i == where);
  CHECK(out[1].v == 0 && out[1].i == 0);
  struct {
    int v;
    int i;
  } p = {rank % 2, rank}, q;
  MPI_Allreduce(&p, &q, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
  CHECK(q.v == 0 && q.i == 0);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int x = 1, y;
  int rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAXLOC, MPI_COMM_WORLD);
  CHECK(tw_class(rc) == MPI_ERR_OP);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* The pairs' size and extent as the standard's type map gives them (a
 * value and an int; C's padding in the extent only: MPI_DOUBLE_INT is 12
 * and 16), a send of three pairs that arrives as 36 bytes and as three
 * pairs (six basic elements), the padding of the receive buffer left
 * alone. */
typedef struct {
  double v;
  int i;
} DoubleInt;
typedef struct {
  long double v;
  int i;
} LongDoubleInt;
typedef struct {
  short v;
  int i;
} ShortInt;

static void pair_sizes_and_transfer(void) {
  const struct {
    MPI_Datatype type;
    int size;
    MPI_Aint extent;
  } pairs[] = {
      {MPI_FLOAT_INT, (int)(sizeof(float) + sizeof(int)), 8},
      {MPI_DOUBLE_INT, (int)(sizeof(double) + sizeof(int)), (MPI_Aint)sizeof(DoubleInt)},
      {MPI_LONG_INT, (int)(sizeof(long) + sizeof(int)), 16},
      {MPI_2INT, 8, 8},
      {MPI_SHORT_INT, (int)(sizeof(short) + sizeof(int)), (MPI_Aint)sizeof(ShortInt)},
      {MPI_LONG_DOUBLE_INT, (int)(sizeof(long double) + sizeof(int)),
       (MPI_Aint)sizeof(LongDoubleInt)},
  };
  for (size_t k = 0; k < sizeof(pairs) / sizeof(pairs[0]); ++k) {
    int sz = -1;
    MPI_Aint lb = -1, extent = -1;
    MPI_Type_size(pairs[k].type, &sz);
    MPI_Type_get_extent(pairs[k].type, &lb, &extent);
    CHECK(sz == pairs[k].size && lb == 0 && extent == pairs[k].extent);
  }
  if (rank > 1 || size < 2) return;
  DoubleInt out[3], in[3];
  memset(out, 0, sizeof(out));
  for (int k = 0; k < 3; ++k) out[k].v = 1.5 * k, out[k].i = 10 + k;
  memset(in, 0x5a, sizeof(in));
  MPI_Status st;
  if (rank == 0) {
    MPI_Send(out, 3, MPI_DOUBLE_INT, 1, 40, MPI_COMM_WORLD);
    MPI_Send(out, 3, MPI_DOUBLE_INT, 1, 41, MPI_COMM_WORLD);
  } else {
    MPI_Recv(in, 3, MPI_DOUBLE_INT, 0, 40, MPI_COMM_WORLD, &st);
    int count = -1, elements = -1, bytes = -1;
    MPI_Get_count(&st, MPI_DOUBLE_INT, &count);
    MPI_Get_elements(&st, MPI_DOUBLE_INT, &elements);
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    CHECK(count == 3 && elements == 6 && bytes == 36);
    int same = 1;
    for (int k = 0; k < 3; ++k) {
      unsigned char pad[sizeof(DoubleInt) - offsetof(DoubleInt, i) - sizeof(int)];
      memcpy(pad, (char*)&in[k] + offsetof(DoubleInt, i) + sizeof(int), sizeof(pad));
      same &= in[k].v == 1.5 * k && in[k].i == 10 + k;
      for (size_t b = 0; b < sizeof(pad); ++b) same &= pad[b] == 0x5a; /* untouched */
    }
    CHECK(same);
    unsigned char raw[36];
    MPI_Recv(raw, 36, MPI_BYTE, 0, 41, MPI_COMM_WORLD, &st);
    MPI_Get_count(&st, MPI_BYTE, &bytes);
    double v2;
    int i2;
    memcpy(&v2, raw + 24, sizeof(v2));
    memcpy(&i2, raw + 32, sizeof(i2));
    CHECK(bytes == 36 && v2 == 3.0 && i2 == 12); /* packed: 12 bytes a pair */
  }
}

/* MPI_Type_get_envelope / get_contents: each constructor described as it
 * was called, a freed old type still described (and handed back as a new
 * handle that works and must be freed), predefined types NAMED. */
static void envelopes_and_contents(void) {
  int ni, na, nd, combiner;
  int ints[16];
  MPI_Aint addrs[16];
  MPI_Datatype types[4];
  MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nd == 0);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Type_get_contents(MPI_INT, 0, 0, 0, ints, addrs, types)) == MPI_ERR_TYPE);

  MPI_Datatype vec, hvec, idx, hidx, st, res, dup, contig;
  MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
  MPI_Type_get_envelope(vec, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1);
  CHECK(MPI_Type_get_contents(vec, 16, 16, 4, ints, addrs, types) == MPI_SUCCESS);
  CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && types[0] == MPI_INT);
  CHECK(tw_class(MPI_Type_get_contents(vec, 2, 16, 4, ints, addrs, types)) == MPI_ERR_ARG);

  MPI_Type_create_hvector(2, 1, 40, vec, &hvec);
  MPI_Type_get_envelope(hvec, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_HVECTOR && ni == 2 && na == 1 && nd == 1);
  MPI_Type_free(&vec); /* hvec still describes it */
  CHECK(MPI_Type_get_contents(hvec, 16, 16, 4, ints, addrs, types) == MPI_SUCCESS);
  CHECK(ints[0] == 2 && ints[1] == 1 && addrs[0] == 40);
  MPI_Type_get_envelope(types[0], &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_VECTOR && ni == 3); /* the freed vector, as a new handle */
  int inner_size = 0;
  MPI_Type_size(types[0], &inner_size);
  CHECK(inner_size == 6 * (int)sizeof(int));
  CHECK(MPI_Type_free(&types[0]) == MPI_SUCCESS);

  int bl[2] = {1, 3}, disp[2] = {4, 0};
  MPI_Type_indexed(2, bl, disp, MPI_SHORT, &idx);
  MPI_Type_get_envelope(idx, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_INDEXED && ni == 5 && na == 0 && nd == 1);
  MPI_Type_get_contents(idx, 16, 16, 4, ints, addrs, types);
  CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 3 && ints[3] == 4 && ints[4] == 0);
  CHECK(types[0] == MPI_SHORT);

  MPI_Aint hd[2] = {16, 0};
  MPI_Type_create_hindexed(2, bl, hd, MPI_CHAR, &hidx);
  MPI_Type_get_envelope(hidx, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_HINDEXED && ni == 3 && na == 2 && nd == 1);
  MPI_Type_get_contents(hidx, 16, 16, 4, ints, addrs, types);
  CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 3 && addrs[0] == 16 && addrs[1] == 0);

  int sbl[2] = {1, 2};
  MPI_Aint sd[2] = {0, 8};
  MPI_Datatype stypes[2] = {MPI_DOUBLE, MPI_INT};
  MPI_Type_create_struct(2, sbl, sd, stypes, &st);
  MPI_Type_get_envelope(st, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_STRUCT && ni == 3 && na == 2 && nd == 2);
  MPI_Type_get_contents(st, 16, 16, 4, ints, addrs, types);
  CHECK(ints[0] == 2 && ints[1] == 1 && ints[2] == 2 && addrs[1] == 8);
  CHECK(types[0] == MPI_DOUBLE && types[1] == MPI_INT);

  MPI_Type_create_resized(MPI_INT, -4, 16, &res);
  MPI_Type_get_envelope(res, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_RESIZED && ni == 0 && na == 2 && nd == 1);
  MPI_Type_get_contents(res, 0, 16, 4, ints, addrs, types);
  CHECK(addrs[0] == -4 && addrs[1] == 16 && types[0] == MPI_INT);

  MPI_Type_contiguous(7, st, &contig);
  MPI_Type_get_envelope(contig, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_CONTIGUOUS && ni == 1 && nd == 1);
  MPI_Type_get_contents(contig, 16, 16, 4, ints, addrs, types);
  CHECK(ints[0] == 7);
  MPI_Type_get_envelope(types[0], &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_STRUCT);
  MPI_Type_free(&types[0]);

  MPI_Type_dup(contig, &dup);
  MPI_Type_get_envelope(dup, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_DUP && ni == 0 && na == 0 && nd == 1);
  MPI_Type_get_contents(dup, 0, 0, 1, ints, addrs, types);
  MPI_Type_get_envelope(types[0], &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_CONTIGUOUS);
  MPI_Type_free(&types[0]);

  MPI_Datatype all[] = {hvec, idx, hidx, st, res, contig, dup};
  for (int i = 0; i < 7; ++i) CHECK(MPI_Type_free(&all[i]) == MPI_SUCCESS);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* The MPI-2/3 constructors and queries: indexed_block and hindexed_block
 * place the same bytes as indexed / hindexed with equal blocks, their
 * contents say so, and the _x and true-extent queries agree with the rest. */
static void block_constructors_and_x_queries(void) {
  int displs[3] = {5, 0, 2};
  MPI_Aint hdispls[3] = {40, 0, 16};
  int blocks[3] = {2, 2, 2};
  MPI_Datatype ib, hb, ref;
  CHECK(MPI_Type_create_indexed_block(3, 2, displs, MPI_DOUBLE, &ib) == MPI_SUCCESS);
  CHECK(MPI_Type_create_hindexed_block(3, 2, hdispls, MPI_DOUBLE, &hb) == MPI_SUCCESS);
  MPI_Type_indexed(3, blocks, displs, MPI_DOUBLE, &ref);
  MPI_Type_commit(&ib), MPI_Type_commit(&hb), MPI_Type_commit(&ref);
  double src[8];
  for (int i = 0; i < 8; ++i) src[i] = i + 0.5;
  char a[256], b[256], c[256];
  int pa = 0, pb = 0, pc = 0;
  MPI_Pack(src, 1, ib, a, sizeof a, &pa, MPI_COMM_WORLD);
  MPI_Pack(src, 1, hb, b, sizeof b, &pb, MPI_COMM_WORLD);
  MPI_Pack(src, 1, ref, c, sizeof c, &pc, MPI_COMM_WORLD);
  CHECK(pa == 48 && pb == 48 && pc == 48);
  CHECK(memcmp(a, c, 48) == 0 && memcmp(b, c, 48) == 0);
  int ni, na, nd, combiner, ints[8];
  MPI_Aint addrs[8];
  MPI_Datatype types[2];
  MPI_Type_get_envelope(ib, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_INDEXED_BLOCK && ni == 5 && na == 0 && nd == 1);
  MPI_Type_get_contents(ib, 8, 8, 2, ints, addrs, types);
  CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 5 && ints[4] == 2 && types[0] == MPI_DOUBLE);
  MPI_Type_get_envelope(hb, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_HINDEXED_BLOCK && ni == 2 && na == 3 && nd == 1);
  /* Sizes and extents, plain and _x; the true extent ignores a resize. */
  MPI_Count sx = 0, lbx = -1, extx = -1, tlbx = -1, textx = -1;
  MPI_Type_size_x(ib, &sx);
  MPI_Type_get_extent_x(ib, &lbx, &extx);
  CHECK(sx == 48 && lbx == 0 && extx == 56);
  MPI_Datatype wide;
  MPI_Type_create_resized(MPI_INT, -8, 32, &wide);
  MPI_Aint tlb = -1, text = -1;
  MPI_Type_get_true_extent(wide, &tlb, &text);
  CHECK(tlb == 0 && text == 4);
  MPI_Type_get_true_extent_x(ib, &tlbx, &textx);
  CHECK(tlbx == 0 && textx == 56);
  /* Five doubles received into an element of six: five elements. */
  MPI_Status st;
  double got[8];
  MPI_Sendrecv(src, 5, MPI_DOUBLE, rank, 77, got, 1, ib, rank, 77, MPI_COMM_WORLD, &st);
  MPI_Count elements = 0;
  MPI_Get_elements_x(&st, ib, &elements);
  CHECK(elements == 5);
  MPI_Type_free(&ib), MPI_Type_free(&hb), MPI_Type_free(&ref), MPI_Type_free(&wide);
}

/* Names: the standard's for predefined types, none for a new derived one,
 * what MPI_Type_set_name gave (cut to MPI_MAX_OBJECT_NAME - 1), and a
 * freed type's name does not pass to the next type in its handle. */
static void type_names(void) {
  char name[MPI_MAX_OBJECT_NAME];
  int len = -1;
  CHECK(MPI_Type_get_name(MPI_DOUBLE, name, &len) == MPI_SUCCESS);
  CHECK(strcmp(name, "MPI_DOUBLE") == 0 && len == 10);
  CHECK(MPI_Type_get_name(MPI_2INT, name, &len) == MPI_SUCCESS && strcmp(name, "MPI_2INT") == 0);
  /* One handle, two names: the older one. */
  CHECK(MPI_Type_get_name(MPI_LONG_LONG, name, &len) == MPI_SUCCESS &&
        strcmp(name, "MPI_LONG_LONG_INT") == 0);
  CHECK(MPI_Type_get_name(MPI_C_FLOAT_COMPLEX, name, &len) == MPI_SUCCESS &&
        strcmp(name, "MPI_C_COMPLEX") == 0);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  CHECK(MPI_Type_get_name(pair, name, &len) == MPI_SUCCESS && len == 0 && name[0] == '\0');
  CHECK(MPI_Type_set_name(pair, "pair of ints") == MPI_SUCCESS);
  CHECK(MPI_Type_get_name(pair, name, &len) == MPI_SUCCESS);
  CHECK(strcmp(name, "pair of ints") == 0 && len == 12);
  char longer[300];
  memset(longer, 'x', sizeof longer - 1);
  longer[sizeof longer - 1] = '\0';
  CHECK(MPI_Type_set_name(pair, longer) == MPI_SUCCESS);
  CHECK(MPI_Type_get_name(pair, name, &len) == MPI_SUCCESS && len == MPI_MAX_OBJECT_NAME - 1);
  MPI_Datatype handle = pair;
  MPI_Type_free(&pair);
  MPI_Datatype next;
  MPI_Type_contiguous(3, MPI_INT, &next);
  if (next == handle) {
    CHECK(MPI_Type_get_name(next, name, &len) == MPI_SUCCESS && len == 0);
  }
  MPI_Type_free(&next);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Type_get_name(9999, name, &len)) == MPI_ERR_TYPE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* MPI_Type_create_subarray: a 3-D block of a 4x5x6 array of ints in C
 * order and a 2-D block in Fortran order, packed and compared element by
 * element with the block picked out by hand; the extent is the whole
 * array's; a halo column sent from rank 0 lands in rank 1's array in
 * place; get_contents gives the arguments back; bad shapes fail. */
static void subarrays(void) {
  enum { A = 4, B = 5, C = 6 };
  int array[A][B][C];
  for (int a = 0; a < A; ++a)
    for (int b = 0; b < B; ++b)
      for (int c = 0; c < C; ++c) array[a][b][c] = 100 * a + 10 * b + c;
  const int sizes[] = {A, B, C}, subsizes[] = {2, 3, 4}, starts[] = {1, 2, 1};
  MPI_Datatype block;
  CHECK(MPI_Type_create_subarray(3, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &block) ==
        MPI_SUCCESS);
  MPI_Type_commit(&block);
  int type_size = 0;
  MPI_Aint lb = -1, extent = -1;
  MPI_Type_size(block, &type_size);
  MPI_Type_get_extent(block, &lb, &extent);
  CHECK(type_size == 2 * 3 * 4 * (int)sizeof(int));
  CHECK(lb == 0 && extent == (MPI_Aint)sizeof(array));
  int packed[24], position = 0, wrong = 0, k = 0;
  MPI_Pack(array, 1, block, packed, sizeof(packed), &position, MPI_COMM_WORLD);
  CHECK(position == (int)sizeof(packed));
  for (int a = 1; a < 3; ++a)
    for (int b = 2; b < 5; ++b)
      for (int c = 1; c < 5; ++c) wrong += packed[k++] != array[a][b][c];
  CHECK(wrong == 0);

  /* Fortran order: the first index varies fastest. A 3x2 block at (1, 2)
   * of a 4x5 column-major array stored as column[j][i] = element (i, j). */
  int column[5][4];
  for (int j = 0; j < 5; ++j)
    for (int i = 0; i < 4; ++i) column[j][i] = 10 * i + j;
  const int fsizes[] = {4, 5}, fsub[] = {3, 2}, fstarts[] = {1, 2};
  MPI_Datatype fblock;
  CHECK(MPI_Type_create_subarray(2, fsizes, fsub, fstarts, MPI_ORDER_FORTRAN, MPI_INT, &fblock) ==
        MPI_SUCCESS);
  MPI_Type_commit(&fblock);
  int fpacked[6];
  position = 0;
  k = 0;
  wrong = 0;
  MPI_Pack(column, 1, fblock, fpacked, sizeof(fpacked), &position, MPI_COMM_WORLD);
  for (int j = 2; j < 4; ++j)
    for (int i = 1; i < 4; ++i) wrong += fpacked[k++] != 10 * i + j;
  CHECK(wrong == 0);

  /* The arguments come back. */
  int ni = 0, na = 0, nd = 0, combiner = 0;
  MPI_Type_get_envelope(block, &ni, &na, &nd, &combiner);
  CHECK(combiner == MPI_COMBINER_SUBARRAY && ni == 3 * 3 + 2 && na == 0 && nd == 1);
  int integers[11];
  MPI_Aint addresses[1];
  MPI_Datatype types[1];
  CHECK(MPI_Type_get_contents(block, 11, 0, 1, integers, addresses, types) == MPI_SUCCESS);
  CHECK(integers[0] == 3 && integers[1] == A && integers[4] == 2 && integers[7] == 1 &&
        integers[10] == MPI_ORDER_C && types[0] == MPI_INT);

  /* A halo exchange: rank 0 sends the block, rank 1 receives it into the
   * same place of a zeroed array; every other element stays zero. */
  if (size >= 2 && rank < 2) {
    if (rank == 0) {
      MPI_Send(array, 1, block, 1, 77, MPI_COMM_WORLD);
    } else {
      int received[A][B][C];
      memset(received, 0, sizeof(received));
      MPI_Recv(received, 1, block, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      wrong = 0;
      for (int a = 0; a < A; ++a)
        for (int b = 0; b < B; ++b)
          for (int c = 0; c < C; ++c) {
            const int inside = a >= 1 && a < 3 && b >= 2 && b < 5 && c >= 1 && c < 5;
            wrong += received[a][b][c] != (inside ? array[a][b][c] : 0);
          }
      CHECK(wrong == 0);
    }
  }

  /* Shapes that do not fit. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype bad;
  const int too_far[] = {1, 3, 3}; /* 3 + 4 > 6 in the last dimension */
  CHECK(tw_class(MPI_Type_create_subarray(3, sizes, subsizes, too_far, MPI_ORDER_C, MPI_INT,
                                          &bad)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Type_create_subarray(0, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT,
                                          &bad)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Type_create_subarray(3, sizes, subsizes, starts, 3, MPI_INT, &bad)) ==
        MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Type_free(&block);
  MPI_Type_free(&fblock);
}

/* MPI_Type_create_darray: each process's part of a global array, checked
 * by packing an array whose every element holds its own index: the packed
 * ints must be the indices the process owns, in the array's order. The
 * owner of an index is worked out here from the definition (MPI-3.1
 * §4.1.4) and every index must have exactly one. */
static int owner_coord(int index, int gsize, int distrib, int darg, int procs) {
  if (distrib == MPI_DISTRIBUTE_NONE) return 0;
  if (distrib == MPI_DISTRIBUTE_BLOCK) {
    const int block = darg == MPI_DISTRIBUTE_DFLT_DARG ? (gsize + procs - 1) / procs : darg;
    return index / block;
  }
  const int block = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
  return (index / block) % procs;
}

/* A 3-D case: dims[], distribs[], dargs[], psizes[] in `order`. */
static void darray_case(const int gsizes[3], const int distribs[3], const int dargs[3],
                        const int psizes[3], int order) {
  const int total = gsizes[0] * gsizes[1] * gsizes[2];
  const int procs = psizes[0] * psizes[1] * psizes[2];
  int* array = malloc(sizeof(int) * (size_t)total);
  int* packed = malloc(sizeof(int) * (size_t)total);
  int* owners = calloc((size_t)total, sizeof(int));
  for (int i = 0; i < total; ++i) array[i] = i;
  for (int p = 0; p < procs; ++p) {
    MPI_Datatype part;
    CHECK(MPI_Type_create_darray(procs, p, 3, gsizes, distribs, dargs, psizes, order, MPI_INT,
                                 &part) == MPI_SUCCESS);
    MPI_Type_commit(&part);
    MPI_Aint lb = -1, extent = 0;
    MPI_Type_get_extent(part, &lb, &extent);
    CHECK(lb == 0 && extent == (MPI_Aint)(sizeof(int) * (size_t)total));
    int bytes = 0, position = 0;
    MPI_Type_size(part, &bytes);
    CHECK(MPI_Pack(array, 1, part, packed, (int)sizeof(int) * total, &position, MPI_COMM_SELF) ==
          MPI_SUCCESS);
    CHECK(position == bytes);
    /* Process p's coordinates, row-major over psizes. */
    const int coord[3] = {p / (psizes[1] * psizes[2]), (p / psizes[2]) % psizes[1], p % psizes[2]};
    /* The array's elements in its own order, those of p expected in turn. */
    int k = 0, mismatches = 0;
    for (int e = 0; e < total; ++e) {
      int idx[3], rest = e;
      if (order == MPI_ORDER_C) {
        for (int d = 2; d >= 0; --d) idx[d] = rest % gsizes[d], rest /= gsizes[d];
      } else {
        for (int d = 0; d < 3; ++d) idx[d] = rest % gsizes[d], rest /= gsizes[d];
      }
      int mine = 1;
      for (int d = 0; d < 3; ++d)
        mine &= owner_coord(idx[d], gsizes[d], distribs[d], dargs[d], psizes[d]) == coord[d];
      if (!mine) continue;
      ++owners[e];
      if (k * (int)sizeof(int) >= bytes || packed[k] != e) ++mismatches;
      ++k;
    }
    CHECK(mismatches == 0);
    CHECK(k * (int)sizeof(int) == bytes);
    int ni = 0, na = 0, nd = 0, combiner = 0;
    MPI_Type_get_envelope(part, &ni, &na, &nd, &combiner);
    CHECK(combiner == MPI_COMBINER_DARRAY && ni == 4 * 3 + 4 && na == 0 && nd == 1);
    MPI_Type_free(&part);
  }
  int uncovered = 0;
  for (int e = 0; e < total; ++e) uncovered += owners[e] != 1;
  CHECK(uncovered == 0);
  free(owners);
  free(packed);
  free(array);
}

static void darrays(void) {
  const int B = MPI_DISTRIBUTE_BLOCK, Y = MPI_DISTRIBUTE_CYCLIC, Z = MPI_DISTRIBUTE_NONE;
  const int D = MPI_DISTRIBUTE_DFLT_DARG;
  {
    const int g[3] = {7, 6, 5}, dist[3] = {B, Y, Z}, args[3] = {D, 2, D}, ps[3] = {2, 3, 1};
    darray_case(g, dist, args, ps, MPI_ORDER_C);
    darray_case(g, dist, args, ps, MPI_ORDER_FORTRAN);
  }
  {
    /* An explicit block, the default cyclic, and a process with nothing
     * (a block of 4 over 3 processes of 9 elements: the last holds 1). */
    const int g[3] = {9, 5, 4}, dist[3] = {B, Y, B}, args[3] = {4, D, D}, ps[3] = {3, 2, 2};
    darray_case(g, dist, args, ps, MPI_ORDER_C);
    const int g2[3] = {8, 3, 2}, args2[3] = {4, D, D}, ps2[3] = {3, 1, 1};
    const int dist2[3] = {B, Z, Z};
    darray_case(g2, dist2, args2, ps2, MPI_ORDER_FORTRAN); /* the third process: empty */
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Datatype bad;
  const int g[2] = {8, 8}, dist[2] = {B, Z}, args[2] = {D, D}, ps[2] = {2, 2};
  /* NONE over 2 processes, a grid of 4 for 3, a block too small to cover. */
  CHECK(tw_class(MPI_Type_create_darray(4, 0, 2, g, dist, args, ps, MPI_ORDER_C, MPI_INT, &bad)) ==
        MPI_ERR_ARG);
  const int ps1[2] = {2, 1};
  CHECK(tw_class(MPI_Type_create_darray(3, 0, 2, g, dist, args, ps1, MPI_ORDER_C, MPI_INT, &bad)) ==
        MPI_ERR_ARG);
  const int small[2] = {3, D};
  CHECK(tw_class(MPI_Type_create_darray(2, 0, 2, g, dist, small, ps1, MPI_ORDER_C, MPI_INT,
                                        &bad)) == MPI_ERR_ARG);
  CHECK(tw_class(MPI_Type_create_darray(2, 2, 2, g, dist, args, ps1, MPI_ORDER_C, MPI_INT, &bad)) ==
        MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  (void)other;
  if (size >= 2) {
    matrix_column();
    struct_array();
    persistent_repacks_and_truncation();
    counts_and_errors();
    type_freed_while_in_flight();
  }
  pair_sizes_and_transfer();
  indexed_and_nested();
  maxloc_minloc();
  envelopes_and_contents();
  block_constructors_and_x_queries();
  type_names();
  subarrays();
  darrays();
  int total_failed = 0;
  MPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("datatypes: %d checks passed on rank 0, %d failed in all\n", passed, total_failed);
  MPI_Finalize();
  return total_failed == 0 ? 0 : 1;
}
