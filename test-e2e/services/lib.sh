# shellcheck shell=bash disable=SC2034  # PORTICO_PKGS_* are used by the scripts that source this file
# Shared helpers for the Portico e2e service scripts. Source it, do not run it:
#
#   . "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
#   portico_init <service-name>
#
# Conventions
# - Everything a script creates lives under $PORTICO_SERVICES_DIR
#   (default /tmp/portico-services), one sub-directory per service.
# - Progress goes to stderr; the only line on stdout is the final
#   "service <name> ready at <where> (<how to connect>)".
# - Every daemon listens on 127.0.0.1 only.
# - Daemons are started with fd 8 closed ("8>&-"): fd 8 holds the per-service
#   lock, and a daemon must not inherit it.

export DEBIAN_FRONTEND=noninteractive
PORTICO_SERVICES_DIR=$(realpath -m "${PORTICO_SERVICES_DIR:-/tmp/portico-services}")
export PORTICO_SERVICES_DIR
# One id per run: apt-get update runs at most once per id. all.sh exports its own.
export PORTICO_RUN_ID="${PORTICO_RUN_ID:-$$.$(date +%s)}"

PORTICO_HOST=127.0.0.1
PORTICO_T0=$(date +%s)
PORTICO_SERVICE=""
PORTICO_LOGS=()        # files whose tail is printed on failure

# ---------------------------------------------------------------- packages ---
# "package:probe" pairs. The probe is an absolute path that the package
# installs, or a command name looked up on PATH. all.sh installs the union of
# these in one apt transaction; each script also installs its own if missing.
PORTICO_PKGS_postgres=(
  postgresql-15:/usr/lib/postgresql/15/bin/initdb
  postgresql-client-15:/usr/lib/postgresql/15/bin/psql
)
PORTICO_PKGS_mariadb=(
  mariadb-server:/usr/sbin/mariadbd
  mariadb-server:/usr/bin/mariadb-install-db
  mariadb-client:/usr/bin/mariadb
)
PORTICO_PKGS_redis=(
  redis-server:/usr/bin/redis-server
  redis-tools:/usr/bin/redis-cli
)
PORTICO_PKGS_rsyslog=(
  rsyslog:/usr/sbin/rsyslogd
)
PORTICO_PKGS_chromium=(
  chromium:/usr/bin/chromium
  fonts-liberation:/usr/share/fonts/truetype/liberation
)
PORTICO_PKGS_nginx_wrk=(
  nginx:/usr/sbin/nginx
  wrk:/usr/bin/wrk
)
PORTICO_PKGS_elasticsearch=(
  maven:mvn
  unzip:unzip
  curl:curl
)
# Plus a Java >= 17 (openjdk-17-jre-headless), handled in elasticsearch.sh.

# ----------------------------------------------------------------- logging ---
portico_log() {
  printf '[%s %s] %s\n' "$(date +%H:%M:%S)" "${PORTICO_SERVICE:-portico}" "$*" >&2
}

# Prints the tail of each watched log written during this run (older ones
# would only mislead), long lines cut at 600 characters.
portico_tail_logs() {
  local f
  for f in "${PORTICO_LOGS[@]}"; do
    [[ -s $f ]] || continue
    (($(stat -c %Y "$f") >= PORTICO_T0)) || continue
    printf -- '----- last 40 lines of %s -----\n' "$f" >&2
    tail -n 40 "$f" | cut -c1-600 >&2 || true
  done
  printf -- '----- end of logs -----\n' >&2
}

portico_fail() {
  trap - ERR
  portico_log "FAILED: $*"
  portico_tail_logs
  exit 1
}

_portico_on_err() {
  local rc=$1 line=$2 cmd=$3
  trap - ERR
  # in a ( subshell ) the parent's trap reports it
  ((BASH_SUBSHELL == 0)) || exit "$rc"
  portico_log "FAILED: exit $rc at ${0##*/} line $line: $cmd"
  portico_tail_logs
  exit "$rc"
}

# Add a log file to the list printed on failure.
portico_watch_log() { PORTICO_LOGS+=("$@"); }

# portico_init <name>: state dir, ERR trap, per-service lock (fd 8).
portico_init() {
  PORTICO_SERVICE=$1
  set -o errtrace
  trap '_portico_on_err $? $LINENO "$BASH_COMMAND"' ERR
  if [[ $EUID -ne 0 ]]; then
    portico_fail "must run as root (installs packages and runs daemons as service users)"
  fi
  install -d -m 0755 "$PORTICO_SERVICES_DIR" "$PORTICO_SERVICES_DIR/logs"
  # The service users (postgres, mysql, portico-es) must be able to reach it.
  local d=$PORTICO_SERVICES_DIR
  while [[ $d != / && -n $d ]]; do
    if [[ ! -x $d ]] || [[ $(stat -c %A "$d") != ?????????[xt] ]]; then
      portico_fail "$d is not world-searchable; set PORTICO_SERVICES_DIR to a directory under /tmp"
    fi
    d=$(dirname "$d")
  done
  exec 8>"$PORTICO_SERVICES_DIR/.$PORTICO_SERVICE.lock"
  if ! flock -w 600 8; then
    portico_fail "another $PORTICO_SERVICE script holds $PORTICO_SERVICES_DIR/.$PORTICO_SERVICE.lock"
  fi
}

# portico_ready <name> <where> <how>: the one line on stdout.
portico_ready() {
  printf 'service %s ready at %s (%s)\n' "$1" "$2" "$3"
}

# -------------------------------------------------------------------- apt ---
_portico_probe() {
  local probe=$1
  if [[ $probe == /* ]]; then [[ -e $probe ]]; else command -v "$probe" >/dev/null 2>&1; fi
}

# portico_missing pkg:probe ... -> prints the packages whose probe is missing
portico_missing() {
  local spec out=()
  for spec in "$@"; do
    _portico_probe "${spec#*:}" && continue
    [[ " ${out[*]-} " == *" ${spec%%:*} "* ]] || out+=("${spec%%:*}")
  done
  ((${#out[@]})) && printf '%s\n' "${out[@]}"
  return 0
}

# portico_ensure pkg:probe ... -> apt-get installs what is missing (one
# transaction, no recommends), under a lock shared by all scripts, with
# apt-get update at most once per PORTICO_RUN_ID. Services are never started
# by the packages' maintainer scripts (policy-rc.d).
portico_ensure() {
  local missing spec aptlog="$PORTICO_SERVICES_DIR/logs/apt.log" created_policy=0 fd
  mapfile -t missing < <(portico_missing "$@")
  ((${#missing[@]})) || return 0
  exec {fd}>"$PORTICO_SERVICES_DIR/.apt.lock"
  flock -w 900 "$fd" || portico_fail "timed out waiting for the apt lock"
  mapfile -t missing < <(portico_missing "$@")   # someone else may have installed them
  if ((${#missing[@]})); then
    portico_watch_log "$aptlog"
    portico_log "apt-get install ${missing[*]}"
    local marker="$PORTICO_SERVICES_DIR/.apt-updated"
    if [[ $(cat "$marker" 2>/dev/null) != "$PORTICO_RUN_ID" ]]; then
      portico_log "apt-get update -qq"
      apt-get update -qq >>"$aptlog" 2>&1
      echo "$PORTICO_RUN_ID" >"$marker"
    fi
    # Keep packages from starting their system daemons (nginx on 0.0.0.0:80,
    # mariadb on :3306, ...) on machines that lack Docker's policy-rc.d.
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
      printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
      chmod 0755 /usr/sbin/policy-rc.d
      created_policy=1
    fi
    local rc=0
    apt-get install -y -q --no-install-recommends \
      -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300 \
      -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold \
      "${missing[@]}" >>"$aptlog" 2>&1 || rc=$?
    ((created_policy)) && rm -f /usr/sbin/policy-rc.d
    ((rc == 0)) || portico_fail "apt-get install ${missing[*]} failed (exit $rc)"
  fi
  flock -u "$fd"
  exec {fd}>&-
  for spec in "$@"; do
    _portico_probe "${spec#*:}" || portico_fail "package ${spec%%:*} installed but ${spec#*:} is still missing"
  done
}

# --------------------------------------------------------- processes/ports ---
# portico_alive <pid>: exists and is not a zombie (daemons are reparented to
# PID 1, which may reap them late).
portico_alive() {
  local st
  kill -0 "$1" 2>/dev/null || return 1
  st=$(sed -E 's/^.*\) ([A-Za-z]).*$/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $st && $st != Z && $st != X ]]
}

# portico_pid_alive <pidfile> <cmdline-regex>: prints the pid and returns 0 if
# the pidfile names a live process whose command line matches.
portico_pid_alive() {
  local pidfile=$1 re=$2 pid
  [[ -s $pidfile ]] || return 1
  pid=$(head -n1 "$pidfile" | tr -dc 0-9)
  [[ -n $pid ]] && portico_alive "$pid" || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -Eq -- "$re" || return 1
  echo "$pid"
}

# portico_port_open <port>: a TCP connect to 127.0.0.1:<port> succeeds.
portico_port_open() {
  (exec 3<>"/dev/tcp/$PORTICO_HOST/$1") 2>/dev/null
}

# portico_port_owner <port> [tcp|udp]: what listens there (ss line), if anything.
portico_port_owner() {
  local flag=-Hltnp
  [[ ${2:-tcp} == udp ]] && flag=-Hlunp
  ss "$flag" "sport = :$1" 2>/dev/null || true
}

# portico_require_free_port <port> [tcp|udp]: fail if something else listens.
portico_require_free_port() {
  local owner
  owner=$(portico_port_owner "$@")
  [[ -z $owner ]] || portico_fail "port ${2:-tcp}/$1 is already in use by something else: $owner"
}

# portico_wait_port <port> <timeout-seconds> [pid]: wait until it accepts TCP.
portico_wait_port() {
  local port=$1 timeout=$2 pid=${3:-} deadline=$((SECONDS + $2))
  while ((SECONDS < deadline)); do
    portico_port_open "$port" && return 0
    if [[ -n $pid ]] && ! portico_alive "$pid"; then
      portico_fail "process $pid exited before 127.0.0.1:$port opened"
    fi
    sleep 0.1
  done
  portico_fail "127.0.0.1:$port did not open within ${timeout}s"
}

# portico_wait_cmd <timeout-seconds> <command...>: retry until it succeeds.
portico_wait_cmd() {
  local timeout=$1 deadline=$((SECONDS + $1))
  shift
  while ((SECONDS < deadline)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  portico_fail "timed out after ${timeout}s waiting for: $*"
}

# portico_stop_pidfile <name> <pidfile> <cmdline-regex> [timeout] [signal]
# SIGTERM (or <signal>), wait, SIGKILL after the timeout. Only touches a
# process whose command line matches, so a recycled pid is left alone.
portico_stop_pidfile() {
  local name=$1 pidfile=$2 re=$3 timeout=${4:-30} sig=${5:-TERM} pid deadline
  if ! pid=$(portico_pid_alive "$pidfile" "$re"); then
    [[ -e $pidfile ]] && rm -f "$pidfile"
    portico_log "$name: not running"
    return 0
  fi
  portico_log "$name: stopping pid $pid (SIG$sig)"
  kill "-$sig" "$pid" 2>/dev/null || true
  deadline=$((SECONDS + timeout))
  while portico_alive "$pid" && ((SECONDS < deadline)); do sleep 0.1; done
  if portico_alive "$pid"; then
    portico_log "$name: still alive after ${timeout}s, SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    sleep 0.5
  fi
  rm -f "$pidfile"
  portico_log "$name: stopped"
}

# ------------------------------------------------------------- env / json ---
# The canonical keys, in file order. Scripts set theirs with portico_env_set;
# all.sh rewrites the whole file in this order.
PORTICO_ENV_KEYS=(
  PORTICO_PG_URL PORTICO_MYSQL_URL PORTICO_REDIS_URL
  PORTICO_SYSLOG_HOST PORTICO_SYSLOG_PORT PORTICO_SYSLOG_FILE
  PORTICO_ES_URL PORTICO_CHROMIUM
)

_portico_json_str() {
  local s=$1
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  printf '"%s"' "$s"
}

# portico_env_set KEY=VALUE ...: merge into $PORTICO_SERVICES_DIR/env (shell
# "export" lines) and env.json (flat object), atomically, under a lock.
portico_env_set() {
  local dir=$PORTICO_SERVICES_DIR kv fd key val k
  local -A vals=()
  local -a order=()
  exec {fd}>"$dir/.env.lock"
  flock -w 60 "$fd"
  if [[ -f $dir/.env.kv ]]; then
    while IFS= read -r kv; do
      [[ $kv == *=* ]] || continue
      key=${kv%%=*}
      [[ -v vals[$key] ]] || order+=("$key")
      vals[$key]=${kv#*=}
    done <"$dir/.env.kv"
  fi
  for kv in "$@"; do
    key=${kv%%=*}
    [[ -v vals[$key] ]] || order+=("$key")
    vals[$key]=${kv#*=}
  done
  # canonical keys first, then any others in insertion order
  local -a final=()
  for k in "${PORTICO_ENV_KEYS[@]}"; do [[ -v vals[$k] ]] && final+=("$k"); done
  for k in "${order[@]}"; do [[ " ${PORTICO_ENV_KEYS[*]} " == *" $k "* ]] || final+=("$k"); done
  {
    for k in "${final[@]}"; do printf '%s=%s\n' "$k" "${vals[$k]}"; done
  } >"$dir/.env.kv.tmp"
  {
    echo "# Portico e2e services; generated by test-e2e/services. Source it: . $dir/env"
    for k in "${final[@]}"; do
      val=${vals[$k]}
      printf "export %s='%s'\n" "$k" "${val//\'/\'\\\'\'}"
    done
  } >"$dir/env.tmp"
  {
    printf '{'
    local first=1
    for k in "${final[@]}"; do
      ((first)) || printf ','
      first=0
      printf '\n  %s: %s' "$(_portico_json_str "$k")" "$(_portico_json_str "${vals[$k]}")"
    done
    printf '\n}\n'
  } >"$dir/env.json.tmp"
  mv -f "$dir/.env.kv.tmp" "$dir/.env.kv"
  mv -f "$dir/env.tmp" "$dir/env"
  mv -f "$dir/env.json.tmp" "$dir/env.json"
  flock -u "$fd"
  exec {fd}>&-
}
