/* The MPI-1 calls MPI-3.0 removed, kept for old programs (mpi.h): each
 * must behave as its MPI-2 replacement, and MPI_LB / MPI_UB must set a
 * struct type's bounds. The expected bounds are MPI-1's (MPI-1.1 §3.12.3),
 * the same cases MPICH's lbub test takes. One rank. */
#include <mpi.h>
#include <stddef.h>
#include <string.h>

#include "check.h"

static void bounds_of(MPI_Datatype t, MPI_Aint lb, MPI_Aint ub, int size_bytes) {
  MPI_Aint got_lb = -1, got_ub = -1, extent = -1, get_lb = -1, get_extent = -1;
  int got_size = -1;
  CHECK(MPI_Type_lb(t, &got_lb) == MPI_SUCCESS && got_lb == lb);
  CHECK(MPI_Type_ub(t, &got_ub) == MPI_SUCCESS && got_ub == ub);
  CHECK(MPI_Type_extent(t, &extent) == MPI_SUCCESS && extent == ub - lb);
  CHECK(MPI_Type_get_extent(t, &get_lb, &get_extent) == MPI_SUCCESS && get_lb == lb &&
        get_extent == ub - lb);
  CHECK(MPI_Type_size(t, &got_size) == MPI_SUCCESS && got_size == size_bytes);
}

static void markers(void) {
  /* { (LB,-3), 4*(BYTE,0), (UB,6) }: lb -3, ub 6, 4 bytes of data. */
  int blocks[3] = {1, 4, 1};
  MPI_Aint disps[3] = {-3, 0, 6};
  MPI_Datatype types[3] = {MPI_LB, MPI_BYTE, MPI_UB};
  MPI_Datatype marked, three;
  CHECK(MPI_Type_struct(3, blocks, disps, types, &marked) == MPI_SUCCESS);
  bounds_of(marked, -3, 6, 4);
  MPI_Aint true_lb = -1, true_extent = -1;
  CHECK(MPI_Type_get_true_extent(marked, &true_lb, &true_extent) == MPI_SUCCESS && true_lb == 0 &&
        true_extent == 4);
  /* Three in a row: each copy one extent (9) further. */
  CHECK(MPI_Type_contiguous(3, marked, &three) == MPI_SUCCESS);
  bounds_of(three, -3, 24, 12);
  /* Data placed by the markers: byte 0..3 of each 9-byte element. */
  MPI_Type_commit(&three);
  char in[32], out[32];
  for (int i = 0; i < 32; ++i) in[i] = (char)i, out[i] = 0;
  int position = 0;
  char packed[16];
  CHECK(MPI_Pack(in + 3, 1, three, packed, sizeof packed, &position, MPI_COMM_WORLD) ==
            MPI_SUCCESS &&
        position == 12);
  CHECK(packed[0] == 3 && packed[3] == 6 && packed[4] == 12 && packed[8] == 21);
  position = 0;
  CHECK(MPI_Unpack(packed, 12, &position, out + 3, 1, three, MPI_COMM_WORLD) == MPI_SUCCESS);
  CHECK(out[3] == 3 && out[7] == 0 && out[12] == 12 && out[11] == 0);
  /* The envelope still names the markers. */
  int ni, na, nt, combiner;
  MPI_Datatype got[3];
  int ints[4];
  MPI_Aint addrs[3];
  CHECK(MPI_Type_get_envelope(marked, &ni, &na, &nt, &combiner) == MPI_SUCCESS &&
        combiner == MPI_COMBINER_STRUCT && nt == 3);
  CHECK(MPI_Type_get_contents(marked, 4, 3, 3, ints, addrs, got) == MPI_SUCCESS &&
        got[0] == MPI_LB && got[2] == MPI_UB && addrs[0] == -3);
  MPI_Type_free(&three);
  MPI_Type_free(&marked);
  /* Only a lower bound, and no data at all: lb 10, and ub 0 (no data,
   * no marker: MPICH's reading, extent -10). */
  int one = 1;
  MPI_Aint ten = 10;
  MPI_Datatype lb_type = MPI_LB, empty;
  CHECK(MPI_Type_create_struct(1, &one, &ten, &lb_type, &empty) == MPI_SUCCESS);
  bounds_of(empty, 10, 0, 0);
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  CHECK(MPI_Type_get_name(MPI_LB, name, &len) == MPI_SUCCESS && strcmp(name, "MPI_LB") == 0);
  MPI_Type_free(&empty);
  /* An upper bound past the data: no alignment padding on top of it. */
  struct {
    double d;
    char c;
  } s;
  MPI_Aint at[2] = {0, 9};
  int two[2] = {1, 1};
  MPI_Datatype dt[2] = {MPI_DOUBLE, MPI_UB}, upper;
  CHECK(MPI_Type_struct(2, two, at, dt, &upper) == MPI_SUCCESS);
  bounds_of(upper, 0, 9, 8);
  MPI_Type_free(&upper);
  (void)s;
}

static void renamed(void) {
  int a[4] = {0, 0, 0, 0};
  MPI_Aint address = 0, expected = 0;
  CHECK(MPI_Address(&a[2], &address) == MPI_SUCCESS);
  MPI_Get_address(&a[2], &expected);
  CHECK(address == expected);
  /* hvector / hindexed: strides and displacements in bytes. */
  MPI_Datatype v, h;
  CHECK(MPI_Type_hvector(3, 1, 8, MPI_INT, &v) == MPI_SUCCESS);
  bounds_of(v, 0, 20, 12);
  int lens[2] = {2, 1};
  MPI_Aint where[2] = {4, 16};
  CHECK(MPI_Type_hindexed(2, lens, where, MPI_INT, &h) == MPI_SUCCESS);
  bounds_of(h, 4, 20, 12);
  int ni, na, nt, combiner;
  MPI_Type_get_envelope(v, &ni, &na, &nt, &combiner);
  CHECK(combiner == MPI_COMBINER_HVECTOR);
  MPI_Type_free(&v);
  MPI_Type_free(&h);
}

static int handled;
static void count_error(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  handled += *code == MPI_ERR_OTHER;
}

static void error_handlers(void) {
  MPI_Errhandler mine, got;
  CHECK(MPI_Errhandler_create(count_error, &mine) == MPI_SUCCESS);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(MPI_Errhandler_set(dup, mine) == MPI_SUCCESS);
  CHECK(MPI_Errhandler_get(dup, &got) == MPI_SUCCESS && got == mine);
  MPI_Errhandler_free(&got);
  handled = 0;
  MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
  CHECK(handled == 1);
  MPI_Errhandler saved = mine;
  /* MPI_Errhandler_get gave a handle of its own, freed above: the one
   * from create is still good, once. */
  CHECK(MPI_Errhandler_free(&mine) == MPI_SUCCESS && mine == MPI_ERRHANDLER_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Errhandler_free(&saved)) == MPI_ERR_ARG);
  handled = 0;
  MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER); /* the communicator keeps it */
  CHECK(handled == 1);
  MPI_Comm_free(&dup);
  /* A marker is no datatype of its own. */
  MPI_Datatype t;
  CHECK(tw_class(MPI_Type_contiguous(2, MPI_LB, &t)) == MPI_ERR_TYPE);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  markers();
  renamed();
  error_handlers();
  return tw_finish("removed_calls") == 0 ? 0 : 1;
}
