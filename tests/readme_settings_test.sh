#!/usr/bin/env bash
# README's settings table is what the code declares: the block between its
# settings markers must be `tagwire-info --markdown` (every row of the
# build's; all of them when the build has every transport).
# Usage: readme_settings_test.sh TAGWIRE_INFO README
set -uo pipefail
info=$1
readme=$2
block=$(sed -n '/^<!-- settings: tagwire-info --markdown -->$/,/^<!-- end settings -->$/p' "$readme" |
  sed '1d;$d')
table=$(env -u TAGWIRE_LOG_LEVEL "$info" --markdown) || exit 1
failures=0
while IFS= read -r row; do
  if ! grep -qxF -- "$row" <<<"$block"; then
    echo "FAIL: README's settings table lacks or differs on: $row"
    failures=$((failures + 1))
  fi
done <<<"$table"
if "$info" | grep -q '^  yes verbs transport' && [[ $(wc -l <<<"$block") != $(wc -l <<<"$table") ]]; then
  echo "FAIL: README's table has $(wc -l <<<"$block") lines, tagwire-info --markdown $(wc -l <<<"$table")"
  failures=$((failures + 1))
fi
((failures == 0)) && echo "README settings: the table is tagwire-info --markdown ($(wc -l <<<"$table") lines)"
exit $((failures > 0))
