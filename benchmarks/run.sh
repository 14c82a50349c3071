#!/usr/bin/env bash
# Runs rdmarpc-bench, the latency harness, on this machine (server JVM on 127.0.0.1, client JVM here);
# builds benchmarks/target/rdmarpc-bench.jar first when it is missing (or when REBUILD=1).
#
#   benchmarks/run.sh                 # the default run (under two minutes on 2 cores): plot in bench-results/latency.png
#   benchmarks/run.sh --quick         # a smoke run (under 40 s)
#   benchmarks/run.sh --help          # every option; BENCH_JAVA_OPTS adds JVM flags (the server JVM gets them too)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=../scripts/jdk.sh
. "$ROOT/scripts/jdk.sh"

JAR="$ROOT/benchmarks/target/rdmarpc-bench.jar"
if [ ! -f "$JAR" ] || [ "${REBUILD:-0}" = "1" ]; then
  echo "building $JAR (once) ..." >&2
  if grep -q '<module>benchmarks</module>' "$ROOT/pom.xml"; then
    (cd "$ROOT" && ./mvnw -B -q package -DskipTests -pl benchmarks -am)
  else
    # benchmarks is not in the reactor yet: install what it depends on, then build it on its own
    (cd "$ROOT" && ./mvnw -B -q install -DskipTests && ./mvnw -B -q -f benchmarks/pom.xml package -DskipTests)
  fi
fi

# Every JVM of every transport gets the same flags and heap: the server JVM inherits these.
JVM_FLAGS=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow -Xms1g -Xmx1g -Djava.awt.headless=true)
# shellcheck disable=SC2206
EXTRA=(${BENCH_JAVA_OPTS:-})
exec java "${JVM_FLAGS[@]}" "${EXTRA[@]}" -jar "$JAR" "$@"
