#!/usr/bin/env bash
# Stop every daemon the service scripts started, by pidfile, then check that
# their ports are closed. --purge also deletes $PORTICO_SERVICES_DIR (data,
# logs, unpacked Elasticsearch; the ~/.m2 zip cache stays).
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/lib.sh"
purge=0
for arg in "$@"; do
  case $arg in
    --purge) purge=1 ;;
    *) echo "usage: $0 [--purge]" >&2; exit 2 ;;
  esac
done
portico_init stop
D=$PORTICO_SERVICES_DIR

portico_stop_pidfile elasticsearch "$D/elasticsearch/elasticsearch.pid" 'org\.elasticsearch' 60
# the (empty) perf-data dir one of ES's helper JVMs leaves behind
rmdir /tmp/hsperfdata_portico-es 2>/dev/null || true
# SIGINT is PostgreSQL's "fast" shutdown (SIGTERM would wait for clients)
portico_stop_pidfile postgres "$D/postgres/data/postmaster.pid" 'postgres' 60 INT
portico_stop_pidfile mariadb "$D/mariadb/mariadbd.pid" 'mariadbd|mysqld' 60
portico_stop_pidfile redis "$D/redis/redis.pid" 'redis-server' 30
portico_stop_pidfile rsyslog "$D/rsyslog/rsyslogd.pid" 'rsyslogd' 30

busy=()
for p in 19200 19300 15432 13306 16379 15514; do
  owner=$(portico_port_owner "$p")
  [[ -z $owner ]] || busy+=("tcp/$p: $owner")
done
owner=$(portico_port_owner 15514 udp)
[[ -z $owner ]] || busy+=("udp/15514: $owner")
if ((${#busy[@]})); then
  printf 'still listening:\n' >&2
  printf '  %s\n' "${busy[@]}" >&2
  exit 1
fi

if ((purge)); then
  case $D in
    / | /tmp | /root | /home | "") portico_fail "refusing to delete $D" ;;
  esac
  exec 8>&-
  rm -rf -- "$D"
  portico_log "deleted $D"
fi
echo "stopped: all portico e2e services are down (ports 15432 13306 16379 15514 19200 19300 closed)"
