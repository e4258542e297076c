#!/usr/bin/env bash
# The library's symbol table, as MPICH's: for every MPI_X that mpi.h
# declares, MPI_X is exported weak (W) and PMPI_X strong (T) at the same
# address. Usage: pmpi_symbols_test.sh LIBTAGWIRE_MPI PMPI_PY MPI_H
set -uo pipefail
lib=$1
names=$(python3 "$2" names "$3") || exit 1
symbols=$(nm -D --defined-only "$lib") || exit 1
# One pass over the table: a process per name and symbol kind (two awk runs
# for each of 400 names) took 6.7 s, and 30 s under ASan's larger table.
report=$(awk -v names="$names" '
  BEGIN { n = split(names, want, /[ \n]+/) }
  $2 == "W" && $3 ~ /^MPI_/ { weak[substr($3, 5)] = $1 }
  $2 == "T" && $3 ~ /^PMPI_/ { strong[substr($3, 6)] = $1 }
  END {
    count = 0; failures = 0
    for (i = 1; i <= n; ++i) {
      x = want[i]
      if (x == "") continue
      count++
      if (!(x in weak) || !(x in strong) || weak[x] != strong[x]) {
        printf "FAIL: MPI_%s weak at '\''%s'\'', PMPI_%s strong at '\''%s'\''\n", x, weak[x], x, strong[x]
        failures++
      }
    }
    printf "pmpi symbols: %d of %d MPI_ functions weak with a strong PMPI_ twin\n", count - failures, count
    exit !(count > 150 && failures == 0)
  }' <<<"$symbols")
status=$?
echo "$report"
exit "$status"
