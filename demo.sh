#!/usr/bin/env bash
# The main job: builds the project, starts the key-value sample server, runs the sample client's
# workload against it on loopback (RDMA when both sides can, TCP otherwise), prints what it did.
set -euo pipefail
cd "$(dirname "$0")"
. scripts/jdk.sh
./mvnw -B -q -DskipTests package -pl samples -am
JAR=samples/target/rdmarpc-samples.jar
FLAGS=(--enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow)
PORT_FILE=$(mktemp)
java "${FLAGS[@]}" -cp "$JAR" dev.rdmarpc.samples.kv.KvServer --port 0 --port-file "$PORT_FILE" &
SERVER=$!
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -f "$PORT_FILE"' EXIT
for _ in $(seq 1 200); do
  [ -s "$PORT_FILE" ] && break
  kill -0 $SERVER 2>/dev/null || { echo "kv-server did not start" >&2; exit 1; }
  sleep 0.1
done
[ -s "$PORT_FILE" ] || { echo "kv-server did not report its port within 20 s" >&2; exit 1; }
java "${FLAGS[@]}" -cp "$JAR" dev.rdmarpc.samples.kv.KvClient --target "127.0.0.1:$(cat "$PORT_FILE")" "$@"
