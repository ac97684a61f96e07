#!/usr/bin/env bash
# Install (if missing) and start (if not running) every e2e service, then
# write $PORTICO_SERVICES_DIR/env and env.json. Elasticsearch, the slowest,
# runs in the background while the others run. Safe to run again.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/lib.sh"
PORTICO_RUN_ID="all.$$.$(date +%s)"
export PORTICO_RUN_ID
portico_init all

T0=$EPOCHREALTIME
LOGDIR=$PORTICO_SERVICES_DIR/logs
elapsed() { awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN {printf "%.1f", b - a}'; }

declare -A took=() status=()
failed=()

# 1. Elasticsearch in the background (download/unpack/JVM start overlap the rest)
es_t0=$EPOCHREALTIME
"$HERE/elasticsearch.sh" >"$LOGDIR/elasticsearch.ready" &
es_pid=$!

# 2. One apt transaction for everything the other scripts need
t=$EPOCHREALTIME
if ! (portico_ensure "${PORTICO_PKGS_postgres[@]}" "${PORTICO_PKGS_mariadb[@]}" \
  "${PORTICO_PKGS_redis[@]}" "${PORTICO_PKGS_rsyslog[@]}" \
  "${PORTICO_PKGS_chromium[@]}" "${PORTICO_PKGS_nginx_wrk[@]}"); then
  portico_log "the combined apt install failed; each script retries its own packages"
fi
took[apt]=$(elapsed "$t")

# 3. The others, one after another
for name in postgres mariadb redis rsyslog chromium nginx-wrk; do
  t=$EPOCHREALTIME
  rc=0
  "$HERE/$name.sh" >"$LOGDIR/$name.ready" || rc=$?
  took[$name]=$(elapsed "$t")
  if ((rc == 0)); then status[$name]=$(tail -n1 "$LOGDIR/$name.ready"); else
    status[$name]="FAILED (exit $rc; see the log tail above)"
    failed+=("$name")
  fi
done

# 4. Wait for Elasticsearch
rc=0
wait "$es_pid" || rc=$?
took[elasticsearch]=$(elapsed "$es_t0")
if ((rc == 0)); then status[elasticsearch]=$(tail -n1 "$LOGDIR/elasticsearch.ready"); else
  status[elasticsearch]="FAILED (exit $rc; see the log tail above)"
  failed+=(elasticsearch)
fi

# 5. env + env.json (every script also merges its own keys as it goes)
if ((${#failed[@]} == 0)); then
  portico_env_set \
    "PORTICO_PG_URL=postgres://portico:portico@127.0.0.1:15432/portico" \
    "PORTICO_MYSQL_URL=mysql://portico:portico@127.0.0.1:13306/portico" \
    "PORTICO_REDIS_URL=redis://127.0.0.1:16379" \
    "PORTICO_SYSLOG_HOST=127.0.0.1" \
    "PORTICO_SYSLOG_PORT=15514" \
    "PORTICO_SYSLOG_FILE=$PORTICO_SERVICES_DIR/rsyslog/received.log" \
    "PORTICO_ES_URL=http://127.0.0.1:19200" \
    "PORTICO_CHROMIUM=/usr/bin/chromium"
fi

{
  echo
  echo "== portico e2e services ($PORTICO_SERVICES_DIR) =="
  printf '  %-14s %6ss\n' apt-install "${took[apt]}"
  for name in postgres mariadb redis rsyslog chromium nginx-wrk elasticsearch; do
    printf '  %-14s %6ss  %s\n' "$name" "${took[$name]}" "${status[$name]}"
  done
  echo "  env: . $PORTICO_SERVICES_DIR/env   (also $PORTICO_SERVICES_DIR/env.json)"
  echo "  stop: $HERE/stop.sh"
} >&2

# stdout: the ready lines, then the total
for name in postgres mariadb redis rsyslog chromium nginx-wrk elasticsearch; do
  [[ ${status[$name]} == service* ]] && echo "${status[$name]}"
done
if ((${#failed[@]})); then
  echo "all.sh: FAILED: ${failed[*]} (total $(elapsed "$T0")s)"
  exit 1
fi
echo "all.sh: all services ready in $(elapsed "$T0")s"
