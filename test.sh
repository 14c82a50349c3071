#!/usr/bin/env bash
# Runs the project's tests: unit and end-to-end tests over TCP on loopback, layout checks, codegen.
# (RDMA-tagged tests run with scripts/rdma-vm-test.sh, or natively: ./test.sh -Prdma on an RNIC host.)
set -euo pipefail
cd "$(dirname "$0")"
. scripts/jdk.sh
exec ./mvnw -B verify "$@"
