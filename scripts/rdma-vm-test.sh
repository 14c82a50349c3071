#!/bin/bash
# rdma-vm-test.sh - run the project's RDMA-tagged tests (JUnit @Tag("rdma")) on a real kernel verbs stack
# (Soft-RoCE rxe0, and rxe1 on a second interface) inside a throwaway QEMU guest, for machines without an
# RDMA NIC. Also CI's entry point.
#
#   scripts/rdma-vm-test.sh [--perf] [--scale] [--samples] [--cmd 'shell command'] [--modules "m1 m2"] [--no-build] [-h]
#
# What it does, in order:
#   1. installs the Debian packages it needs (apt-get update first; needs root on a fresh machine),
#   2. finds a JDK >= 25 (JAVA_HOME, then /usr/lib/jvm/*), or says what to install,
#   3. builds OUTSIDE the guest (Java is 15-35x slower in the emulated guest): test-compile of each module and
#      its test class path (dependency:build-classpath), fetches the JUnit console launcher, and copies every
#      class directory the tests load into target/rdma-vm/stage/ (a later build cannot change them mid-run),
#   4. boots ONE guest (scripts/rxe-vm/run-rxe.sh) and runs one test JVM per module there with the console
#      launcher: --include-tag rdma, XML reports in <module>/target/rdma-reports/;
#      --perf then runs, in the same boot, perftest's ib_send_lat -e and ib_read_bw -e against rxe0, our own
#      RdmaPerfMain (64 B unary round trips in event mode, 1 MiB rendezvous unary and streaming throughput,
#      unary calls with 1 MiB and 16 MiB attachments sent from native memory), and perftest again; each ratio is
#      to the mean of perftest's two runs, as the emulated device's speed drifts during a boot; throughput is also
#      compared with ib_read_bw -t 1 (one READ in flight, as with calls made one at a time); each throughput
#      figure is the median of three measured windows, with ib_read_bw run again before, between and after them,
#      and its ratio to those runs (each window over the mean of the runs on either side) is printed too;
#      --scale then runs, in the same boot, the scale harness (transport-rdma's ScaleMain): one RDMA server JVM and 4
#      client JVMs opening 1, 8, 64 and 256 connections to it over rxe0, each forced to RDMA; at each count the server's
#      RDMA connections and queue pairs are checked, what it holds is printed (registered slab bytes, heap after GC,
#      native memory by NMT, RSS), then calls/s at 64 B and 1 MiB (a warm-up window, then the median of three; event
#      mode unless RDMA_SCALE_JAVA_OPTS says otherwise), with the CPU share of the server's completion poller; output
#      in target/rdma-vm/scale.txt, the table and the goals' checks printed at the end;
#      --samples (or --kv) builds the samples jar and runs the two storage samples over rxe0 (192.168.77.1),
#      each server and client with --transport RDMA: the key-value sample (then prints the server's RDMA meters),
#      and the block store, whose server maps a file on the guest's tmpfs and answers reads with slices of that
#      mapping as attachments; its client reads every block and compares each byte with the file, writes blocks
#      from native memory, reads them back and restores them;
#      --cmd runs any shell command in the guest after the above (cwd = project root; $JAVA is the JDK's java,
#      $RDMA_JVM_FLAGS the flags the guest's JVMs run with, $RDMA_CP_<module> with - as _ is a module's staged
#      test class path),
#      every module's tests run with the transport's shipped defaults (the completion poller spins spinMicros, then
#      blocks); then, in the same boot, the classes of RDMA_TEST_EVENT_MODE_CLASSES found in a module run once more in
#      their own JVM with -Drdmarpc.rdma.spinMicros=0 (event mode), XML reports in <module>/target/rdma-reports-event-mode/;
#      then, in the same boot, a module's test classes tagged rdma-unprivileged (e.g. the RLIMIT_MEMLOCK test) run
#      once more in their own JVM as nobody:nogroup with no capabilities (setpriv) and RLIMIT_MEMLOCK set by prlimit
#      (as root, CAP_IPC_LOCK lifts the limit, so those tests skip themselves there); class path copied to the
#      guest's /tmp so nobody can read it, XML reports in <module>/target/rdma-reports-unprivileged/;
#   5. prints per-module test counts and exits non-zero if a test failed, if no test ran, or if the guest failed.
#      With RDMA_TEST_RERUN=1 a module whose RDMA tests fail is run once more in the same boot; the second attempt
#      counts, and the first attempt's failures are printed as FLAKY with their report kept in
#      <module>/target/rdma-reports-first-attempt/.
#
# Modules: RDMA_TEST_MODULES (default "transport-rdma grpc-compat"); --modules "" runs no tests (with --perf,
# --scale, --samples or --cmd only).
# env: RDMA_TEST_TIMEOUT_SCALE (default 30: multiplies the tests' timeouts in the guest)
#      RDMA_VM_TIMEOUT (seconds for the whole guest run, default 2400; 6000 with --perf)
#      RDMA_VM_JAVA_OPTS (extra JVM options for the test JVMs in the guest)
#      RDMA_TEST_CLASSES (fully qualified test classes to run instead of scanning every module's test classes)
#      RDMA_TEST_REPEAT (default 1: runs each module's tests this many times in the boot; every run must pass)
#      RDMA_TEST_RERUN (default 0: the first failure is final; 1 runs a failing module once more)
#      RDMA_TEST_EVENT_MODE_CLASSES (default: PollerWakeupRdmaTest and UnaryPathsRdmaTest of transport-rdma; "" skips
#      the event-mode pass; with RDMA_TEST_CLASSES only the classes in both lists run)
#      RDMA_TEST_UNPRIVILEGED (default 1; 0 skips the unprivileged pass), RDMA_TEST_MEMLOCK (bytes, default 1073741824:
#      the unprivileged JVM's RLIMIT_MEMLOCK, soft and hard; a test may lower its soft limit further)
#      PERF_SEND_SIZE (64), PERF_READ_SIZES ("65536 1048576"), PERF_ITERS (1000): perftest parameters for --perf
#      PERF_REFERENCE_ITERS (200): ib_read_bw's iterations beside each measured window,
#      PERF_PHASES (default: all): RdmaPerfMain's measurements to run, by name, comma-separated (see its Javadoc)
#      PERF_RTT_CALLS (1000), PERF_MIB (128): RdmaPerfMain's measured round trips and MiB per throughput window (each
#      measurement first warms up until the JIT compilers have settled); with --perf the guest has one vCPU unless
#      RXE_VM_CPUS says otherwise (run-rxe.sh)
#      RDMA_SCALE_JAVA_OPTS (default -Drdmarpc.rdma.spinMicros=0): extra options of --scale's server JVM, which passes its
#      -Drdmarpc.* on to the client JVMs (e.g. -Drdmarpc.scale.counts=1,8,64,256 -Drdmarpc.scale.calls64=512
#      -Drdmarpc.scale.calls1m=32, see ScaleMain)
#      plus run-rxe.sh's ACCEL, CPU, RXE_VM_CACHE
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
START=$(date +%s)

MODULES=${RDMA_TEST_MODULES-transport-rdma grpc-compat}
PERF=0
SCALE_RUN=0
KV=0
USER_CMD=
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --perf) PERF=1; shift;;
    --scale) SCALE_RUN=1; shift;;
    --samples|--kv) KV=1; shift;;
    --cmd) USER_CMD=$2; shift 2;;
    --modules) MODULES=$2; shift 2;;
    --no-build) BUILD=0; shift;;
    -h|--help) sed -n '2,69p' "$0"; exit 0;;
    *) echo "rdma-vm-test: unknown argument $1 (see --help)" >&2; exit 2;;
  esac
done
SCALE=${RDMA_TEST_TIMEOUT_SCALE:-30}
REPEAT=${RDMA_TEST_REPEAT:-1}
RERUN=${RDMA_TEST_RERUN:-0}
[[ "$REPEAT" =~ ^[1-9][0-9]*$ ]] || { echo "rdma-vm-test: RDMA_TEST_REPEAT must be a positive integer" >&2; exit 2; }
[[ "$RERUN" =~ ^[01]$ ]] || { echo "rdma-vm-test: RDMA_TEST_RERUN must be 0 or 1" >&2; exit 2; }
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
[ ${#MODS[@]} -gt 0 ] || [ "$PERF" = 1 ] || [ "$SCALE_RUN" = 1 ] || [ "$KV" = 1 ] || [ -n "$USER_CMD" ] || die "no modules given"
BUILD_MODS=("${MODS[@]}")     # modules whose test class path is staged
if { [ "$PERF" = 1 ] || [ "$SCALE_RUN" = 1 ] || [ -n "$USER_CMD" ]; } && [[ " ${MODS[*]} " != *" transport-rdma "* ]]; then
  BUILD_MODS+=(transport-rdma)
fi
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
STAGE=$WORK/stage
SAMPLES_JAR=samples/target/rdmarpc-samples.jar

if [ "$BUILD" = 1 ]; then
  BUILD_START=$(date +%s)
  in_reactor=(); standalone=()
  for m in "${BUILD_MODS[@]}"; do
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
  if [ "$KV" = 1 ]; then
    say "building the samples jar"
    "${MVN[@]}" -pl samples -am package -DskipTests
  fi
  if [ ! -f "$LAUNCHER" ]; then
    say "fetching org.junit.platform:junit-platform-console-standalone:$JUNIT_VERSION"
    "${MVN[@]}" -N dependency:copy \
      -Dartifact="org.junit.platform:junit-platform-console-standalone:$JUNIT_VERSION" \
      -DoutputDirectory="$WORK" -Dmdep.overWriteIfNewer=true
  fi
  # Stage: copy every class directory the guest JVMs load (the modules' own and their reactor siblings'), so a
  # build started while the guest runs cannot delete or rewrite a class under it. Jars (~/.m2) stay where they are.
  rm -rf "$STAGE"; mkdir -p "$STAGE/dirs"
  stage_dir() {   # copies directory $1 once, prints the copy's path
    local key; key=$(echo "$1" | sed "s:^$ROOT/::; s:/:_:g")
    [ -d "$STAGE/dirs/$key" ] || cp -a "$1" "$STAGE/dirs/$key"
    echo "$ROOT/$STAGE/dirs/$key"
  }
  for m in "${BUILD_MODS[@]}"; do
    [ -d "$m/target/test-classes" ] && [ -f "$m/$CP_FILE" ] || die "$m is not built"
    mkdir -p "$STAGE/$m"
    cp -a "$m/target/test-classes" "$STAGE/$m/test-classes"
    cp=$ROOT/$STAGE/$m/test-classes
    [ ! -d "$m/target/classes" ] || cp=$cp:$(stage_dir "$ROOT/$m/target/classes")
    IFS=: read -r -a deps < "$m/$CP_FILE" || true
    for d in "${deps[@]}"; do
      [ -n "$d" ] || continue
      if [ -d "$d" ]; then cp=$cp:$(stage_dir "$d"); else cp=$cp:$d; fi
    done
    echo "$cp" > "$STAGE/$m/classpath.txt"
  done
  [ "$KV" = 0 ] || cp "$SAMPLES_JAR" "$STAGE/rdmarpc-samples.jar"
  say "build took $(( $(date +%s) - BUILD_START )) s"
fi
[ -f "$LAUNCHER" ] || die "$LAUNCHER missing (run without --no-build)"
for m in "${BUILD_MODS[@]}"; do
  [ -f "$STAGE/$m/classpath.txt" ] || die "$m is not staged (run without --no-build)"
done
[ "$KV" = 0 ] || [ -f "$STAGE/rdmarpc-samples.jar" ] || die "samples jar not staged (run without --no-build)"
for m in "${MODS[@]}"; do
  rm -rf "$m/target/rdma-reports" "$m/target/rdma-reports-first-attempt" "$m/target/rdma-reports-unprivileged" \
    "$m/target/rdma-reports-event-mode"
done
rm -f "$WORK"/perf-*.txt "$WORK"/kv-*.txt "$WORK"/blocks-*.txt "$WORK"/scale.txt
# What the launcher runs in a module: every staged test class, or only those of RDMA_TEST_CLASSES found there.
selection() {
  if [ -z "${RDMA_TEST_CLASSES:-}" ]; then
    echo "--scan-class-path \"\$ROOT/$STAGE/$1/test-classes\""
    return
  fi
  local c out=
  for c in $RDMA_TEST_CLASSES; do
    [ ! -f "$STAGE/$1/test-classes/${c//.//}.class" ] || out="$out --select-class $c"
  done
  echo "$out"
}
# The classes of RDMA_TEST_EVENT_MODE_CLASSES in a module (and in RDMA_TEST_CLASSES when given), as --select-class options.
EVENT_MODE_CLASSES=${RDMA_TEST_EVENT_MODE_CLASSES-dev.rdmarpc.transport.rdma.PollerWakeupRdmaTest dev.rdmarpc.transport.rdma.UnaryPathsRdmaTest}
event_mode_selection() {
  local c out=
  for c in $EVENT_MODE_CLASSES; do
    [ -f "$STAGE/$1/test-classes/${c//.//}.class" ] || continue
    if [ -z "${RDMA_TEST_CLASSES:-}" ] || [[ " $RDMA_TEST_CLASSES " == *" $c "* ]]; then out="$out --select-class $c"; fi
  done
  echo "$out"
}
# The test classes of a module tagged rdma-unprivileged (among RDMA_TEST_CLASSES when given), as --select-class options.
unprivileged_selection() {
  [ "${RDMA_TEST_UNPRIVILEGED:-1}" = 1 ] || return 0
  local f c out=
  while IFS= read -r f; do
    c=${f#"$STAGE/$1/test-classes/"}; c=${c%.class}; c=${c//\//.}
    case "$c" in *'$'*) continue;; esac
    if [ -z "${RDMA_TEST_CLASSES:-}" ] || [[ " $RDMA_TEST_CLASSES " == *" $c "* ]]; then out="$out --select-class $c"; fi
  done < <(grep -rl --include='*.class' 'rdma-unprivileged' "$STAGE/$1/test-classes" 2>/dev/null | sort)
  echo "$out"
}
for m in "${MODS[@]}"; do
  [ -n "$(selection "$m")" ] || die "none of RDMA_TEST_CLASSES ($RDMA_TEST_CLASSES) is a test class of $m (choose modules with --modules)"
done

# ---------- 4. one guest boot: every module's test JVM, then perftest and our figures, the samples, --cmd ----------
GUEST=$WORK/guest.sh
GUEST_JAVA="$JAVA_BIN $JVM_FLAGS -XX:+UseSerialGC"
{
  echo '#!/bin/bash'
  echo "# generated by scripts/rdma-vm-test.sh; runs inside the rxe guest, cwd = project root"
  echo "set -u"
  echo "ROOT=\$PWD; overall=0"
  echo "JAVA=$JAVA_BIN; export JAVA"
  echo "RDMA_JVM_FLAGS=\"$JVM_FLAGS -XX:+UseSerialGC\"; export RDMA_JVM_FLAGS"
  for m in "${BUILD_MODS[@]}"; do
    echo "RDMA_CP_${m//-/_}=\$(cat $STAGE/$m/classpath.txt); export RDMA_CP_${m//-/_}"
  done
  echo "echo \"rdma-vm-guest: \$(ibv_devices | sed -n 3p | xargs), \$(rdma link show | head -1)\""
  for m in "${MODS[@]}"; do
    cat <<GUESTMOD
tests() {  # runs $m's RDMA-tagged tests once, reports into target/rdma-reports
  # the slab pool's automatic decay is off: verbs tests count the device's memory regions exactly, and the decay
  # deregisters idle slabs at any moment (the KV sample below runs with it on)
  $GUEST_JAVA -XX:TieredStopAtLevel=1 -Xmx512m -Drdmarpc.slab.trimIntervalMillis=0 \\
    -Drdmarpc.test.timeoutScale=$SCALE ${RDMA_VM_JAVA_OPTS:-} \\
    -jar "\$ROOT/$LAUNCHER" execute --disable-banner --details=tree --fail-if-no-tests \\
    --class-path "\$RDMA_CP_${m//-/_}" \\
    $(selection "$m") --include-engine=junit-jupiter --include-tag rdma \\
    --reports-dir target/rdma-reports
}
cd "\$ROOT/$m"
for run in \$(seq 1 $REPEAT); do
  echo "rdma-vm-guest: === $m: RDMA-tagged tests (run \$run of $REPEAT) ==="
  t0=\$(date +%s)
  tests
  rc=\$?
  echo "rdma-vm-guest: $m: exit code \$rc in \$(( \$(date +%s) - t0 )) s"
  if [ \$rc != 0 ] && [ $RERUN = 1 ] && [ -d target/rdma-reports ]; then
    # One more attempt tells a flaky failure from a broken build; the first attempt's report is kept and listed.
    rm -rf target/rdma-reports-first-attempt; mv target/rdma-reports target/rdma-reports-first-attempt
    echo "rdma-vm-guest: $m: FAILED on the first attempt; running its RDMA tests once more"
    t0=\$(date +%s)
    tests
    rc=\$?
    echo "rdma-vm-guest: $m: second attempt exit code \$rc in \$(( \$(date +%s) - t0 )) s"
  fi
  [ \$rc = 0 ] || { overall=\$rc; break; }
done
cd "\$ROOT"
GUESTMOD
    events=$(event_mode_selection "$m")
    if [ -n "$events" ]; then
      cat <<GUESTEVENTS
# the completion poller in event mode (spinMicros=0: arm the CQ and block at once) for a few classes of $m
echo "rdma-vm-guest: === $m: event mode (spinMicros=0):$events ==="
t0=\$(date +%s)
(cd "\$ROOT/$m" && $GUEST_JAVA -XX:TieredStopAtLevel=1 -Xmx512m -Drdmarpc.slab.trimIntervalMillis=0 \\
    -Drdmarpc.rdma.spinMicros=0 -Drdmarpc.test.timeoutScale=$SCALE ${RDMA_VM_JAVA_OPTS:-} \\
    -jar "\$ROOT/$LAUNCHER" execute --disable-banner --details=tree --fail-if-no-tests \\
    --class-path "\$RDMA_CP_${m//-/_}" $events --include-engine=junit-jupiter --include-tag rdma \\
    --reports-dir target/rdma-reports-event-mode)
rc=\$?
echo "rdma-vm-guest: $m (event mode): exit code \$rc in \$(( \$(date +%s) - t0 )) s"
[ \$rc = 0 ] || overall=\$rc
GUESTEVENTS
    fi
    unpriv=$(unprivileged_selection "$m")
    [ -n "$unpriv" ] || continue
    cat <<GUESTUNPRIV
# $m's tests tagged rdma-unprivileged: as nobody, no capabilities, RLIMIT_MEMLOCK ${RDMA_TEST_MEMLOCK:-1073741824} B.
# The class path (staged directories, jars from the Maven repository) and the launcher are copied where nobody can
# read them; reports come back into $m/target/rdma-reports-unprivileged.
echo "rdma-vm-guest: === $m: tests tagged rdma-unprivileged, as nobody with RLIMIT_MEMLOCK ${RDMA_TEST_MEMLOCK:-1073741824} ==="
ls -l /dev/infiniband/ | sed 's/^/rdma-vm-guest:   /'
t0=\$(date +%s)
U=/tmp/rdma-unprivileged/$m; rm -rf "\$U"; mkdir -p "\$U/cp" "\$U/reports" "\$U/home"
ucp=; i=0
IFS=: read -r -a entries <<< "\$RDMA_CP_${m//-/_}"
for e in "\${entries[@]}"; do
  [ -n "\$e" ] || continue
  i=\$((i + 1)); cp -a "\$e" "\$U/cp/\$i-\$(basename "\$e")"; ucp=\$ucp:\$U/cp/\$i-\$(basename "\$e")
done
cp "\$ROOT/$LAUNCHER" "\$U/launcher.jar"
chmod -R a+rX "\$U"; chown -R nobody:nogroup "\$U/reports" "\$U/home"
(cd "\$U" && HOME="\$U/home" prlimit --memlock=${RDMA_TEST_MEMLOCK:-1073741824}:${RDMA_TEST_MEMLOCK:-1073741824} \\
  setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all \\
  $GUEST_JAVA -XX:-UsePerfData -XX:TieredStopAtLevel=1 -Xmx512m -Drdmarpc.slab.trimIntervalMillis=0 \\
    -Drdmarpc.test.timeoutScale=$SCALE ${RDMA_VM_JAVA_OPTS:-} \\
    -jar "\$U/launcher.jar" execute --disable-banner --details=tree --fail-if-no-tests \\
    --class-path "\${ucp#:}" $unpriv --include-engine=junit-jupiter --include-tag rdma-unprivileged \\
    --reports-dir "\$U/reports")
rc=\$?
mkdir -p "\$ROOT/$m/target/rdma-reports-unprivileged"; cp "\$U"/reports/*.xml "\$ROOT/$m/target/rdma-reports-unprivileged/" 2>/dev/null
echo "rdma-vm-guest: $m (unprivileged): exit code \$rc in \$(( \$(date +%s) - t0 )) s"
[ \$rc = 0 ] || overall=\$rc
GUESTUNPRIV
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
perftests() {  # suffix: perftest's figures, before (no suffix) or after (-after) ours
  perf ib_send_lat\$1 "ib_send_lat -d rxe0 -i 1 -x 1 -e -s ${PERF_SEND_SIZE:-64} -n ${PERF_ITERS:-1000}" \\
                     "ib_send_lat -d rxe0 -i 1 -x 1 -e -s ${PERF_SEND_SIZE:-64} -n ${PERF_ITERS:-1000}"
  for size in ${PERF_READ_SIZES:-65536 1048576}; do
    perf ib_read_bw-\$size\$1 "ib_read_bw -d rxe0 -i 1 -x 1 -e -s \$size -n ${PERF_ITERS:-1000}" \\
                            "ib_read_bw -d rxe0 -i 1 -x 1 -e -s \$size -n ${PERF_ITERS:-1000}"
  done
  # one READ in flight at a time, as with our calls made one at a time
  perf ib_read_bw_t1-1048576\$1 "ib_read_bw -d rxe0 -i 1 -x 1 -e -s 1048576 -t 1 -n ${PERF_ITERS:-1000}" \\
                              "ib_read_bw -d rxe0 -i 1 -x 1 -e -s 1048576 -t 1 -n ${PERF_ITERS:-1000}"
}
perftests ""
echo "rdma-vm-guest: === rdmarpc: RdmaPerfMain (event mode) ==="
t0=\$(date +%s)
# ib_read_bw also runs between RdmaPerfMain's measured windows: each throughput window is compared with the runs
# just before and after it (PerftestReference)
$GUEST_JAVA -Xmx1g -Drdmarpc.rdma.spinMicros=0 -Drdmarpc.perf.referencePeer=192.168.77.1 \\
  -Drdmarpc.perf.phases=${PERF_PHASES:-} \\
  "-Drdmarpc.perf.reference=ib_read_bw -d rxe0 -i 1 -x 1 -e -s 1048576 -n ${PERF_REFERENCE_ITERS:-200}" \\
  -cp "\$RDMA_CP_transport_rdma" dev.rdmarpc.transport.rdma.RdmaPerfMain \\
  ${PERF_RTT_CALLS:-1000} ${PERF_MIB:-128} > "$WORK/perf-rdmarpc.txt" 2>&1
rc=\$?
grep -v '^rdmarpc-perf' "$WORK/perf-rdmarpc.txt" | tail -20
echo "rdma-vm-guest: RdmaPerfMain: exit code \$rc in \$(( \$(date +%s) - t0 )) s"
[ \$rc = 0 ] || overall=\$rc
perftests -after
GUESTPERF
  fi
  if [ "$SCALE_RUN" = 1 ]; then
    cat <<GUESTSCALE
echo "rdma-vm-guest: === rdmarpc: ScaleMain (1 to 256 RDMA connections to one server) ==="
t0=\$(date +%s)
$GUEST_JAVA -Xmx768m -XX:NativeMemoryTracking=summary ${RDMA_SCALE_JAVA_OPTS:--Drdmarpc.rdma.spinMicros=0} \\
  -cp "\$RDMA_CP_transport_rdma" dev.rdmarpc.transport.rdma.ScaleMain > "$WORK/scale.txt" 2>&1
rc=\$?
grep '^rdmarpc-scale' "$WORK/scale.txt" | tail -60
echo "rdma-vm-guest: ScaleMain: exit code \$rc in \$(( \$(date +%s) - t0 )) s"
[ \$rc = 0 ] || overall=\$rc
GUESTSCALE
  fi
  if [ "$KV" = 1 ]; then
    cat <<GUESTKV
echo "rdma-vm-guest: === KV sample over rxe0: KvServer --transport RDMA, KvClient --transport RDMA -t 192.168.77.1 ==="
t0=\$(date +%s)
rm -f "$WORK/kv-port.txt"
$GUEST_JAVA -cp "\$ROOT/$STAGE/rdmarpc-samples.jar" dev.rdmarpc.samples.kv.KvServer \\
  --port 0 --port-file "$WORK/kv-port.txt" --transport RDMA --metrics-port 19464 --handshake-timeout-ms 600000 > "$WORK/kv-server.txt" 2>&1 &
kvserver=\$!
for i in \$(seq 1 600); do [ -s "$WORK/kv-port.txt" ] && break; sleep 1; done
port=\$(cat "$WORK/kv-port.txt" 2>/dev/null || echo none)
echo "rdma-vm-guest: KV server listening on port \$port"
$GUEST_JAVA -cp "\$ROOT/$STAGE/rdmarpc-samples.jar" dev.rdmarpc.samples.kv.KvClient \\
  -t 192.168.77.1:\$port --transport RDMA -n ${KV_REQUESTS:-200} --deadline-ms 600000 --connect-timeout-ms 600000 \\
  2>&1 | tee "$WORK/kv-client.txt"
rc=\${PIPESTATUS[0]}
echo "rdma-vm-guest: KV server's RDMA meters (Prometheus, http://127.0.0.1:19464/metrics):"
curl -s http://127.0.0.1:19464/metrics | grep -E '^rdmarpc_rdma_' | tee "$WORK/kv-metrics.txt"
kill \$kvserver; wait \$kvserver 2>/dev/null
echo "rdma-vm-guest: KV client: exit code \$rc in \$(( \$(date +%s) - t0 )) s"
[ \$rc = 0 ] || overall=\$rc
echo "rdma-vm-guest: === block store sample over rxe0: BlockServer --transport RDMA (file on tmpfs), BlockClient --transport RDMA -t 192.168.77.1 ==="
t0=\$(date +%s)
rm -f "$WORK/blocks-port.txt"; rm -rf /tmp/block-store; mkdir -p /tmp/block-store
$GUEST_JAVA -cp "\$ROOT/$STAGE/rdmarpc-samples.jar" dev.rdmarpc.samples.blocks.BlockServer \\
  --file /tmp/block-store/blocks.bin --blocks ${BLOCKS_COUNT:-4096} --port 0 --port-file "$WORK/blocks-port.txt" \\
  --transport RDMA --handshake-timeout-ms 600000 > "$WORK/blocks-server.txt" 2>&1 &
blockserver=\$!
for i in \$(seq 1 600); do [ -s "$WORK/blocks-port.txt" ] && break; sleep 1; done
port=\$(cat "$WORK/blocks-port.txt" 2>/dev/null || echo none)
echo "rdma-vm-guest: block server listening on port \$port"
$GUEST_JAVA -cp "\$ROOT/$STAGE/rdmarpc-samples.jar" dev.rdmarpc.samples.blocks.BlockClient \\
  -t 192.168.77.1:\$port --transport RDMA --verify-file /tmp/block-store/blocks.bin --deadline-ms 600000 \\
  --connect-timeout-ms 600000 2>&1 | tee "$WORK/blocks-client.txt"
rc=\${PIPESTATUS[0]}
kill \$blockserver; wait \$blockserver 2>/dev/null
echo "rdma-vm-guest: block client: exit code \$rc in \$(( \$(date +%s) - t0 )) s"
[ \$rc = 0 ] || overall=\$rc
GUESTKV
  fi
  if [ -n "$USER_CMD" ]; then
    printf 'echo "rdma-vm-guest: === --cmd ==="\n( %s )\nrc=$?\necho "rdma-vm-guest: --cmd: exit code $rc"\n[ $rc = 0 ] || overall=$rc\n' "$USER_CMD"
  fi
  echo 'exit $overall'
} > "$GUEST"
chmod +x "$GUEST"

what="${MODS[*]}"; [ "$PERF" = 0 ] || what="$what + perf"; [ "$KV" = 0 ] || what="$what + samples"
# Single-threaded TCG runs every vCPU on one host thread, so with two vCPUs a thread woken on the other vCPU waits for
# that vCPU's turn: figures would measure the emulator's round robin. --perf boots one vCPU unless told otherwise.
if [ "$PERF" = 1 ] && [ -z "${RXE_VM_CPUS:-}" ]; then
  export RXE_VM_CPUS=1
  what="$what (one vCPU: RXE_VM_CPUS=1)"
fi
[ "$SCALE_RUN" = 0 ] || what="$what + scale (vCPUs: ${RXE_VM_CPUS:-$(nproc)})"
[ -z "$USER_CMD" ] || what="$what + --cmd"
say "booting the rxe guest for: $what"
GUEST_START=$(date +%s)
guest_rc=0
# --perf's 14 measurements, each warmed up on its own, need more than the 40 minutes other runs get (RdmaPerfMain
# took 27 minutes with 10 of them)
default_timeout=2400; [ "$PERF" = 0 ] || default_timeout=$((default_timeout + 3600))
TIMEOUT=${RDMA_VM_TIMEOUT:-$default_timeout} "$ROOT/scripts/rxe-vm/run-rxe.sh" -s "$ROOT" -- "bash $GUEST" || guest_rc=$?
GUEST_SECS=$(( $(date +%s) - GUEST_START ))

# ---------- 5. results ----------
# tests, failures, errors and skipped of a JUnit XML report's first <testsuite>
suite_counts() {
  awk -F'"' '/<testsuite / {
      for (i = 1; i < NF; i++) {
        if ($i ~ / tests=$/) t = $(i+1); if ($i ~ / failures=$/) f = $(i+1);
        if ($i ~ / errors=$/) e = $(i+1); if ($i ~ / skipped=$/) s = $(i+1) }
      print t, f, e, s; exit }' "$1"
}
total=0; bad=0
extra_pass() {  # module, report directory suffix, label: adds a second pass's counts (event mode, unprivileged)
  local r tests failures errors skipped
  r=$(ls "$1"/target/rdma-reports-"$2"/TEST-*.xml 2>/dev/null | head -1 || true)
  if [ -z "$r" ]; then
    say "  $1 ($3): NO REPORT (the test JVM did not run or crashed)"
    bad=1
    return
  fi
  read -r tests failures errors skipped < <(suite_counts "$r")
  say "  $1 ($3): tests $tests, failures $failures, errors $errors, skipped $skipped"
  total=$(( total + tests - skipped ))
  [ "$failures" = 0 ] && [ "$errors" = 0 ] || bad=1
}
echo
say "results (JUnit XML in <module>/target/rdma-reports/):"
for m in "${MODS[@]}"; do
  report=$(ls "$m"/target/rdma-reports/TEST-*.xml 2>/dev/null | head -1 || true)
  if [ -z "$report" ]; then
    say "  $m: NO REPORT (the test JVM did not run or crashed)"
    bad=1
    continue
  fi
  read -r tests failures errors skipped < <(suite_counts "$report")
  say "  $m: tests $tests, failures $failures, errors $errors, skipped $skipped"
  first=$(ls "$m"/target/rdma-reports-first-attempt/TEST-*.xml 2>/dev/null | head -1 || true)
  if [ -n "$first" ]; then
    flaky=$(grep -B1 -E '<(failure|error) ' "$first" | sed -n 's/.*<testcase name="\([^"]*\)" classname="\([^"]*\)".*/\2.\1/p' | tr '\n' ' ')
    if [ "$failures" = 0 ] && [ "$errors" = 0 ]; then
      say "  $m: FLAKY: the first attempt failed (${flaky:-see its report}), the second passed; report in $m/target/rdma-reports-first-attempt/"
    else
      say "  $m: failed in both attempts; the first attempt's report is in $m/target/rdma-reports-first-attempt/"
    fi
  fi
  total=$(( total + tests - skipped ))
  [ "$failures" = 0 ] && [ "$errors" = 0 ] || bad=1
  [ -z "$(event_mode_selection "$m")" ] || extra_pass "$m" event-mode "event mode, spinMicros=0"
  [ -z "$(unprivileged_selection "$m")" ] || extra_pass "$m" unprivileged "unprivileged, RLIMIT_MEMLOCK"
done
# perftest_mean field name size: the mean of field's value on perftest's result line (whose first field matches
# size) in perf-name.txt (before ours) and perf-name-after.txt (after ours), of those that exist
perftest_mean() {
  cat "$WORK/perf-$2.txt" "$WORK/perf-$2-after.txt" 2>/dev/null \
    | awk -v f="$1" -v size="$3" '$0 ~ "^ *" size " +[0-9]+ +[0-9.]+ " {sum += $f; n++} END {if (n) printf "%.2f", sum / n}'
}
if [ "$PERF" = 1 ]; then
  for f in "$WORK"/perf-ib_*.txt; do
    case "$f" in *-server.txt) continue;; esac
    [ -f "$f" ] || { say "  perftest did not run"; break; }
    name=$(basename "$f" .txt); name=${name#perf-}
    say "  $name (rxe0 in the guest, event mode):"
    grep -E '^ *#bytes|^ *[0-9]+ +[0-9]+ ' "$f" | sed 's/^/      /' || say "      (no figures; see $f)"
  done
  if [ -f "$WORK/perf-rdmarpc.txt" ]; then
    say "  rdmarpc (RdmaPerfMain, same boot):"
    grep '^rdmarpc-perf' "$WORK/perf-rdmarpc.txt" | sed 's/^/      /' || say "      (no figures; see $WORK/perf-rdmarpc.txt)"
    # ratio of our median 64 B round trip to 2 x ib_send_lat's t_typical (one-way latency)
    # perftest's result lines: ib_send_lat "#bytes #iterations t_min t_max t_typical ...", ib_read_bw
    # "#bytes #iterations BW_peak BW_average MsgRate": t_typical is field 5, BW average field 4
    # perftest runs before and after ours: each ratio is to the mean of the two, as the emulated device's speed drifts
    typical=$(perftest_mean 5 ib_send_lat '[0-9]+')
    median=$(sed -n 's/^rdmarpc-perf: unary 64 B round trip: median \([0-9.]*\) us.*/\1/p' "$WORK/perf-rdmarpc.txt")
    if [ -n "$typical" ] && [ -n "$median" ]; then
      say "  ratio: our 64 B unary RTT median $median us / (2 x ib_send_lat t_typical $typical us, mean before and after) = $(awk -v m="$median" -v t="$typical" 'BEGIN {printf "%.1f", m / (2 * t)}')"
    fi
    direct=$(sed -n 's/^rdmarpc-perf: unary 64 B round trip, directExecutor: median \([0-9.]*\) us.*/\1/p' "$WORK/perf-rdmarpc.txt")
    if [ -n "$typical" ] && [ -n "$direct" ]; then
      say "  ratio: same with directExecutor, median $direct us / (2 x $typical us) = $(awk -v m="$direct" -v t="$typical" 'BEGIN {printf "%.1f", m / (2 * t)}')"
    fi
    bw=$(perftest_mean 4 ib_read_bw-1048576 1048576)
    bw1=$(perftest_mean 4 ib_read_bw_t1-1048576 1048576)
    # attachments travel in 1 MiB frames, each its own READ: compared with ib_read_bw at 1 MiB too
    for kind in "unary 1 MiB requests" "server streaming 1 MiB messages" "unary 1 MiB attachments" "unary 16 MiB attachments" \
        "protobuf unary 1 MiB requests, copied" "protobuf unary 1 MiB requests, lent" \
        "protobuf server streaming 1 MiB messages, copied" "protobuf server streaming 1 MiB messages, lent"; do
      ours=$(sed -n "s/^rdmarpc-perf: $kind: \([0-9.]*\) MB\/s.*/\1/p" "$WORK/perf-rdmarpc.txt")
      if [ -n "$bw" ] && [ -n "$ours" ]; then
        say "  ratio: $kind $ours MB/s / ib_read_bw 1 MiB BW average $bw MB/s (mean before and after) = $(awk -v o="$ours" -v b="$bw" 'BEGIN {printf "%.2f", o / b}')"
        [ -z "$bw1" ] || say "    same against ib_read_bw -t 1 (one READ in flight) $bw1 MB/s = $(awk -v o="$ours" -v b="$bw1" 'BEGIN {printf "%.2f", o / b}')"
      fi
      beside=$(sed -n "s/^rdmarpc-perf: $kind against ib_read_bw beside each window: \([0-9.]*\) .*/\1/p" "$WORK/perf-rdmarpc.txt")
      [ -z "$beside" ] || say "    against ib_read_bw run beside each of its windows (median of the windows' ratios) = $beside"
    done
  fi
fi
if [ "$SCALE_RUN" = 1 ]; then
  say "  scale harness (ScaleMain, output in $WORK/scale.txt):"
  grep -E '^rdmarpc-scale: (\||per additional|goal|FAILURE|OK|FAILED)' "$WORK/scale.txt" 2>/dev/null | sed 's/^/      /' \
    || say "      (no figures; see $WORK/scale.txt)"
  grep -q '^rdmarpc-scale: OK' "$WORK/scale.txt" 2>/dev/null || bad=1
fi
if [ "$KV" = 1 ]; then
  say "  KV sample over rxe0: $(grep -m1 'connected over' "$WORK/kv-client.txt" 2>/dev/null || echo 'client did not connect')," \
      "$(grep -m1 'all checks passed' "$WORK/kv-client.txt" 2>/dev/null || echo 'checks did NOT pass'); server meters in $WORK/kv-metrics.txt"
  grep -q 'all checks passed' "$WORK/kv-client.txt" 2>/dev/null || bad=1
  say "  block store sample over rxe0: $(grep -m1 'connected over' "$WORK/blocks-client.txt" 2>/dev/null || echo 'client did not connect')," \
      "$(grep -m1 'all checks passed' "$WORK/blocks-client.txt" 2>/dev/null || echo 'checks did NOT pass')"
  grep -E 'MB/s' "$WORK/blocks-client.txt" 2>/dev/null | sed 's/^/      /' || true
  grep -q 'all checks passed' "$WORK/blocks-client.txt" 2>/dev/null || bad=1
fi
say "guest run ${GUEST_SECS} s, total $(( $(date +%s) - START )) s, guest exit code $guest_rc"
if [ ${#MODS[@]} -gt 0 ] && [ "$total" = 0 ]; then
  say "FAILED: no RDMA test ran"
  exit 1
fi
if [ "$bad" != 0 ] || [ "$guest_rc" != 0 ]; then
  say "FAILED"
  exit 1
fi
if [ ${#MODS[@]} -gt 0 ]; then say "OK: $total RDMA tests passed on rxe0"; else say "OK"; fi
