# The shell tests' assertion, sourced: check NAME EXPECTED ACTUAL counts a
# pass when ACTUAL is EXPECTED, and otherwise prints the difference and
# counts a failure. The test ends with its "N passed, N failed" line and
# exits non-zero on any failure.
passes=0
failures=0
check() {  # check NAME EXPECTED ACTUAL
  if [[ "$2" == "$3" ]]; then
    passes=$((passes + 1))
  else
    echo "FAIL: $1: expected '$2', got '$3'"
    failures=$((failures + 1))
  fi
}

source "$(dirname "${BASH_SOURCE[0]}")/ranks_failed.sh"
