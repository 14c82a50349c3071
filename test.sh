#!/usr/bin/env bash
# Runs the project's tests: unit and end-to-end tests over TCP on loopback, layout checks, codegen.
# (RDMA-tagged tests run with scripts/rdma-vm-test.sh; on a host with /dev/infiniband/uverbs0 the root pom's
# rdma-device profile runs them here natively too.)
set -euo pipefail
cd "$(dirname "$0")"
. scripts/jdk.sh
exec ./mvnw -B verify "$@"
