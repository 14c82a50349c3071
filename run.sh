#!/usr/bin/env bash
# The main job: the latency benchmark on loopback — rdmarpc (RDMA when present, TCP otherwise) against
# stock grpc-java and raw Netty, in one run — then points at the plot. Extra arguments go to
# rdmarpc-bench (e.g. --quick, --help). The key-value sample demo is ./demo.sh.
set -euo pipefail
cd "$(dirname "$0")"
exec benchmarks/run.sh "$@"
