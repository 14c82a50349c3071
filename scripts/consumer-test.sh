#!/usr/bin/env bash
# Builds a new project from the README's quick start against rdmarpc deployed into a local file repository.
#
#   1. deploys this tree (./mvnw deploy -Prelease, tests and Error Prone skipped: ./test.sh runs them) into a file
#      repository;
#   2. checks the repository: every artifact the BOM lists has its pom, jar, sources and Javadoc, and
#      everything deployed is in the BOM;
#   3. makes a project from scripts/consumer-test/ and the README blocks marked `<!-- consumer-test: NAME -->`:
#      the proto, the Maven block (pom.xml), the service and the serve-and-call block (QuickStart.java), plus a
#      service of its own (inventory.proto) and tests, and runs `mvn verify` on it (offline), with a fresh local
#      repository whose only sources are the file repository and (read-only) ~/.m2 without its dev/rdmarpc, so
#      rdmarpc comes from the file repository even when an earlier `./mvnw install` left a copy in ~/.m2; checks
#      that it did;
#   4. checks the README's Gradle block against the Maven one (same artifacts and versions, release 25, the JVM
#      flag) and runs codegen's protoc jar as Gradle's protobuf plugin does (`java -jar` under protoc) on the
#      README's proto. Gradle itself is not run.
#
# Usage: scripts/consumer-test.sh [--repo DIR] [--online] [--keep]
#   --repo DIR  use rdmarpc already deployed in DIR (skips step 1)
#   --online    let Maven fetch third-party plugins missing from ~/.m2 (the consumer build uses Maven's default
#               plugin versions, which the project's own build may not have fetched); rdmarpc still comes only
#               from the file repository
#   --keep      keep the work directory (printed at the end)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TEMPLATE="$ROOT/scripts/consumer-test"
README="$ROOT/README.md"

REPO="" OFFLINE=(-o -Daether.offline.protocols=file) KEEP=false
while [ $# -gt 0 ]; do
  case "$1" in
    --repo) REPO="$(cd "$2" && pwd)"; shift 2 ;;
    --online) OFFLINE=(); shift ;;
    --keep) KEEP=true; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "consumer-test: unknown option $1 (--help)" >&2; exit 2 ;;
  esac
done

. "$ROOT/scripts/jdk.sh"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/rdmarpc-consumer.XXXXXX")"
$KEEP || trap 'rm -rf "$WORK"' EXIT
M2="${MAVEN_USER_REPO:-$HOME/.m2/repository}"
PASSED=0
fail() { echo "consumer-test: FAILED: $*" >&2; echo "consumer-test: $PASSED passed, 1 failed"; exit 1; }
pass() { PASSED=$((PASSED + 1)); echo "consumer-test: ok - $*"; }

# The body of the fenced block after the line `<!-- consumer-test: NAME -->` in README.md.
readme_block() {
  awk -v marker="<!-- consumer-test: $1 -->" '
    $0 == marker { found = 1; next }
    found && !open && /^```/ { open = 1; next }
    open && /^```/ { exit }
    open { print }' "$README"
}
for name in proto maven java-service java-main gradle; do
  [ -n "$(readme_block "$name")" ] || fail "README.md has no block marked <!-- consumer-test: $name -->"
done

VERSION="$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$ROOT/pom.xml" | head -1)"
BOM_VERSION="$(sed -n 's:^  <version>\(.*\)</version>:\1:p' "$ROOT/bom/pom.xml" | head -1)"
[ "$VERSION" = "$BOM_VERSION" ] || fail "bom/pom.xml has version $BOM_VERSION, the root pom $VERSION"

# ---- 1. deploy ----
if [ -z "$REPO" ]; then
  REPO="$WORK/repo"
  echo "consumer-test: deploying $VERSION into $REPO"
  (cd "$ROOT" && ./mvnw -B -q deploy -Prelease -DskipTests -Derrorprone.skip -Dmaven.install.skip=true -DdeployAtEnd=true \
      -DaltDeploymentRepository="rdmarpc-local::file://$REPO") > "$WORK/deploy.log" 2>&1 \
    || { tail -50 "$WORK/deploy.log"; fail "./mvnw deploy (log above)"; }
fi

# ---- 2. the repository against the BOM ----
bom_artifacts="$(sed -n 's:.*<artifactId>\(.*\)</artifactId>.*:\1:p' "$ROOT/bom/pom.xml" | grep -v '^rdmarpc-bom$' | sort -u)"
deployed="$(cd "$REPO/dev/rdmarpc" && ls | grep -v -e '^rdmarpc-bom$' -e '^rdmarpc-parent$' | sort)"
[ "$bom_artifacts" = "$deployed" ] \
  || fail "the BOM lists [$(echo $bom_artifacts)] but the repository holds [$(echo $deployed)]"
for a in $bom_artifacts; do
  for suffix in .pom .jar -sources.jar -javadoc.jar; do
    [ -s "$REPO/dev/rdmarpc/$a/$VERSION/$a-$VERSION$suffix" ] || fail "$a-$VERSION$suffix is not in $REPO"
  done
done
for pom in rdmarpc-bom rdmarpc-parent; do
  [ -s "$REPO/dev/rdmarpc/$pom/$VERSION/$pom-$VERSION.pom" ] || fail "$pom-$VERSION.pom is not in $REPO"
done
[ -s "$REPO/dev/rdmarpc/codegen/$VERSION/codegen-$VERSION-protoc.jar" ] || fail "codegen's protoc jar was not deployed"
readme_main_class="$(readme_block maven | sed -n 's:.*<mainClass>\(.*\)</mainClass>.*:\1:p')"
(mkdir -p "$WORK/codegen-jar" && cd "$WORK/codegen-jar" && "$JAVA_HOME/bin/jar" xf "$REPO/dev/rdmarpc/codegen/$VERSION/codegen-$VERSION.jar" META-INF/MANIFEST.MF)
jar_main_class="$(sed -n 's/^Main-Class: *//p' "$WORK/codegen-jar/META-INF/MANIFEST.MF" | tr -d '\r')"
[ "$readme_main_class" = "$jar_main_class" ] \
  || fail "the README's codegen mainClass is '$readme_main_class', codegen's jar says Main-Class '$jar_main_class'"
pass "the file repository holds [$(echo $bom_artifacts)] with sources and Javadoc, the BOM lists exactly those; the README's mainClass is codegen's Main-Class"

# ---- 3. the consumer project from the README ----
P="$WORK/consumer"
mkdir -p "$P/src/main/protobuf"
cp -r "$TEMPLATE/src" "$P/"
readme_block proto > "$P/src/main/protobuf/echo.proto"
junit_version="$(sed -n 's:.*<junit.version>\(.*\)</junit.version>.*:\1:p' "$ROOT/pom.xml")"
readme_block maven > "$WORK/maven.xml"
grep -qx '</dependencies>' "$WORK/maven.xml" || fail "the README's Maven block has no top-level </dependencies>"
# The README's block inside <project>, with the tests' JUnit added as the last of its top-level dependencies.
DEP="$(sed "s/JUNIT_VERSION/$junit_version/" "$TEMPLATE/test-dependency.xml")" awk '
  FNR == NR { block = block (block == "" ? "" : "\n") ($0 == "</dependencies>" ? ENVIRON["DEP"] "\n" $0 : $0); next }
  $0 == "README-MAVEN" { print block; next }
  { print }' "$WORK/maven.xml" "$TEMPLATE/pom.xml.in" > "$P/pom.xml"
# The serve-and-call block in QuickStart.main (port 0 for the README's 50051: other builds share this machine).
java_main="$(readme_block java-main | sed 's/RpcServer\.forPort(50051)/RpcServer.forPort(0)/; s/^/        /')"
grep -q 'forPort(0)' <<<"$java_main" || fail "the README's serve-and-call block no longer serves on RpcServer.forPort(50051)"
MAIN="$java_main" SERVICE="$(readme_block java-service)" awk '
  $0 == "README-JAVA-MAIN" { print ENVIRON["MAIN"]; next }
  $0 == "README-JAVA-SERVICE" { print ENVIRON["SERVICE"]; next }
  { print }' "$TEMPLATE/src/main/java/com/example/echo/QuickStart.java.in" > "$P/src/main/java/com/example/echo/QuickStart.java"
rm "$P/src/main/java/com/example/echo/QuickStart.java.in"

cat > "$WORK/settings.xml" <<EOF
<settings>
  <profiles>
    <profile>
      <id>rdmarpc-local</id>
      <repositories>
        <repository>
          <id>rdmarpc-local</id>
          <url>file://$REPO</url>
        </repository>
      </repositories>
    </profile>
  </profiles>
  <activeProfiles>
    <activeProfile>rdmarpc-local</activeProfile>
  </activeProfiles>
</settings>
EOF
# The read-only tail: ~/.m2 seen through links, without dev/rdmarpc, so a copy of rdmarpc installed there earlier
# (by `./mvnw install`) cannot stand in for the deployed one.
link_all_but() {  # directory, its copy of links, the one entry left out
  mkdir -p "$2"
  for entry in "$1"/*; do
    [ -e "$entry" ] && [ "$(basename "$entry")" != "$3" ] && ln -s "$entry" "$2/"
  done
  return 0
}
TAIL="$WORK/m2-tail"
link_all_but "$M2" "$TAIL" dev
link_all_but "$M2/dev" "$TAIL/dev" rdmarpc
echo "consumer-test: building the README's project in $P"
(cd "$P" && "$ROOT/mvnw" -B "${OFFLINE[@]}" -s "$WORK/settings.xml" -Dmaven.repo.local="$WORK/m2" \
    -Dmaven.repo.local.tail="$TAIL" -Dmaven.repo.local.tail.ignoreAvailability=true verify) > "$WORK/build.log" 2>&1 \
  || { grep -E 'ERROR|FAIL|Tests run' "$WORK/build.log" | head -60; fail "the README's project did not build (log: $WORK/build.log, --keep keeps it)"; }
grep -E '^\[INFO\] Tests run:|WARNING.*protoc' "$WORK/build.log" | head -20 || true
grep -q 'Tests run: .*, Failures: 0, Errors: 0' "$WORK/build.log" || fail "the README's project ran no tests"
for a in rdmarpc-bom rpc-core transport-tcp codegen; do
  grep -qs '>rdmarpc-local=' "$WORK/m2/dev/rdmarpc/$a/$VERSION/_remote.repositories" \
    || fail "dev.rdmarpc:$a:$VERSION did not come from the file repository"
done
pass "a new project from the README's Maven block, proto and Java built, generated its stubs and called over TCP (QuickStartTest, InventoryTest)"

# ---- 4. the Gradle block ----
gradle="$(readme_block gradle)"
maven_artifacts="$(sed -n 's:.*<artifactId>\(.*\)</artifactId>.*:\1:p' "$WORK/maven.xml" | sort -u)"
gradle_artifacts="$(grep -o '"[a-z.]*:[a-z-]*[:"]' <<<"$gradle" | sed 's/^"[a-z.]*:\([a-z-]*\).*/\1/' | sort -u)"
for a in $maven_artifacts; do
  case "$a" in protobuf-maven-plugin|maven-surefire-plugin) continue ;; esac
  grep -qx "$a" <<<"$gradle_artifacts" || fail "the README's Gradle block has no $a (the Maven block has)"
done
protobuf_version="$(grep -A1 '<artifactId>protobuf-java</artifactId>' "$WORK/maven.xml" | sed -n 's:.*<version>\(.*\)</version>.*:\1:p')"
protoc_version="$(sed -n 's:.*<protoc>\(.*\)</protoc>.*:\1:p' "$WORK/maven.xml")"
release="$(sed -n 's:.*<maven.compiler.release>\(.*\)</maven.compiler.release>.*:\1:p' "$WORK/maven.xml")"
for expected in "platform(\"dev.rdmarpc:rdmarpc-bom:$VERSION\")" "\"dev.rdmarpc:codegen:$VERSION:protoc@jar\"" \
    "\"com.google.protobuf:protobuf-java:$protobuf_version\"" "\"com.google.protobuf:protoc:$protoc_version\"" \
    "JavaLanguageVersion.of($release)" '"--enable-native-access=ALL-UNNAMED"'; do
  grep -qF "$expected" <<<"$gradle" || fail "the README's Gradle block lacks $expected (from the Maven block)"
done
grep -qF "<version>$VERSION</version>" "$WORK/maven.xml" || fail "the README's Maven block does not name version $VERSION"
protoc=""
for f in "$WORK/m2/com/google/protobuf/protoc/$protoc_version/"protoc-*.exe "$M2/com/google/protobuf/protoc/$protoc_version/"protoc-*.exe; do
  [ -f "$f" ] && { protoc="$f"; break; }
done
[ -n "$protoc" ] || fail "no protoc $protoc_version in $WORK/m2 or $M2"
cp "$protoc" "$WORK/protoc" && chmod +x "$WORK/protoc"
printf '#!/bin/sh\nexec "%s" -jar "%s"\n' "$JAVA_HOME/bin/java" "$REPO/dev/rdmarpc/codegen/$VERSION/codegen-$VERSION-protoc.jar" \
  > "$WORK/protoc-gen-rdmarpc" && chmod +x "$WORK/protoc-gen-rdmarpc"
mkdir -p "$WORK/gradle-out"
"$WORK/protoc" --plugin=protoc-gen-rdmarpc="$WORK/protoc-gen-rdmarpc" --rdmarpc_out="$WORK/gradle-out" \
    -I "$P/src/main/protobuf" "$P/src/main/protobuf/echo.proto" || fail "protoc with codegen's protoc jar failed"
cmp -s "$WORK/gradle-out/com/example/echo/EchoRpc.java" \
    "$P/target/generated-sources/protobuf/com/example/echo/EchoRpc.java" \
  || fail "codegen's protoc jar under java -jar did not write the EchoRpc.java the Maven build generated"
pass "the README's Gradle block names the Maven block's artifacts and versions; codegen's protoc jar generates the same EchoRpc as java -jar"

$KEEP && echo "consumer-test: work directory kept: $WORK"
echo "consumer-test: $PASSED passed, 0 failed"
