/* What the C MPI tests share: CHECK counts passes and failures and prints
 * each failure with the rank and line. */
#ifndef TAGWIRE_TESTS_MPI_CHECK_H
#define TAGWIRE_TESTS_MPI_CHECK_H

#include <stdio.h>

static int passed, failed, rank, size;

#define CHECK(cond)                                                                              \
  do {                                                                                           \
    if (cond) {                                                                                  \
      ++passed;                                                                                  \
    } else {                                                                                     \
      ++failed;                                                                                  \
      fprintf(stderr, "[rank %d] check failed at %s:%d: %s\n", rank, __FILE__, __LINE__, #cond); \
    }                                                                                            \
  } while (0)

#endif
