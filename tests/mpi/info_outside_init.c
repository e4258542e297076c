/* MPI_Info before MPI_Init and after MPI_Finalize (MPI-4 allows both, and
 * MPICH's info_no_init counts on it), MPI_INFO_ENV and MPI-4's
 * MPI_Info_create_env. One rank. No check.h: its tw_finish needs MPI
 * running. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static int failed;
#define EXPECT(cond)                                                     \
  do {                                                                   \
    if (!(cond)) {                                                       \
      ++failed;                                                          \
      fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #cond); \
    }                                                                    \
  } while (0)

static int has(MPI_Info info, const char* key, const char* want) {
  char value[MPI_MAX_INFO_VAL + 1];
  int flag = 0;
  MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag);
  return flag && (want == NULL || strcmp(value, want) == 0);
}

int main(int argc, char** argv) {
  MPI_Info early, env, made;
  EXPECT(MPI_Info_create(&early) == MPI_SUCCESS);
  EXPECT(MPI_Info_set(early, "key1", "value1") == MPI_SUCCESS);
  char* fake[] = {"/bin/prog", "-x", "7", NULL};
  EXPECT(MPI_Info_create_env(3, fake, &made) == MPI_SUCCESS);
  EXPECT(has(made, "command", "/bin/prog") && has(made, "argv", "-x 7"));
  EXPECT(has(made, "wdir", NULL) && has(made, "host", NULL));
  MPI_Info_free(&made);
  /* Without argv: this process's own arguments, as MPI_INFO_ENV has them. */
  EXPECT(MPI_Info_create_env(0, NULL, &env) == MPI_SUCCESS);
  EXPECT(has(env, "command", argv[0]) && has(MPI_INFO_ENV, "command", argv[0]));
  MPI_Info_free(&env);
  MPI_Init(&argc, &argv);
  EXPECT(has(early, "key1", "value1"));
  EXPECT(MPI_Info_set(early, "key2", "value2") == MPI_SUCCESS);
  int nkeys = 0;
  MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys);
  EXPECT(nkeys == 4);
  MPI_Finalize();
  EXPECT(has(early, "key2", "value2"));
  EXPECT(MPI_Info_delete(early, "key1") == MPI_SUCCESS && !has(early, "key1", NULL));
  EXPECT(MPI_Info_free(&early) == MPI_SUCCESS && early == MPI_INFO_NULL);
  printf("info_outside_init: %s\n", failed == 0 ? "all checks passed" : "FAILED");
  return failed == 0 ? 0 : 1;
}
