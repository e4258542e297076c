/* A non-commutative reduction the MPI tests share: 2x2 integer matrices,
 * whose products depend on the order, so a reduction or prefix that
 * combined out of rank order gives a different result. */
#ifndef TAGWIRE_TESTS_MPI_MATRICES_H
#define TAGWIRE_TESTS_MPI_MATRICES_H

#include <mpi.h>
#include <string.h>

/* A non-commutative operation on 2x2 integer matrices (row-major, four
 * ints per element): inout = in x inout. Order matters, so a reduction
 * that combined out of rank order would give a different product. */
static void matmul(void* in_raw, void* inout_raw, int* len, MPI_Datatype* type) {
  (void)type;
  const int* a = in_raw;
  int* b = inout_raw;
  for (int e = 0; e < *len / 4; ++e, a += 4, b += 4) {
    int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof c);
  }
}

/* Rank r's matrix [[r+1, 1], [1, 0]]: products of these depend on the
 * order. */
static void rank_matrix(int r, int m[4]) {
  m[0] = r + 1, m[1] = 1, m[2] = 1, m[3] = 0;
}

/* The product m_lo x ... x m_hi, in that order. */
static void product(int lo, int hi, int out[4]) {
  out[0] = 1, out[1] = 0, out[2] = 0, out[3] = 1;
  for (int r = lo; r <= hi; ++r) {
    int m[4];
    rank_matrix(r, m);
    int c[4] = {out[0] * m[0] + out[1] * m[2], out[0] * m[1] + out[1] * m[3],
                out[2] * m[0] + out[3] * m[2], out[2] * m[1] + out[3] * m[3]};
    memcpy(out, c, sizeof c);
  }
}

#endif
