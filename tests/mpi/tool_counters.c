/* MPI_T control variables (the TAGWIRE_* settings) and performance
 * variables (Tagwire's counters) as a tool sees them.
 * Rank 1 receives N messages into posted receives, one more into a posted
 * receive, and N that arrived before their receives; the counters must
 * move by exactly that much, the NIC must have matched none (no transport
 * here hands it receives), and every misuse must give its MPI_T error. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

enum { N = 12 };

static unsigned long long read_pvar(MPI_T_pvar_session session, const char* name) {
  int index = -1;
  CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &index) == MPI_SUCCESS);
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  int count = 0;
  CHECK(MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count) == MPI_SUCCESS);
  CHECK(count == 1);
  unsigned long long value = ~0ULL;
  CHECK(MPI_T_pvar_read(session, handle, &value) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_handle_free(session, &handle) == MPI_SUCCESS);
  CHECK(handle == MPI_T_PVAR_HANDLE_NULL);
  return value;
}

/* A control variable's value, as a string. */
static void read_cvar(const char* name, char* value) {
  int index = -1, count = 0;
  value[0] = '\0';
  CHECK(MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS);
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  CHECK(MPI_T_cvar_handle_alloc(index, NULL, &handle, &count) == MPI_SUCCESS);
  CHECK(count >= 64);
  CHECK(MPI_T_cvar_read(handle, value) == MPI_SUCCESS);
  CHECK(MPI_T_cvar_write(handle, value) == MPI_T_ERR_CVAR_SET_NEVER);
  CHECK(MPI_T_cvar_handle_free(&handle) == MPI_SUCCESS);
  CHECK(handle == MPI_T_CVAR_HANDLE_NULL);
  CHECK(MPI_T_cvar_read(handle, value) == MPI_T_ERR_INVALID_HANDLE || value[0] != '\0');
}

/* Before MPI_Init: the settings are listed with what the environment says. */
static void control_variables_before_init(void) {
  int num = 0;
  CHECK(MPI_T_cvar_get_num(&num) == MPI_SUCCESS);
  CHECK(num >= 11); /* every setting of a build without verbs (tagwire-info --settings) */
  for (int i = 0; i < num; ++i) {
    char name[64], desc[256];
    int name_len = sizeof name, desc_len = sizeof desc, verbosity, bind, scope;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    CHECK(MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, desc, &desc_len,
                              &bind, &scope) == MPI_SUCCESS);
    CHECK(strncmp(name, "tagwire_", 8) == 0 && desc_len > 1);
    CHECK(type == MPI_CHAR && scope == MPI_T_SCOPE_READONLY && bind == MPI_T_BIND_NO_OBJECT);
  }
  CHECK(MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) ==
        MPI_T_ERR_INVALID_INDEX);
  int index = -1;
  CHECK(MPI_T_cvar_get_index("TAGWIRE_TRANSPORT", &index) == MPI_T_ERR_INVALID_NAME);
  MPI_T_cvar_handle handle = MPI_T_CVAR_HANDLE_NULL;
  int count = 0;
  CHECK(MPI_T_cvar_handle_alloc(num, NULL, &handle, &count) == MPI_T_ERR_INVALID_INDEX);
  /* The transport as the environment gives it (the launcher's test env). */
  char value[256], expected[256] = "auto";
  const char* env = getenv("TAGWIRE_TRANSPORT");
  if (env != NULL && env[0] != '\0') {
    size_t i = 0;
    for (; env[i] != '\0' && i + 1 < sizeof expected; ++i) expected[i] = (char)tolower(env[i]);
    expected[i] = '\0';
  }
  read_cvar("tagwire_transport", value);
  CHECK(strcmp(value, expected) == 0);
}

/* While MPI runs, the eager threshold read is the one in effect: a message
 * of exactly that size goes eagerly, one byte more by rendezvous. */
static void threshold_in_effect(MPI_T_pvar_session session);
static void receives_without_request(MPI_T_pvar_session session);

/* Before MPI_Init: the variables are listed and read 0. */
static void before_init(void) {
  int provided = -1;
  CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS);
  CHECK(provided == MPI_THREAD_SINGLE);
  int num = 0;
  CHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS);
  CHECK(num >= 20);
  int found_nic = 0;
  for (int i = 0; i < num; ++i) {
    char name[64];
    char desc[256];
    int name_len = sizeof name, desc_len = sizeof desc;
    int verbosity, var_class, bind, readonly, continuous, atomic;
    MPI_Datatype type;
    MPI_T_enum enumtype;
    CHECK(MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &var_class, &type, &enumtype, desc,
                              &desc_len, &bind, &readonly, &continuous, &atomic) == MPI_SUCCESS);
    CHECK(name_len == (int)strlen(name) + 1);
    CHECK(desc_len > 1);
    CHECK(var_class == MPI_T_PVAR_CLASS_COUNTER && type == MPI_UNSIGNED_LONG_LONG);
    CHECK(readonly == 1 && continuous == 1 && bind == MPI_T_BIND_NO_OBJECT);
    if (strcmp(name, "tagwire_matched_by_nic") == 0) found_nic = 1;
  }
  CHECK(found_nic);
  /* A short buffer is cut with its terminator; the length says what it needs. */
  char shortname[5];
  int shortlen = sizeof shortname;
  CHECK(MPI_T_pvar_get_info(0, shortname, &shortlen, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL, NULL) == MPI_SUCCESS);
  CHECK(strlen(shortname) == 4 && shortlen > 5);

  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  CHECK(read_pvar(session, "tagwire_matched_by_software") == 0);
  CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS);
}

/* Every misuse gets its own error and changes nothing. */
static void misuse(void) {
  int index = -1;
  CHECK(MPI_T_pvar_get_index("no_such_counter", MPI_T_PVAR_CLASS_COUNTER, &index) ==
        MPI_T_ERR_INVALID_NAME);
  CHECK(MPI_T_pvar_get_index("tagwire_matched_by_nic", MPI_T_PVAR_CLASS_TIMER, &index) ==
        MPI_T_ERR_INVALID_NAME);
  int num = 0;
  CHECK(MPI_T_pvar_get_num(&num) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL) == MPI_T_ERR_INVALID_INDEX);
  CHECK(MPI_T_pvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                            NULL) == MPI_T_ERR_INVALID_INDEX);
  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  MPI_T_pvar_handle handle = MPI_T_PVAR_HANDLE_NULL;
  int count = 0;
  CHECK(MPI_T_pvar_handle_alloc(session, num, NULL, &handle, &count) == MPI_T_ERR_INVALID_INDEX);
  CHECK(MPI_T_pvar_handle_alloc(session + 1000, 0, NULL, &handle, &count) ==
        MPI_T_ERR_INVALID_SESSION);
  CHECK(MPI_T_pvar_handle_alloc(session, 0, NULL, &handle, &count) == MPI_SUCCESS);
  unsigned long long value = 0;
  CHECK(MPI_T_pvar_start(session, handle) == MPI_T_ERR_PVAR_NO_STARTSTOP);
  CHECK(MPI_T_pvar_stop(session, handle) == MPI_T_ERR_PVAR_NO_STARTSTOP);
  CHECK(MPI_T_pvar_write(session, handle, &value) == MPI_T_ERR_PVAR_NO_WRITE);
  CHECK(MPI_T_pvar_reset(session, handle) == MPI_T_ERR_PVAR_NO_WRITE);
  CHECK(MPI_T_pvar_read(session, handle + 1000, &value) == MPI_T_ERR_INVALID_HANDLE);
  CHECK(MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES, &value) == MPI_T_ERR_INVALID_HANDLE);
  MPI_T_pvar_session other = MPI_T_PVAR_SESSION_NULL;
  CHECK(MPI_T_pvar_session_create(&other) == MPI_SUCCESS);
  CHECK(MPI_T_pvar_read(other, handle, &value) == MPI_T_ERR_INVALID_HANDLE);
  CHECK(MPI_T_pvar_session_free(&other) == MPI_SUCCESS);
  /* Freeing the session frees its handles. */
  MPI_T_pvar_session freed = session;
  CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS);
  CHECK(session == MPI_T_PVAR_SESSION_NULL);
  CHECK(MPI_T_pvar_session_free(&freed) == MPI_T_ERR_INVALID_SESSION);
  CHECK(MPI_T_pvar_read(freed, handle, &value) == MPI_T_ERR_INVALID_SESSION);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(MPI_T_ERR_PVAR_NO_WRITE, text, &len);
  CHECK(strstr(text, "read-only") != NULL);
}

int main(int argc, char** argv) {
  before_init();
  control_variables_before_init();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  misuse();

  MPI_T_pvar_session session = MPI_T_PVAR_SESSION_NULL;
  CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  /* Nothing else in flight between the two readings on rank 0 and 1: the
   * go message is the only traffic from rank 1 to rank 0, the 2N+1 data
   * messages the only traffic the other way, and every rank waits for
   * rank 1's word that it has read before it sends anything more. */
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long software0 = read_pvar(session, "tagwire_matched_by_software");
  const unsigned long long nic0 = read_pvar(session, "tagwire_matched_by_nic");
  const unsigned long long unexpected0 = read_pvar(session, "tagwire_unexpected_messages");
  const unsigned long long eager0 = read_pvar(session, "tagwire_eager_sent");
  int data[2 * N + 1];
  if (rank == 1) {
    MPI_Request requests[N + 1];
    for (int i = 0; i < N; ++i) MPI_Irecv(&data[i], 1, MPI_INT, 0, 5, MPI_COMM_WORLD, &requests[i]);
    MPI_Irecv(&data[2 * N], 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &requests[N]);
    MPI_Send(NULL, 0, MPI_INT, 0, 1, MPI_COMM_WORLD);
    MPI_Waitall(N + 1, requests, MPI_STATUSES_IGNORE);
    /* Tag 7 came last on the ordered channel: the tag-6 ones are here, unexpected. */
    for (int i = 0; i < N; ++i)
      MPI_Recv(&data[N + i], 1, MPI_INT, 0, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * N + 1; ++i) CHECK(data[i] == i);
    CHECK(read_pvar(session, "tagwire_matched_by_software") - software0 == 2 * N + 1);
    CHECK(read_pvar(session, "tagwire_unexpected_messages") - unexpected0 == N);
    CHECK(read_pvar(session, "tagwire_matched_by_nic") - nic0 == 0);
    /* Only now may any rank send anything else (a collective's message
     * would land here unexpected before the readings above). */
    for (int other = 0; other < size; ++other)
      if (other != 1) MPI_Send(NULL, 0, MPI_INT, other, 2, MPI_COMM_WORLD);
  } else if (rank == 0) {
    MPI_Recv(NULL, 0, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 2 * N + 1; ++i) data[i] = i;
    for (int i = 0; i < N; ++i) MPI_Send(&data[i], 1, MPI_INT, 1, 5, MPI_COMM_WORLD);
    for (int i = 0; i < N; ++i) MPI_Send(&data[N + i], 1, MPI_INT, 1, 6, MPI_COMM_WORLD);
    MPI_Send(&data[2 * N], 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    CHECK(read_pvar(session, "tagwire_eager_sent") - eager0 == 2 * N + 1);
    CHECK(read_pvar(session, "tagwire_matched_by_software") - software0 == 1); /* the go */
    MPI_Recv(NULL, 0, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    MPI_Recv(NULL, 0, MPI_INT, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  threshold_in_effect(session);
  receives_without_request(session);
  CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS);

  /* MPI_T outlives MPI_Finalize and reads the final values. */
  int total_failed = 0;
  const int failed_before = failed;
  MPI_Allreduce(&failed, &total_failed, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS);
  if (rank == 1) CHECK(read_pvar(session, "tagwire_matched_by_software") >= software0 + 2 * N + 1);
  CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS);
  CHECK(MPI_T_finalize() == MPI_SUCCESS);
  int num = 0;
  CHECK(MPI_T_pvar_get_num(&num) == MPI_T_ERR_NOT_INITIALIZED);
  CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED);
  total_failed += failed - failed_before; /* this rank's checks after the reduction */
  if (rank == 0)
    printf("tool_counters: %d checks passed on rank 0, %d failed\n", passed, total_failed);
  return total_failed != 0;
}

static void threshold_in_effect(MPI_T_pvar_session session) {
  char value[256];
  read_cvar("tagwire_eager_threshold", value);
  const long threshold = atol(value);
  CHECK(threshold > 0 && threshold <= (1L << 30));
  if (threshold <= 0 || threshold > (1L << 30)) return;
  char* buffer = calloc((size_t)threshold + 1, 1);
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long eager0 = read_pvar(session, "tagwire_eager_sent");
  const unsigned long long rendezvous0 = read_pvar(session, "tagwire_rendezvous_sent");
  if (rank == 0) {
    MPI_Send(buffer, (int)threshold, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
    MPI_Send(buffer, (int)threshold + 1, MPI_BYTE, 1, 9, MPI_COMM_WORLD);
    CHECK(read_pvar(session, "tagwire_eager_sent") - eager0 == 1);
    CHECK(read_pvar(session, "tagwire_rendezvous_sent") - rendezvous0 == 1);
  } else if (rank == 1) {
    MPI_Recv(buffer, (int)threshold + 1, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(buffer, (int)threshold + 1, MPI_BYTE, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  free(buffer);
}

/* A blocking MPI_Recv with nothing else posted takes an eager message
 * without a request (src/engine/unnamed_receive.h); one with a receive
 * posted before it does not, and the earlier receive gets the first
 * message. Rank 1 receives from rank 0 in a ping-pong, so that it is
 * almost always waiting when the message comes: at least half of the
 * rounds must count (a round whose message arrived first, taken by the
 * cancel agent while rank 1 was descheduled, is served by a request). */
static void receives_without_request(MPI_T_pvar_session session) {
  enum { kRounds = 20 };
  MPI_Barrier(MPI_COMM_WORLD);
  const unsigned long long unnamed0 = read_pvar(session, "tagwire_receives_unnamed");
  const unsigned long long software0 = read_pvar(session, "tagwire_matched_by_software");
  int word = 0, first = -1, second = -1;
  if (rank == 0) {
    for (int i = 0; i < kRounds; ++i) {
      MPI_Recv(&word, 1, MPI_INT, 1, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      word = i;
      MPI_Send(&word, 1, MPI_INT, 1, 21, MPI_COMM_WORLD);
    }
    MPI_Recv(&word, 1, MPI_INT, 1, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    word = 100;
    MPI_Send(&word, 1, MPI_INT, 1, 22, MPI_COMM_WORLD);
    word = 200;
    MPI_Send(&word, 1, MPI_INT, 1, 23, MPI_COMM_WORLD);
  } else if (rank == 1) {
    int in_order = 1;
    for (int i = 0; i < kRounds; ++i) {
      MPI_Send(&word, 1, MPI_INT, 0, 20, MPI_COMM_WORLD);
      MPI_Recv(&word, 1, MPI_INT, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (word != i) in_order = 0;
    }
    CHECK(in_order);
    const unsigned long long unnamed = read_pvar(session, "tagwire_receives_unnamed") - unnamed0;
    CHECK(unnamed >= kRounds / 2 && unnamed <= kRounds);
    /* Counted as software's matches like any other receive. */
    CHECK(read_pvar(session, "tagwire_matched_by_software") - software0 == kRounds);
    /* A receive posted first takes the first message, the blocking one
     * after it the second, whatever their patterns allow. */
    MPI_Request posted;
    MPI_Status st;
    MPI_Irecv(&first, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &posted);
    const unsigned long long before = read_pvar(session, "tagwire_receives_unnamed");
    MPI_Send(&word, 1, MPI_INT, 0, 20, MPI_COMM_WORLD);
    CHECK(MPI_Recv(&second, 1, MPI_INT, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    CHECK(MPI_Wait(&posted, MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(first == 100 && second == 200 && st.MPI_TAG == 23 && st.MPI_SOURCE == 0);
    CHECK(read_pvar(session, "tagwire_receives_unnamed") == before);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}
