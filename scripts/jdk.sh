#!/usr/bin/env bash
# Sourced by the project's scripts: exports JAVA_HOME pointing at a JDK >= 25, or explains what to install.
# Looks at $JAVA_HOME, then `java` on PATH, then the usual JDK folders.

rdmarpc_java_major() {
  # prints the feature version of the JDK at $1 (a JAVA_HOME), or nothing
  local v
  [ -x "$1/bin/java" ] && [ -x "$1/bin/javac" ] || return 0
  v=$("$1/bin/java" -XshowSettings:properties -version 2>&1 | sed -n 's/^ *java\.specification\.version = //p' | head -1)
  echo "${v%%.*}"
}

rdmarpc_find_jdk() {
  local candidates=() c major
  [ -n "${JAVA_HOME:-}" ] && candidates+=("$JAVA_HOME")
  if command -v java >/dev/null 2>&1; then
    c=$(readlink -f "$(command -v java)" 2>/dev/null)
    [ -n "$c" ] && candidates+=("$(dirname "$(dirname "$c")")")
  fi
  for c in /usr/lib/jvm/* /usr/java/* /opt/java/* /opt/jdk* "$HOME"/.sdkman/candidates/java/* /Library/Java/JavaVirtualMachines/*/Contents/Home; do
    [ -d "$c" ] && candidates+=("$c")
  done
  for c in "${candidates[@]}"; do
    major=$(rdmarpc_java_major "$c")
    if [ -n "$major" ] && [ "$major" -ge 25 ] 2>/dev/null; then
      echo "$c"
      return 0
    fi
  done
  return 1
}

if jdk=$(rdmarpc_find_jdk); then
  export JAVA_HOME="$jdk"
  export PATH="$JAVA_HOME/bin:$PATH"
else
  cat >&2 <<'MSG'
rdmarpc needs a JDK 25 or newer (it calls libibverbs through java.lang.foreign), and none was found
in JAVA_HOME, on PATH or under /usr/lib/jvm.
Install one, for example:
  Debian/Ubuntu: apt-get install temurin-25-jdk   (from the Adoptium apt repository)
                 or openjdk-25-jdk where your release has it
  any OS:        https://adoptium.net (Temurin 25), then export JAVA_HOME=/path/to/jdk-25
MSG
  exit 1
fi
