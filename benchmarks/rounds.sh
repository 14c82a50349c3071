#!/usr/bin/env bash
# Runs each transport alone (its own server and client JVMs) for several rounds, the order of the transports rotated
# from round to round, then compares every round's cells with the baseline's of the same round (rdmarpc-bench compare):
# ratios within a round cancel what the machine did between rounds, and no transport runs on code another one compiled.
#
#   benchmarks/rounds.sh --rounds 3 --out bench-results/rounds --transports grpc-netty,grpcnetty-to-rdmarpc \
#                        --payload 64,4096,1m --concurrency 1,64 --executor direct --transport-warmup 10s --warmup 5s
#
# --rounds N (default 3), --out DIR (default bench-results/rounds; round i of transport T goes to DIR/round-i/T),
# --baseline NAME (default grpc-netty, which must be among --transports); every other option goes to each run.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ROUNDS=3
OUT=bench-results/rounds
BASELINE=grpc-netty
TRANSPORTS=""
PASS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) ROUNDS=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    --baseline) BASELINE=$2; shift 2;;
    --transports) TRANSPORTS=$2; shift 2;;
    --help|-h) sed -n '2,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0;;
    *) PASS+=("$1"); shift;;
  esac
done
if [ -z "$TRANSPORTS" ]; then
  echo "rounds.sh: --transports is required (the baseline, $BASELINE, among them)" >&2
  exit 2
fi
IFS=, read -r -a LIST <<< "$TRANSPORTS"
case ",$TRANSPORTS," in
  *",$BASELINE,"*) ;;
  *) echo "rounds.sh: --transports must include the baseline, $BASELINE" >&2; exit 2;;
esac
if ! [[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]]; then
  echo "rounds.sh: --rounds must be a positive number, not $ROUNDS" >&2
  exit 2
fi

N=${#LIST[@]}
DIRS=()
for ((i = 1; i <= ROUNDS; i++)); do
  for ((j = 0; j < N; j++)); do
    t=${LIST[$(( (i - 1 + j) % N ))]}
    echo "round $i of $ROUNDS: $t" >&2
    mkdir -p "$OUT/round-$i"
    "$ROOT/benchmarks/run.sh" --transports "$t" --no-plot --out "$OUT/round-$i/$t" ${PASS[@]+"${PASS[@]}"} > "$OUT/round-$i-$t.log" 2>&1 \
      || { echo "rounds.sh: the run of $t in round $i failed; see $OUT/round-$i-$t.log" >&2; exit 3; }
  done
  DIRS+=("$OUT/round-$i")
done
exec "$ROOT/benchmarks/run.sh" compare --baseline "$BASELINE" "${DIRS[@]}"
