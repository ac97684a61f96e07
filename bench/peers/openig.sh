#!/usr/bin/env bash
# Run OpenIG 6 (OpenIdentityPlatform) as a benchmark peer of Portico, on loopback only.
#
#   openig.sh fetch                       resolve OpenIG + Tomcat from Maven Central (cached in ~/.m2),
#                                         lay them out under $PORTICO_BENCH_DIR/openig, compile the launcher
#   openig.sh start <instance-dir> <port> start OpenIG on 127.0.0.1:<port> with openig.base=<instance-dir>,
#                                         daemonized; waits until GET / answers
#   openig.sh stop                        stop it (pidfile), waiting for the port to close
#   openig.sh status                      print pid/port/instance if running (exit 1 otherwise)
#   openig.sh pid                         print the JVM pid if running (exit 1 otherwise)
#
# Environment:
#   PORTICO_BENCH_DIR  state dir (default /tmp/portico-bench); OpenIG goes to $PORTICO_BENCH_DIR/openig
#   OPENIG_JAVA_OPTS   JVM options (default "-Xms256m -Xmx1g")
#   OPENIG_VERSION     OpenIG artifact version (default 6.0.1: the newest 6.x on Maven Central)
#   OPENIG_TOMCAT_VERSION  tomcat-embed-core version (default 11.0.25)
#   OPENIG_START_TIMEOUT   seconds to wait for readiness (default 120)
#
# Why not the OpenIG WAR: org.openidentityplatform.openig:openig-war is not on Maven Central (OpenIG ships
# its WAR as a GitHub release asset only), so `fetch` resolves the jars that the WAR bundles (openig-core,
# -oauth2, -uma, -openam, http-framework core+servlet, logback) and runs them in an embedded Tomcat through
# openig/PorticoOpenIGLauncher.java, which does what the WAR's servlet container initializer does.
# openig-saml is left out: its dependency org.openidentityplatform.openam.jakarta:jaxrpc-impl is not on
# Maven Central either. See README.md beside this script.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BENCH_DIR="${PORTICO_BENCH_DIR:-/tmp/portico-bench}"
STATE="$BENCH_DIR/openig"
OPENIG_VERSION="${OPENIG_VERSION:-6.0.1}"
TOMCAT_VERSION="${OPENIG_TOMCAT_VERSION:-11.0.25}"
JAVA_OPTS_DEFAULT="-Xms256m -Xmx1g"
PIDFILE="$STATE/run/openig.pid"
INFOFILE="$STATE/run/openig.info"
LOGFILE="$STATE/run/openig.log"
START_TIMEOUT="${OPENIG_START_TIMEOUT:-120}"

die() { echo "openig.sh: $*" >&2; exit 1; }

java_major() {
  java -version 2>&1 | awk -F'"' '/version/ {print $2; exit}' | awk -F. '{ if ($1 == "1") print $2; else print $1 }'
}

check_java() {
  command -v java >/dev/null || die "java not found (need JDK 17+)"
  command -v javac >/dev/null || die "javac not found (need a JDK 17+, not a JRE)"
  local m; m="$(java_major)"
  if [[ "$m" =~ ^[0-9]+$ ]] && (( m >= 17 )); then return 0; fi
  die "need Java 17+ (Tomcat 11 requires it), found: $(java -version 2>&1 | head -1)"
}

write_pom() {
  # The WAR's dependency set (openig-war/pom.xml of the 6.0.x tag) minus openig-saml (unresolvable, see
  # header) and the optional audit event handlers; the servlet API comes with tomcat-embed-core.
  cat > "$STATE/pom.xml.new" <<EOF
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>portico.bench</groupId>
  <artifactId>openig-peer-runtime</artifactId>
  <version>2</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.openidentityplatform.openig</groupId><artifactId>openig-core</artifactId><version>${OPENIG_VERSION}</version></dependency>
    <dependency><groupId>org.openidentityplatform.openig</groupId><artifactId>openig-oauth2</artifactId><version>${OPENIG_VERSION}</version></dependency>
    <dependency><groupId>org.openidentityplatform.openig</groupId><artifactId>openig-uma</artifactId><version>${OPENIG_VERSION}</version></dependency>
    <dependency><groupId>org.openidentityplatform.openig</groupId><artifactId>openig-openam</artifactId><version>${OPENIG_VERSION}</version></dependency>
    <dependency><groupId>org.openidentityplatform.commons.http-framework</groupId><artifactId>core</artifactId><version>3.0.1</version></dependency>
    <dependency><groupId>org.openidentityplatform.commons.http-framework</groupId><artifactId>servlet</artifactId><version>3.0.1</version></dependency>
    <dependency><groupId>ch.qos.logback</groupId><artifactId>logback-classic</artifactId><version>1.3.15</version></dependency>
    <dependency><groupId>org.apache.tomcat.embed</groupId><artifactId>tomcat-embed-core</artifactId><version>${TOMCAT_VERSION}</version></dependency>
  </dependencies>
</project>
EOF
  if [[ -f "$STATE/pom.xml" ]] && cmp -s "$STATE/pom.xml" "$STATE/pom.xml.new"; then
    rm -f "$STATE/pom.xml.new"
  else
    mv "$STATE/pom.xml.new" "$STATE/pom.xml"
    rm -f "$STATE/lib/.complete"
  fi
}

cmd_fetch() {
  check_java
  command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
  mkdir -p "$STATE/run"
  write_pom
  if [[ ! -f "$STATE/lib/.complete" ]]; then
    echo "openig.sh: resolving OpenIG ${OPENIG_VERSION} + Tomcat ${TOMCAT_VERSION} from Maven Central (cache ~/.m2)"
    rm -rf "${STATE:?}/lib"
    if ! (cd "$STATE" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime -Dmdep.prependGroupId=true \
          -DoutputDirectory="$STATE/lib" >"$STATE/mvn.log" 2>&1); then
      tail -n 30 "$STATE/mvn.log" >&2
      die "maven could not resolve the OpenIG runtime (full log: $STATE/mvn.log)"
    fi
    touch "$STATE/lib/.complete"
  fi
  # Launcher: recompile when its source changed.
  local src="$HERE/openig/PorticoOpenIGLauncher.java" cls="$STATE/classes/PorticoOpenIGLauncher.class"
  if [[ ! -f "$cls" || "$src" -nt "$cls" ]]; then
    rm -rf "$STATE/classes"; mkdir -p "$STATE/classes"
    javac -nowarn -d "$STATE/classes" -cp "$STATE/lib/*" "$src" 2>"$STATE/javac.log" \
      || { cat "$STATE/javac.log" >&2; die "cannot compile the launcher"; }
  fi
  cp "$HERE/openig/logback.xml" "$STATE/logback-default.xml"
  local tc_info
  tc_info="$(unzip -p "$STATE/lib/org.apache.tomcat.embed.tomcat-embed-core-${TOMCAT_VERSION}.jar" org/apache/catalina/util/ServerInfo.properties 2>/dev/null \
    | sed -n 's/^server.info=//p')"
  printf 'OpenIG %s\n%s\n' "$OPENIG_VERSION" "${tc_info:-Apache Tomcat/${TOMCAT_VERSION}} (embedded)" > "$STATE/VERSION"
  echo "openig.sh: ready in $STATE ($(head -1 "$STATE/VERSION"), $(sed -n 2p "$STATE/VERSION"); $(find "$STATE/lib" -name '*.jar' | wc -l) jars)"
}

log_tail() { # the log's last 40 lines, stack frames left out
  grep -v $'^[[:space:]]*at \\|^[[:space:]]*\\.\\.\\. [0-9]* \\(more\\|common frames omitted\\)' "$LOGFILE" | tail -n 40 >&2 || true
}

running_pid() {
  [[ -f "$PIDFILE" ]] || return 1
  local pid; pid="$(cat "$PIDFILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against pid reuse: it must be our launcher.
  tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q PorticoOpenIGLauncher || return 1
  echo "$pid"
}

cmd_start() {
  [[ $# -eq 2 ]] || die "usage: openig.sh start <instance-dir> <port>"
  local inst port
  inst="$(cd "$1" 2>/dev/null && pwd)" || die "instance dir not found: $1"
  port="$2"
  [[ "$port" =~ ^[0-9]+$ ]] || die "bad port: $port"
  cmd_fetch >/dev/null   # idempotent and fast once fetched; recompiles the launcher if its source changed
  mkdir -p "$STATE/run"

  local pid
  if pid="$(running_pid)"; then
    if [[ "$(cat "$INFOFILE" 2>/dev/null)" == "$port $inst" ]]; then
      echo "openig ready at http://127.0.0.1:$port ($(head -1 "$STATE/VERSION"), $(sed -n 2p "$STATE/VERSION")) [already running, pid $pid]"
      return 0
    fi
    die "already running (pid $pid: $(cat "$INFOFILE" 2>/dev/null)); run 'openig.sh stop' first"
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "port $port on 127.0.0.1 is already in use"
  fi

  local logback="$STATE/logback-default.xml"
  [[ -r "$inst/config/logback.xml" ]] && logback="$inst/config/logback.xml"
  # shellcheck disable=SC2206
  local jopts=( ${OPENIG_JAVA_OPTS:-$JAVA_OPTS_DEFAULT} )
  local t0; t0="$(date +%s%N)"
  : > "$LOGFILE"
  # Same --add-opens as Tomcat's catalina.sh and OpenIG's own test JVMs; Nashorn/Groovy scripting need them.
  setsid nohup java "${jopts[@]}" \
    --add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.io=ALL-UNNAMED \
    --add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED \
    --add-opens=java.rmi/sun.rmi.transport=ALL-UNNAMED \
    -Djava.awt.headless=true \
    -Dopenig.base="$inst" \
    -Dlogback.configurationFile="$logback" \
    -Dportico.openig.version="$OPENIG_VERSION" \
    -Dportico.tomcat.dir="$STATE/run/tomcat-$port" \
    -cp "$STATE/lib/*:$STATE/classes" \
    PorticoOpenIGLauncher "$port" 127.0.0.1 \
    >>"$LOGFILE" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$PIDFILE"
  echo "$port $inst" > "$INFOFILE"

  local deadline=$(( $(date +%s) + START_TIMEOUT )) code
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "openig.sh: OpenIG exited during startup; log tail ($LOGFILE):" >&2
      log_tail
      rm -f "$PIDFILE" "$INFOFILE"
      exit 1
    fi
    code="$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$port/" || true)"
    if [[ -n "$code" && "$code" != "000" ]]; then break; fi
    if (( $(date +%s) >= deadline )); then
      echo "openig.sh: OpenIG not answering on 127.0.0.1:$port after ${START_TIMEOUT}s; log tail ($LOGFILE):" >&2
      log_tail
      cmd_stop >/dev/null 2>&1 || true
      exit 1
    fi
    sleep 0.1
  done
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  echo "openig ready at http://127.0.0.1:$port ($(head -1 "$STATE/VERSION"), $(sed -n 2p "$STATE/VERSION")) [pid $pid, GET / -> $code after ${ms} ms, log $LOGFILE]"
}

cmd_stop() {
  local pid
  if ! pid="$(running_pid)"; then
    rm -f "$PIDFILE" "$INFOFILE"
    echo "openig.sh: not running"
    return 0
  fi
  local port; port="$(awk '{print $1}' "$INFOFILE" 2>/dev/null || true)"
  kill -TERM "$pid" 2>/dev/null || true
  local _
  for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    echo "openig.sh: pid $pid ignored SIGTERM for 15s, sending SIGKILL" >&2
    kill -KILL "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -f "$PIDFILE" "$INFOFILE"
  if [[ -n "$port" ]] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "stopped pid $pid but 127.0.0.1:$port still accepts connections"
  fi
  echo "openig.sh: stopped (pid $pid)"
}

cmd_status() {
  local pid
  if pid="$(running_pid)"; then
    echo "running pid $pid, port/instance: $(cat "$INFOFILE" 2>/dev/null)"
  else
    echo "not running"; return 1
  fi
}

case "${1:-}" in
  fetch) shift; cmd_fetch "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  status) shift; cmd_status "$@" ;;
  pid) running_pid ;;
  *) echo "usage: $0 {fetch|start <instance-dir> <port>|stop|status|pid}" >&2; exit 2 ;;
esac
