#!/bin/bash
# rdma-vm-test.sh - run the project's RDMA-tagged tests (JUnit @Tag("rdma")) on a real kernel verbs stack
# (Soft-RoCE rxe0) inside a throwaway QEMU guest, for machines without an RDMA NIC. Also CI's entry point.
#
#   scripts/rdma-vm-test.sh [--perf] [--modules "m1 m2"] [--no-build] [-h]
#
# What it does, in order:
#   1. installs the Debian packages it needs (apt-get update first; needs root on a fresh machine),
#   2. finds a JDK >= 25 (JAVA_HOME, then /usr/lib/jvm/*), or says what to install,
#   3. builds OUTSIDE the guest (Java is 15-35x slower in the emulated guest): test-compile of each module and
#      its test class path (dependency:build-classpath), and fetches the JUnit console launcher,
#   4. boots ONE guest (scripts/rxe-vm/run-rxe.sh) and runs one test JVM per module there with the console
#      launcher: --include-tag rdma, XML reports in <module>/target/rdma-reports/; with --perf it then runs
#      perftest's ib_send_lat -e and ib_read_bw -e against rxe0 in the same boot and prints their figures,
#   5. prints per-module test counts and exits non-zero if a test failed, if no test ran, or if the guest failed.
#
# Modules: RDMA_TEST_MODULES (default "transport-rdma"); a later module's RDMA tests join by being listed here.
# env: RDMA_TEST_TIMEOUT_SCALE (default 30: multiplies the tests' timeouts in the guest)
#      RDMA_VM_TIMEOUT (seconds for the whole guest run, default 1200)
#      RDMA_VM_JAVA_OPTS (extra JVM options for the test JVMs in the guest)
#      PERF_SEND_SIZE (64), PERF_READ_SIZE (65536), PERF_ITERS (1000): perftest parameters for --perf
#      plus run-rxe.sh's ACCEL, CPU, RXE_VM_CACHE
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
START=$(date +%s)

MODULES=${RDMA_TEST_MODULES:-transport-rdma}
PERF=0
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --perf) PERF=1; shift;;
    --modules) MODULES=$2; shift 2;;
    --no-build) BUILD=0; shift;;
    -h|--help) sed -n '2,25p' "$0"; exit 0;;
    *) echo "rdma-vm-test: unknown argument $1 (see --help)" >&2; exit 2;;
  esac
done
SCALE=${RDMA_TEST_TIMEOUT_SCALE:-30}
WORK=target/rdma-vm            # relative to ROOT; the guest sees ROOT at the same path
mkdir -p "$WORK"

say() { echo "rdma-vm-test: $*"; }
die() { echo "rdma-vm-test: ERROR: $*" >&2; exit 1; }

# ---------- 1. packages ----------
PKGS="qemu-system-x86 busybox-static kmod cpio rdma-core ibverbs-providers libibverbs1 ibverbs-utils rdmacm-utils
      perftest iproute2 ca-certificates curl unzip"
# shellcheck disable=SC2086
if ! dpkg -s $PKGS >/dev/null 2>&1; then
  [ "$(id -u)" = 0 ] || die "missing Debian packages; as root run: apt-get update && apt-get install -y $(echo $PKGS)"
  say "installing Debian packages: $(echo $PKGS)"
  apt-get update -qq
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $PKGS >/dev/null
fi

# ---------- 2. a JDK >= 25 ----------
java_major() {   # prints the feature version of the java binary $1, or nothing
  "$1" -version 2>&1 | awk -F'"' '/version/ {split($2, v, "."); if (v[1] == "1") print v[2]; else print v[1]; exit}'
}
JAVA_BIN=
for candidate in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} /usr/lib/jvm/*/bin/java; do
  [ -x "$candidate" ] || continue
  major=$(java_major "$candidate" || true)
  if [ -n "$major" ] && [ "$major" -ge 25 ] 2>/dev/null; then
    JAVA_BIN=$(readlink -f "$candidate")
    break
  fi
done
if [ -z "$JAVA_BIN" ]; then
  cat >&2 <<'MSG'
rdma-vm-test: ERROR: no JDK 25 or newer found (looked at $JAVA_HOME and /usr/lib/jvm/*).
Install one, e.g. Eclipse Temurin 25 on Debian 12 (as root):
  apt-get install -y wget gpg
  wget -qO- https://packages.adoptium.net/artifactory/api/gpg/key/public | gpg --dearmor > /usr/share/keyrings/adoptium.gpg
  echo "deb [signed-by=/usr/share/keyrings/adoptium.gpg] https://packages.adoptium.net/artifactory/deb bookworm main" > /etc/apt/sources.list.d/adoptium.list
  apt-get update && apt-get install -y temurin-25-jdk
then re-run (or point JAVA_HOME at any JDK >= 25).
MSG
  exit 2
fi
export JAVA_HOME=${JAVA_BIN%/bin/java}
say "JDK: $JAVA_HOME ($("$JAVA_BIN" -version 2>&1 | head -1))"

# ---------- 3. build outside the guest ----------
# shellcheck disable=SC2206
MODS=($MODULES)
[ ${#MODS[@]} -gt 0 ] || die "no modules given"
MVN=(./mvnw -B -q)
CP_FILE=target/rdma-test-classpath.txt
# The console launcher brings its own JUnit Platform + Jupiter; keep them off the tests' class path.
CP_ARGS=(dependency:build-classpath -Dmdep.outputFile=$CP_FILE -DincludeScope=test
         -DexcludeGroupIds=org.junit.jupiter,org.junit.platform,org.junit.vintage,org.opentest4j,org.apiguardian)
# the JVM flags every test JVM of the project runs with (root pom property rdmarpc.jvm.flags)
JVM_FLAGS=$(sed -n 's:.*<rdmarpc.jvm.flags>\(.*\)</rdmarpc.jvm.flags>.*:\1:p' pom.xml | head -1)
case "$JVM_FLAGS" in *enable-native-access*) ;; *) JVM_FLAGS="--enable-native-access=ALL-UNNAMED $JVM_FLAGS";; esac
JUNIT_VERSION=$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' pom.xml | head -1)
JUNIT_VERSION=${JUNIT_VERSION:-6.1.3}
LAUNCHER=$WORK/junit-platform-console-standalone-$JUNIT_VERSION.jar

if [ "$BUILD" = 1 ]; then
  BUILD_START=$(date +%s)
  in_reactor=(); standalone=()
  for m in "${MODS[@]}"; do
    [ -f "$m/pom.xml" ] || die "module $m has no pom.xml"
    if grep -q "<module>$m</module>" pom.xml; then in_reactor+=("$m"); else standalone+=("$m"); fi
  done
  if [ ${#in_reactor[@]} -gt 0 ]; then
    list=$(IFS=,; echo "${in_reactor[*]}")
    say "building $list (and what it needs) in the reactor"
    "${MVN[@]}" -pl "$list" -am test-compile "${CP_ARGS[@]}"
  fi
  for m in "${standalone[@]}"; do
    say "building $m on its own (not in the root pom's <modules> yet; sibling dependencies come from ~/.m2)"
    "${MVN[@]}" -f "$m/pom.xml" test-compile "${CP_ARGS[@]}"
  done
  if [ ! -f "$LAUNCHER" ]; then
    say "fetching org.junit.platform:junit-platform-console-standalone:$JUNIT_VERSION"
    "${MVN[@]}" -N dependency:copy \
      -Dartifact="org.junit.platform:junit-platform-console-standalone:$JUNIT_VERSION" \
      -DoutputDirectory="$WORK" -Dmdep.overWriteIfNewer=true
  fi
  say "build took $(( $(date +%s) - BUILD_START )) s"
fi
[ -f "$LAUNCHER" ] || die "$LAUNCHER missing (run without --no-build)"
for m in "${MODS[@]}"; do
  [ -d "$m/target/test-classes" ] && [ -f "$m/$CP_FILE" ] || die "$m is not built (run without --no-build)"
  rm -rf "$m/target/rdma-reports"
done

# ---------- 4. one guest boot: every module's test JVM, then perftest ----------
GUEST=$WORK/guest.sh
{
  echo '#!/bin/bash'
  echo "# generated by scripts/rdma-vm-test.sh; runs inside the rxe guest, cwd = project root"
  echo "set -u"
  echo "ROOT=\$PWD; overall=0"
  echo "echo \"rdma-vm-guest: \$(ibv_devices | sed -n 3p | xargs), \$(rdma link show | head -1)\""
  for m in "${MODS[@]}"; do
    cat <<GUESTMOD
echo "rdma-vm-guest: === $m: RDMA-tagged tests ==="
t0=\$(date +%s)
cd "\$ROOT/$m"
cp=target/test-classes:target/classes; deps=\$(cat $CP_FILE); [ -z "\$deps" ] || cp=\$cp:\$deps
"$JAVA_BIN" $JVM_FLAGS -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx512m \\
  -Drdmarpc.test.timeoutScale=$SCALE ${RDMA_VM_JAVA_OPTS:-} \\
  -jar "\$ROOT/$LAUNCHER" execute --disable-banner --details=tree --fail-if-no-tests \\
  --class-path "\$cp" \\
  --scan-class-path target/test-classes --include-engine=junit-jupiter --include-tag rdma \\
  --reports-dir target/rdma-reports
rc=\$?
echo "rdma-vm-guest: $m: exit code \$rc in \$(( \$(date +%s) - t0 )) s"
[ \$rc = 0 ] || overall=\$rc
cd "\$ROOT"
GUESTMOD
  done
  if [ "$PERF" = 1 ]; then
    cat <<GUESTPERF
perf() {  # name, server command, client command
  echo "rdma-vm-guest: === perftest: \$1 ==="
  \$2 > "$WORK/perf-\$1-server.txt" 2>&1 &
  server=\$!
  sleep 3
  for try in 1 2 3 4 5; do
    if \$3 192.168.77.1 > "$WORK/perf-\$1.txt" 2>&1; then break; fi
    sleep 3
  done
  wait \$server
  cat "$WORK/perf-\$1.txt"
}
perf ib_send_lat "ib_send_lat -d rxe0 -i 1 -x 1 -e -s ${PERF_SEND_SIZE:-64} -n ${PERF_ITERS:-1000}" \\
                 "ib_send_lat -d rxe0 -i 1 -x 1 -e -s ${PERF_SEND_SIZE:-64} -n ${PERF_ITERS:-1000}"
perf ib_read_bw "ib_read_bw -d rxe0 -i 1 -x 1 -e -s ${PERF_READ_SIZE:-65536} -n ${PERF_ITERS:-1000}" \\
                "ib_read_bw -d rxe0 -i 1 -x 1 -e -s ${PERF_READ_SIZE:-65536} -n ${PERF_ITERS:-1000}"
GUESTPERF
  fi
  echo 'exit $overall'
} > "$GUEST"
chmod +x "$GUEST"

say "booting the rxe guest for: ${MODS[*]}$([ "$PERF" = 1 ] && echo ' + perftest')"
GUEST_START=$(date +%s)
guest_rc=0
TIMEOUT=${RDMA_VM_TIMEOUT:-1200} "$ROOT/scripts/rxe-vm/run-rxe.sh" -s "$ROOT" -- "bash $GUEST" || guest_rc=$?
GUEST_SECS=$(( $(date +%s) - GUEST_START ))

# ---------- 5. results ----------
total=0; bad=0
echo
say "results (JUnit XML in <module>/target/rdma-reports/):"
for m in "${MODS[@]}"; do
  report=$(ls "$m"/target/rdma-reports/TEST-*.xml 2>/dev/null | head -1 || true)
  if [ -z "$report" ]; then
    say "  $m: NO REPORT (the test JVM did not run or crashed)"
    bad=1
    continue
  fi
  read -r tests failures errors skipped < <(awk -F'"' '/<testsuite / {
      for (i = 1; i < NF; i++) {
        if ($i ~ / tests=$/) t = $(i+1); if ($i ~ / failures=$/) f = $(i+1);
        if ($i ~ / errors=$/) e = $(i+1); if ($i ~ / skipped=$/) s = $(i+1) }
      print t, f, e, s; exit }' "$report")
  say "  $m: tests $tests, failures $failures, errors $errors, skipped $skipped"
  total=$(( total + tests - skipped ))
  [ "$failures" = 0 ] && [ "$errors" = 0 ] || bad=1
done
if [ "$PERF" = 1 ]; then
  for name in ib_send_lat ib_read_bw; do
    f=$WORK/perf-$name.txt
    if [ -f "$f" ]; then
      say "  $name (rxe0 in the guest, event mode):"
      grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ ' "$f" | sed 's/^/      /' || say "      (no figures; see $f)"
    else
      say "  $name: did not run"
    fi
  done
fi
say "guest run ${GUEST_SECS} s, total $(( $(date +%s) - START )) s, guest exit code $guest_rc"
if [ "$total" = 0 ]; then
  say "FAILED: no RDMA test ran"
  exit 1
fi
if [ "$bad" != 0 ] || [ "$guest_rc" != 0 ]; then
  say "FAILED"
  exit 1
fi
say "OK: $total RDMA tests passed on rxe0"
