#!/usr/bin/env bash
# Runs the README's test command (./test.sh) N times, each from a clean build, to show that the tests pass every
# time and not only most of the time; keeps each run's log and the reports of every test that failed.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() {
  cat <<'USAGE'
Usage: scripts/repeat-tests.sh N [--load] [--] [extra arguments for ./test.sh]

Runs ./test.sh (./mvnw -B verify) N times, each after ./mvnw -B -q clean, and prints one line per run (pass or
fail, how long it took, the tests that failed, read from the surefire/failsafe XML reports), then
"repeat-tests: P passed, F failed". Exits non-zero if any run failed.

  N        how many runs (a positive number)
  --load   keep one CPU busy for the whole time (a shell busy loop, stopped at the end), to show that the tests
           do not depend on how fast the machine is
  -h, --help  this text

Arguments after N that are not --load (or everything after --) go to ./test.sh, e.g. -pl integration-tests -am.
Each run's output is in repeat-tests-results/run-K/: test.log (and clean.log), and under reports/ the XML and text
reports of the test classes that failed. The folder is emptied when the script starts.
USAGE
}

RUNS=
LOAD=0
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --load) LOAD=1 ;;
    --) shift; EXTRA+=("$@"); break ;;
    *)
      if [ -z "$RUNS" ]; then
        RUNS=$1
      else
        EXTRA+=("$1")
      fi
      ;;
  esac
  shift
done
if ! [[ "$RUNS" =~ ^[1-9][0-9]*$ ]]; then
  echo "repeat-tests: give the number of runs first (a positive number); --help says more" >&2
  exit 2
fi

. scripts/jdk.sh

OUT=repeat-tests-results
rm -rf "$OUT"
mkdir -p "$OUT"

LOAD_PID=
stop_load() {
  if [ -n "$LOAD_PID" ]; then
    kill "$LOAD_PID" 2>/dev/null
    wait "$LOAD_PID" 2>/dev/null
    LOAD_PID=
  fi
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM
if [ "$LOAD" = 1 ]; then
  bash -c 'while :; do :; done' &
  LOAD_PID=$!
  echo "repeat-tests: one CPU kept busy by process $LOAD_PID"
fi

# Prints "class#method" for each failed or errored test case in the XML reports given as arguments.
failed_cases() {
  awk '
    /<testcase[ >]/ {
      name = ""; cls = ""
      if (match($0, / name="[^"]*"/)) name = substr($0, RSTART + 7, RLENGTH - 8)
      if (match($0, / classname="[^"]*"/)) cls = substr($0, RSTART + 12, RLENGTH - 13)
    }
    /<(failure|error)[ >\/]/ && cls != "" { print cls "#" name; cls = "" }
  ' "$@"
}

passed=0
failed=0
for ((k = 1; k <= RUNS; k++)); do
  dir=$OUT/run-$k
  mkdir -p "$dir"
  start=$(date +%s)
  if ./mvnw -B -q clean >"$dir/clean.log" 2>&1; then
    ./test.sh "${EXTRA[@]}" >"$dir/test.log" 2>&1
    rc=$?
  else
    rc=$?
    echo "(clean failed: see clean.log)" >"$dir/test.log"
  fi
  took=$(($(date +%s) - start))

  failures=()
  while IFS= read -r -d '' report; do
    cases=$(failed_cases "$report")
    [ -n "$cases" ] || continue
    while IFS= read -r c; do failures+=("$c"); done <<<"$cases"
    module=${report%%/target/*}
    module=${module#./}
    mkdir -p "$dir/reports/$module"
    base=${report%.xml}
    base=${base##*/TEST-}
    cp "$report" "$dir/reports/$module/"
    for extra in "${report%/*}/$base.txt" "${report%/*}/$base-output.txt"; do
      [ ! -f "$extra" ] || cp "$extra" "$dir/reports/$module/"
    done
  done < <(find . -path "./$OUT" -prune -o \( -path '*/target/surefire-reports/TEST-*.xml' \
             -o -path '*/target/failsafe-reports/TEST-*.xml' \) -print0 2>/dev/null)

  if [ "$rc" = 0 ] && [ ${#failures[@]} = 0 ]; then
    passed=$((passed + 1))
    echo "run $k/$RUNS: pass (${took} s)"
  else
    failed=$((failed + 1))
    if [ ${#failures[@]} -gt 0 ]; then
      detail="failing: $(IFS=,; echo "${failures[*]}" | sed 's/,/, /g')"
    else
      detail="no failing test in the reports (build error? see $dir/test.log)"
    fi
    echo "run $k/$RUNS: FAIL (${took} s, exit $rc) $detail"
  fi
done

stop_load
echo "repeat-tests: $passed passed, $failed failed"
[ "$failed" = 0 ]
