#!/usr/bin/env bash
# Runs rdmarpc-bench, the latency harness, on this machine (server JVM on 127.0.0.1, client JVM here);
# builds benchmarks/target/rdmarpc-bench.jar first when it is missing or older than any source or pom
# (or when REBUILD=1).
#
#   benchmarks/run.sh                 # the default run, both executor modes (under four minutes on 2 cores): plot in bench-results/latency.png
#   benchmarks/run.sh --quick         # a smoke run (under 40 s)
#   benchmarks/run.sh --help          # every option; BENCH_JAVA_OPTS adds JVM flags (the server JVM gets them too)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../scripts/jdk.sh
. "$ROOT/scripts/jdk.sh"

JAR="$ROOT/benchmarks/target/rdmarpc-bench.jar"
stale() {
  [ ! -f "$JAR" ] && return 0
  [ -n "$(find "$ROOT" -path "$ROOT/*/target" -prune -o \( -name '*.java' -o -name '*.proto' -o -name pom.xml \) -newer "$JAR" -print -quit)" ]
}
if [ "${REBUILD:-0}" = "1" ] || stale; then
  echo "building $JAR ..." >&2
  (cd "$ROOT" && ./mvnw -B -q package -DskipTests -pl benchmarks -am)
fi

# Every JVM of every transport gets the same flags and heap: the server JVM inherits these.
JVM_FLAGS=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Xms1g -Xmx1g -Djava.awt.headless=true)
# shellcheck disable=SC2206
EXTRA=(${BENCH_JAVA_OPTS:-})
exec java "${JVM_FLAGS[@]}" "${EXTRA[@]}" -jar "$JAR" "$@"
