#!/usr/bin/env bash
# The library's symbol table, as MPICH's: for every MPI_X that mpi.h
# declares, MPI_X is exported weak (W) and PMPI_X strong (T) at the same
# address. Usage: pmpi_symbols_test.sh LIBTAGWIRE_MPI PMPI_PY MPI_H
set -uo pipefail
lib=$1
names=$(python3 "$2" names "$3") || exit 1
symbols=$(nm -D --defined-only "$lib") || exit 1
failures=0
count=0
for x in $names; do
  count=$((count + 1))
  weak=$(awk -v n="MPI_$x" '$3 == n && $2 == "W" {print $1}' <<<"$symbols")
  strong=$(awk -v n="PMPI_$x" '$3 == n && $2 == "T" {print $1}' <<<"$symbols")
  if [[ -z $weak || -z $strong || $weak != "$strong" ]]; then
    echo "FAIL: MPI_$x weak at '${weak}', PMPI_$x strong at '${strong}'"
    failures=$((failures + 1))
  fi
done
echo "pmpi symbols: $((count - failures)) of $count MPI_ functions weak with a strong PMPI_ twin"
((count > 150 && failures == 0))
