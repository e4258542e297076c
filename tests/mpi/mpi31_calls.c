/* MPI-3.1 calls that MPICH's test suite found missing or wrong (issue 28,
 * 2026-12-01): datatype attributes, MPI-1's attribute names, info hints on
 * communicators and windows, MPI_Pcontrol, status and error-handler
 * conversion, the error classes and MPI_T categories, MPI_Comm_create with
 * disjoint groups, MPI_Comm_create_group over changing groups with one
 * tag, a status's MPI_ERROR kept by single-completion calls, datatypes
 * built on a negative extent, the complex types, MPI_CXX_BOOL, MPI_OFFSET
 * and MPI_Type_match_size, keyvals freed more than once, MPI_Comm_disconnect.
 * Any number of ranks. */
#include <complex.h>
#include <mpi.h>
#include <string.h>

#include "check.h"

static int deletes;
static int count_delete(MPI_Datatype t, int k, void* v, void* extra) {
  (void)t, (void)k, (void)v, (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}
static int failing_copy(MPI_Datatype t, int k, void* extra, void* in, void* out, int* flag) {
  (void)t, (void)k, (void)extra, (void)in, (void)out, (void)flag;
  return MPI_ERR_OTHER;
}

static void type_attributes(void) {
  int key = MPI_KEYVAL_INVALID, flag = 0;
  static int value = 42;
  void* got = NULL;
  CHECK(MPI_Type_create_keyval(MPI_TYPE_DUP_FN, count_delete, &key, NULL) == MPI_SUCCESS);
  MPI_Datatype pair, copy;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  CHECK(MPI_Type_set_attr(pair, key, &value) == MPI_SUCCESS);
  CHECK(MPI_Type_get_attr(pair, key, &got, &flag) == MPI_SUCCESS && flag && got == &value);
  CHECK(MPI_Type_dup(pair, &copy) == MPI_SUCCESS);
  got = NULL;
  CHECK(MPI_Type_get_attr(copy, key, &got, &flag) == MPI_SUCCESS && flag && got == &value);
  deletes = 0;
  MPI_Type_free(&copy);
  CHECK(deletes == 1); /* freeing a type deletes its attributes */
  CHECK(MPI_Type_delete_attr(pair, key) == MPI_SUCCESS && deletes == 2);
  CHECK(MPI_Type_get_attr(pair, key, &got, &flag) == MPI_SUCCESS && !flag);
  /* A predefined type carries attributes too. */
  CHECK(MPI_Type_set_attr(MPI_INT, key, &value) == MPI_SUCCESS);
  CHECK(MPI_Type_get_attr(MPI_INT, key, &got, &flag) == MPI_SUCCESS && flag && got == &value);
  CHECK(MPI_Type_delete_attr(MPI_INT, key) == MPI_SUCCESS && deletes == 3);
  CHECK(MPI_Type_free_keyval(&key) == MPI_SUCCESS && key == MPI_KEYVAL_INVALID);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Type_get_attr(pair, 12345, &got, &flag)) == MPI_ERR_KEYVAL);
  /* A copy callback that fails fails the dup, with its class. */
  int bad = MPI_KEYVAL_INVALID;
  MPI_Type_create_keyval(failing_copy, MPI_TYPE_NULL_DELETE_FN, &bad, NULL);
  MPI_Type_set_attr(pair, bad, &value);
  CHECK(tw_class(MPI_Type_set_attr((MPI_Datatype)60, bad, &value)) == MPI_ERR_TYPE); /* no type */
  CHECK(tw_class(MPI_Type_dup(pair, &copy)) == MPI_ERR_OTHER);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Type_delete_attr(pair, bad);
  MPI_Type_free_keyval(&bad);
  MPI_Type_free(&pair);
}

static int freeing_deletes;
static int freeing_delete(MPI_Comm c, int k, void* v, void* extra) {
  (void)c, (void)v, (void)extra;
  ++freeing_deletes;
  return MPI_Comm_free_keyval(&k);
}

static void mpi1_attributes(void) {
  int key = MPI_KEYVAL_INVALID, flag = 0;
  static int value = 7;
  void* got = NULL;
  CHECK(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &key, NULL) == MPI_SUCCESS);
  CHECK(MPI_Attr_put(MPI_COMM_WORLD, key, &value) == MPI_SUCCESS);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(MPI_Attr_get(dup, key, &got, &flag) == MPI_SUCCESS && flag && got == &value);
  CHECK(MPI_Attr_delete(MPI_COMM_WORLD, key) == MPI_SUCCESS);
  CHECK(MPI_Attr_get(MPI_COMM_WORLD, key, &got, &flag) == MPI_SUCCESS && !flag);
  MPI_Comm_free(&dup);
  CHECK(MPI_Keyval_free(&key) == MPI_SUCCESS && key == MPI_KEYVAL_INVALID);
  int null_key = MPI_KEYVAL_INVALID;
  MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &null_key, NULL);
  MPI_Attr_put(MPI_COMM_WORLD, null_key, &value);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(MPI_Attr_get(dup, null_key, &got, &flag) == MPI_SUCCESS && !flag); /* not copied */
  MPI_Comm_free(&dup);
  MPI_Attr_delete(MPI_COMM_WORLD, null_key);
  MPI_Keyval_free(&null_key);
  /* A freed keyval still names the attribute set under it (MPICH's fkeyval). */
  int freed = MPI_KEYVAL_INVALID, saved;
  MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &freed, NULL);
  saved = freed;
  MPI_Attr_put(MPI_COMM_WORLD, freed, &value);
  MPI_Keyval_free(&freed);
  CHECK(MPI_Attr_get(MPI_COMM_WORLD, saved, &got, &flag) == MPI_SUCCESS && flag);
  CHECK(MPI_Attr_delete(MPI_COMM_WORLD, saved) == MPI_SUCCESS);
  /* A delete callback that frees its own key frees it once per attribute,
   * after the program freed it too (MPICH's keyval_double_free): accepted.
   * A number that never was a key still is not. */
  int self_freeing = MPI_KEYVAL_INVALID;
  MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, freeing_delete, &self_freeing, NULL);
  saved = self_freeing;
  MPI_Comm_dup(MPI_COMM_SELF, &dup);
  MPI_Comm_set_attr(MPI_COMM_WORLD, self_freeing, &value);
  MPI_Comm_set_attr(dup, self_freeing, &value);
  freeing_deletes = 0;
  CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS && freeing_deletes == 1);
  CHECK(MPI_Comm_free_keyval(&self_freeing) == MPI_SUCCESS && self_freeing == MPI_KEYVAL_INVALID);
  int copy = saved;
  CHECK(MPI_Comm_free_keyval(&copy) == MPI_SUCCESS);
  CHECK(MPI_Comm_delete_attr(MPI_COMM_WORLD, saved) == MPI_SUCCESS && freeing_deletes == 2);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int never = 99999;
  CHECK(tw_class(MPI_Comm_free_keyval(&never)) == MPI_ERR_KEYVAL);
  CHECK(tw_class(MPI_Comm_free_keyval(&copy)) == MPI_ERR_KEYVAL); /* MPI_KEYVAL_INVALID */
  int type_key = MPI_KEYVAL_INVALID, win_key = MPI_KEYVAL_INVALID;
  MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &type_key, NULL);
  MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &win_key, NULL);
  int type_copy = type_key, win_copy = win_key;
  CHECK(MPI_Type_free_keyval(&type_key) == MPI_SUCCESS &&
        MPI_Type_free_keyval(&type_copy) == MPI_SUCCESS);
  CHECK(MPI_Win_free_keyval(&win_key) == MPI_SUCCESS &&
        MPI_Win_free_keyval(&win_copy) == MPI_SUCCESS);
  CHECK(tw_class(MPI_Type_free_keyval(&type_copy)) == MPI_ERR_KEYVAL);
  CHECK(tw_class(MPI_Win_free_keyval(&win_copy)) == MPI_ERR_KEYVAL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* The value of `key` in `info` ("" when absent). */
static const char* value_of(MPI_Info info, const char* key, char* buf) {
  int flag = 0;
  buf[0] = '\0';
  MPI_Info_get(info, key, MPI_MAX_INFO_VAL, buf, &flag);
  return flag ? buf : "";
}

static void info_hints(void) {
  char buf[MPI_MAX_INFO_VAL + 1];
  MPI_Info hints, used;
  MPI_Info_create(&hints);
  MPI_Info_set(hints, "mpi_assert_no_any_tag", "true");
  MPI_Comm dup, with;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  CHECK(MPI_Comm_set_info(dup, hints) == MPI_SUCCESS);
  CHECK(MPI_Comm_get_info(dup, &used) == MPI_SUCCESS);
  CHECK(strcmp(value_of(used, "mpi_assert_no_any_tag", buf), "true") == 0);
  MPI_Info_free(&used);
  MPI_Info other;
  MPI_Info_create(&other);
  MPI_Info_set(other, "tagwire_test", "yes");
  CHECK(MPI_Comm_dup_with_info(dup, other, &with) == MPI_SUCCESS);
  MPI_Comm_get_info(with, &used);
  CHECK(strcmp(value_of(used, "tagwire_test", buf), "yes") == 0);
  CHECK(strcmp(value_of(used, "mpi_assert_no_any_tag", buf), "") == 0); /* replaced */
  MPI_Info_free(&used);
  int r = -1;
  MPI_Comm_rank(with, &r);
  CHECK(r == rank); /* a duplicate */
  MPI_Comm_free(&with);
  /* MPI-4's nonblocking form: the same, once its request completes, and a
   * working communicator. */
  MPI_Request request;
  CHECK(MPI_Comm_idup_with_info(dup, other, &with, &request) == MPI_SUCCESS);
  CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE) == MPI_SUCCESS);
  MPI_Comm_get_info(with, &used);
  CHECK(strcmp(value_of(used, "tagwire_test", buf), "yes") == 0);
  MPI_Info_free(&used);
  int sum = 0, one = 1;
  CHECK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, with) == MPI_SUCCESS && sum == size);
  MPI_Comm_free(&with);
  MPI_Comm_free(&dup);
  /* A window gives back its creation hints and those set later. */
  int word = 0;
  MPI_Win win;
  MPI_Win_create(&word, sizeof word, 1, other, MPI_COMM_WORLD, &win);
  CHECK(MPI_Win_get_info(win, &used) == MPI_SUCCESS);
  CHECK(strcmp(value_of(used, "tagwire_test", buf), "yes") == 0);
  MPI_Info_free(&used);
  CHECK(MPI_Win_set_info(win, hints) == MPI_SUCCESS);
  MPI_Win_get_info(win, &used);
  CHECK(strcmp(value_of(used, "mpi_assert_no_any_tag", buf), "true") == 0);
  MPI_Info_free(&used);
  MPI_Win_free(&win);
  MPI_Info_free(&other);
  MPI_Info_free(&hints);
}

static void conversions_and_classes(void) {
  CHECK(MPI_Pcontrol(1) == MPI_SUCCESS && MPI_Pcontrol(0, "ignored") == MPI_SUCCESS);
  MPI_Status st, back;
  st.MPI_SOURCE = 3;
  st.MPI_TAG = 9;
  st.MPI_ERROR = MPI_ERR_TRUNCATE;
  MPI_Status_set_elements_x(&st, MPI_BYTE, (MPI_Count)5 << 33);
  MPI_Status_set_cancelled(&st, 1);
  MPI_Fint f[MPI_F_STATUS_SIZE];
  CHECK(MPI_Status_c2f(&st, f) == MPI_SUCCESS && MPI_Status_f2c(f, &back) == MPI_SUCCESS);
  MPI_Count n = 0;
  int cancelled = 0;
  MPI_Get_elements_x(&back, MPI_BYTE, &n);
  MPI_Test_cancelled(&back, &cancelled);
  CHECK(back.MPI_SOURCE == 3 && back.MPI_TAG == 9 && back.MPI_ERROR == MPI_ERR_TRUNCATE &&
        n == (MPI_Count)5 << 33 && cancelled);
  /* Past an int, the int calls say MPI_UNDEFINED (the _x one has it). */
  int big_elements = 0, big_count = 0;
  MPI_Get_elements(&back, MPI_BYTE, &big_elements);
  MPI_Get_count(&back, MPI_BYTE, &big_count);
  CHECK(big_elements == MPI_UNDEFINED && big_count == MPI_UNDEFINED);
  /* The combiners of Fortran's MPI-1 calls exist, apart from the rest. */
  CHECK(MPI_COMBINER_HVECTOR_INTEGER != MPI_COMBINER_HVECTOR &&
        MPI_COMBINER_HINDEXED_INTEGER != MPI_COMBINER_HINDEXED &&
        MPI_COMBINER_STRUCT_INTEGER != MPI_COMBINER_STRUCT);
  CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN);
  /* Set_elements counts predefined elements, as Get_elements does: 6 ints
   * of a type of 4 ints (and a char-int-double struct, cut after its int)
   * are one whole copy and a part. */
  MPI_Datatype four_ints, mixed;
  MPI_Type_contiguous(4, MPI_INT, &four_ints);
  MPI_Type_commit(&four_ints);
  int lengths[] = {1, 1, 1};
  MPI_Aint at[] = {0, 4, 8};
  MPI_Datatype members[] = {MPI_CHAR, MPI_INT, MPI_DOUBLE};
  MPI_Type_create_struct(3, lengths, at, members, &mixed);
  MPI_Type_commit(&mixed);
  int elements = 0, count = 0;
  MPI_Status_set_elements(&st, four_ints, 6);
  MPI_Get_elements(&st, four_ints, &elements);
  MPI_Get_count(&st, four_ints, &count);
  CHECK(elements == 6 && count == MPI_UNDEFINED);
  MPI_Status_set_elements(&st, four_ints, 8);
  MPI_Get_count(&st, four_ints, &count);
  CHECK(count == 2);
  MPI_Status_set_elements(&st, mixed, 5);
  MPI_Get_elements(&st, mixed, &elements);
  MPI_Get_count(&st, mixed, &count);
  CHECK(elements == 5 && count == MPI_UNDEFINED);
  MPI_Get_elements(&st, MPI_BYTE, &elements);
  CHECK(elements == 13 + 1 + 4); /* one struct (char, int, double) + char + int */
  MPI_Type_free(&four_ints);
  MPI_Type_free(&mixed);
  const int classes[] = {MPI_ERR_ACCESS,        MPI_ERR_ASSERT,
                         MPI_ERR_BASE,          MPI_ERR_DISP,
                         MPI_ERR_LOCKTYPE,      MPI_ERR_RMA_CONFLICT,
                         MPI_ERR_SIZE,          MPI_ERR_NOT_SAME,
                         MPI_ERR_NAME,          MPI_ERR_UNSUPPORTED_DATAREP,
                         MPI_T_ERR_INVALID_ITEM};
  for (unsigned i = 0; i < sizeof classes / sizeof classes[0]; ++i) {
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, cls = -1;
    CHECK(MPI_Error_class(classes[i], &cls) == MPI_SUCCESS && cls == classes[i]);
    MPI_Error_string(classes[i], text, &len);
    CHECK(len > 0 && strcmp(text, "unknown error") != 0);
    for (unsigned j = 0; j < i; ++j) CHECK(classes[i] != classes[j]);
    CHECK(classes[i] > MPI_SUCCESS && classes[i] <= MPI_ERR_LASTCODE);
  }
}

static void tool_categories(void) {
  int provided = 0, num = 0, cvars = 0, pvars = 0, in_cat_c = -1, in_cat_p = -1, sub = -1;
  MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
  CHECK(MPI_T_category_get_num(&num) == MPI_SUCCESS && num == 1);
  MPI_T_cvar_get_num(&cvars);
  MPI_T_pvar_get_num(&pvars);
  char name[64], desc[256];
  int name_len = sizeof name, desc_len = sizeof desc;
  CHECK(MPI_T_category_get_info(0, name, &name_len, desc, &desc_len, &in_cat_c, &in_cat_p, &sub) ==
        MPI_SUCCESS);
  CHECK(strcmp(name, "tagwire") == 0 && in_cat_c == cvars && in_cat_p == pvars && sub == 0);
  int index = -1;
  CHECK(MPI_T_category_get_index("tagwire", &index) == MPI_SUCCESS && index == 0);
  CHECK(MPI_T_category_get_index("nope", &index) == MPI_T_ERR_INVALID_NAME);
  int first[2] = {-1, -1};
  CHECK(MPI_T_category_get_cvars(0, 2, first) == MPI_SUCCESS && first[0] == 0 &&
        (cvars < 2 || first[1] == 1));
  CHECK(MPI_T_category_get_info(1, name, &name_len, desc, &desc_len, &in_cat_c, &in_cat_p, &sub) ==
        MPI_T_ERR_INVALID_INDEX);
  int stamp = -1;
  CHECK(MPI_T_category_changed(&stamp) == MPI_SUCCESS && stamp == 0);
  int items = 0;
  CHECK(MPI_T_enum_get_info(MPI_T_ENUM_NULL, &items, name, &name_len) == MPI_T_ERR_INVALID_HANDLE);
  MPI_T_pvar_session session;
  MPI_T_pvar_handle handle;
  int count = 0;
  unsigned long long v = 0;
  MPI_T_pvar_session_create(&session);
  MPI_T_pvar_handle_alloc(session, 0, NULL, &handle, &count);
  CHECK(MPI_T_pvar_readreset(session, handle, &v) == MPI_T_ERR_PVAR_NO_WRITE);
  MPI_T_pvar_handle_free(session, &handle);
  MPI_T_pvar_session_free(&session);
  MPI_T_finalize();
}

static void disjoint_create(void) {
  MPI_Group world, mine;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int ranks[64], n = 0;
  for (int r = rank % 2; r < size && n < 64; r += 2) ranks[n++] = r;
  MPI_Group_incl(world, n, ranks, &mine); /* evens or odds: each rank its own half */
  MPI_Comm half;
  CHECK(MPI_Comm_create(MPI_COMM_WORLD, mine, &half) == MPI_SUCCESS && half != MPI_COMM_NULL);
  int hs = 0, hr = -1;
  MPI_Comm_size(half, &hs);
  MPI_Comm_rank(half, &hr);
  CHECK(hs == n && hr == rank / 2);
  int sum = 0, one = rank;
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, half);
  int expect = 0;
  for (int i = 0; i < n; ++i) expect += ranks[i];
  CHECK(sum == expect);
  MPI_Comm_free(&half);
  MPI_Group_free(&mine);
  /* Comm_create_group with one tag, back to back, over groups that change:
   * a rank done with one call may already send for the next. */
  for (int round = 0; round < 40; ++round) {
    n = 0;
    for (int r = 0; r < size; ++r) {
      if (((r * 7 + round * 3) % 5) < 3 || r == round % size) ranks[n++] = r;
    }
    int in = 0;
    for (int i = 0; i < n; ++i) in = in || ranks[i] == rank;
    if (!in) continue;
    MPI_Group g;
    MPI_Group_incl(world, n, ranks, &g);
    MPI_Comm c;
    CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, g, 0, &c) == MPI_SUCCESS);
    int cs = 0;
    MPI_Comm_size(c, &cs);
    CHECK(cs == n);
    MPI_Barrier(c);
    MPI_Comm_free(&c);
    MPI_Group_free(&g);
  }
  MPI_Group_free(&world);
}

static void status_error_kept(void) {
  int out = rank, in = -1;
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  MPI_Status st;
  st.MPI_ERROR = MPI_ERR_DIMS; /* the program's own value */
  MPI_Sendrecv(&out, 1, MPI_INT, right, 5, &in, 1, MPI_INT, left, 5, MPI_COMM_WORLD, &st);
  CHECK(in == left && st.MPI_ERROR == MPI_ERR_DIMS);
  MPI_Request r;
  MPI_Isend(&out, 1, MPI_INT, right, 6, MPI_COMM_WORLD, &r);
  MPI_Message m;
  st.MPI_ERROR = MPI_ERR_TOPOLOGY;
  MPI_Mprobe(left, 6, MPI_COMM_WORLD, &m, &st);
  CHECK(st.MPI_ERROR == MPI_ERR_TOPOLOGY);
  MPI_Mrecv(&in, 1, MPI_INT, &m, &st);
  CHECK(in == left && st.MPI_ERROR == MPI_ERR_TOPOLOGY && m == MPI_MESSAGE_NULL);
  MPI_Wait(&r, &st);
  CHECK(st.MPI_ERROR == MPI_ERR_TOPOLOGY);
  /* The empty status is all set, its MPI_ERROR included. */
  int flag = 0;
  MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
  CHECK(flag && st.MPI_SOURCE == MPI_ANY_SOURCE && st.MPI_TAG == MPI_ANY_TAG &&
        st.MPI_ERROR == MPI_SUCCESS);
}

static void negative_extent(void) {
  /* { (LB,6), 4 bytes at 0, (UB,-3) }: extent -9; three in a row span
   * lb -12 .. ub -3 (MPICH's lbub). */
  MPI_Datatype four, neg, three;
  MPI_Type_contiguous(4, MPI_BYTE, &four);
  CHECK(MPI_Type_create_resized(four, 6, -9, &neg) == MPI_SUCCESS);
  MPI_Aint lb = 0, extent = 0;
  MPI_Type_get_extent(neg, &lb, &extent);
  CHECK(lb == 6 && extent == -9);
  MPI_Type_contiguous(3, neg, &three);
  MPI_Type_get_extent(three, &lb, &extent);
  CHECK(lb == -12 && extent == 9);
  /* Packed in element order: element k at k * -9. */
  MPI_Type_commit(&neg);
  char buf[40], packed[12];
  for (int i = 0; i < 40; ++i) buf[i] = (char)i;
  int pos = 0;
  MPI_Pack(buf + 20, 3, neg, packed, sizeof packed, &pos, MPI_COMM_WORLD);
  CHECK(pos == 12 && packed[0] == 20 && packed[4] == 11 && packed[8] == 2);
  MPI_Type_free(&three);
  MPI_Type_free(&neg);
  MPI_Type_free(&four);
}

static void complex_and_others(void) {
  int sz = 0;
  MPI_Type_size(MPI_C_FLOAT_COMPLEX, &sz);
  CHECK(sz == (int)sizeof(float _Complex));
  MPI_Type_size(MPI_C_LONG_DOUBLE_COMPLEX, &sz);
  CHECK(sz == (int)sizeof(long double _Complex));
  CHECK(MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX);
  char name[MPI_MAX_OBJECT_NAME];
  int len = 0;
  MPI_Type_get_name(MPI_C_DOUBLE_COMPLEX, name, &len);
  CHECK(strcmp(name, "MPI_C_DOUBLE_COMPLEX") == 0);
  /* Sum and product of (rank + 1) + i over the ranks. */
  double _Complex mine = (double)(rank + 1) + 1.0 * I, sum = 0, prod = 0;
  CHECK(MPI_Allreduce(&mine, &sum, 1, MPI_C_DOUBLE_COMPLEX, MPI_SUM, MPI_COMM_WORLD) ==
        MPI_SUCCESS);
  MPI_Allreduce(&mine, &prod, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
  double _Complex want_prod = 1;
  for (int r = 0; r < size; ++r) want_prod *= (double)(r + 1) + 1.0 * I;
  CHECK(creal(sum) == size * (size + 1) / 2.0 && cimag(sum) == size);
  CHECK(creal(prod) == creal(want_prod) && cimag(prod) == cimag(want_prod));
  float _Complex fin[2] = {1.0f + 2.0f * I, -1.0f}, fout[2];
  MPI_Allreduce(fin, fout, 2, MPI_CXX_FLOAT_COMPLEX, MPI_SUM, MPI_COMM_WORLD);
  CHECK(crealf(fout[0]) == size && cimagf(fout[0]) == 2.0f * size && crealf(fout[1]) == -size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  CHECK(tw_class(MPI_Allreduce(&mine, &sum, 1, MPI_C_DOUBLE_COMPLEX, MPI_MAX, MPI_COMM_WORLD)) ==
        MPI_ERR_OP);
  MPI_Datatype t = MPI_DATATYPE_NULL;
  CHECK(tw_class(MPI_Type_match_size(MPI_TYPECLASS_REAL, 3, &t)) == MPI_ERR_ARG);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
  MPI_Offset off = (MPI_Offset)1 << 40, total = 0;
  MPI_Allreduce(&off, &total, 1, MPI_OFFSET, MPI_SUM, MPI_COMM_WORLD);
  CHECK(total == ((MPI_Offset)size << 40));
  _Bool yes = rank >= 0, all = 0;
  MPI_Allreduce(&yes, &all, 1, MPI_CXX_BOOL, MPI_LAND, MPI_COMM_WORLD);
  CHECK(all == 1);
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_REAL, sizeof(double), &t) == MPI_SUCCESS &&
        t == MPI_DOUBLE);
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t) == MPI_SUCCESS && t == MPI_INT32_T);
  CHECK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, sizeof(float _Complex), &t) == MPI_SUCCESS &&
        t == MPI_C_FLOAT_COMPLEX);
  /* An accumulate of complex values: every rank adds 1 + i at rank 0. */
  float _Complex cell = 0, one = 1.0f + 1.0f * I;
  MPI_Win win;
  MPI_Win_create(&cell, sizeof cell, sizeof cell, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  MPI_Accumulate(&one, 1, MPI_C_FLOAT_COMPLEX, 0, 0, 1, MPI_C_FLOAT_COMPLEX, MPI_SUM, win);
  MPI_Win_fence(0, win);
  if (rank == 0) CHECK(crealf(cell) == size && cimagf(cell) == size);
  MPI_Win_free(&win);
}

/* MPI_Comm_disconnect on a communicator of this job: messages completed
 * on it, an inactive persistent request on it that outlives it, the
 * handle set to MPI_COMM_NULL; never MPI_COMM_WORLD or MPI_COMM_SELF. */
static void disconnect(void) {
  MPI_Comm comm;
  MPI_Comm_dup(MPI_COMM_WORLD, &comm);
  int from = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 3, &from, 1, MPI_INT, (rank + size - 1) % size,
               3, comm, MPI_STATUS_IGNORE);
  CHECK(from == (rank + size - 1) % size);
  MPI_Request idle;
  MPI_Recv_init(&from, 1, MPI_INT, 0, 4, comm, &idle);
  CHECK(MPI_Comm_disconnect(&comm) == MPI_SUCCESS && comm == MPI_COMM_NULL);
  CHECK(MPI_Request_free(&idle) == MPI_SUCCESS && idle == MPI_REQUEST_NULL);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm world = MPI_COMM_WORLD;
  CHECK(tw_class(MPI_Comm_disconnect(&world)) == MPI_ERR_COMM && world == MPI_COMM_WORLD);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  type_attributes();
  mpi1_attributes();
  info_hints();
  conversions_and_classes();
  tool_categories();
  disjoint_create();
  status_error_kept();
  negative_extent();
  complex_and_others();
  disconnect();
  return tw_finish("mpi31_calls") == 0 ? 0 : 1;
}
