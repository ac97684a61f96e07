#!/usr/bin/env bash
# redis-server on 127.0.0.1:16379, no persistence (no RDB, no AOF),
# daemonized, pidfile/log under $PORTICO_SERVICES_DIR/redis.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
portico_init redis

PORT=16379
ST=$PORTICO_SERVICES_DIR/redis
PIDFILE=$ST/redis.pid
LOG=$ST/redis.log
URL="redis://$PORTICO_HOST:$PORT"
portico_watch_log "$ST/redis.out" "$LOG"

portico_ensure "${PORTICO_PKGS_redis[@]}"
install -d -m 0755 "$ST"

if pid=$(portico_pid_alive "$PIDFILE" 'redis-server'); then
  portico_log "already running (pid $pid)"
else
  portico_require_free_port "$PORT"
  portico_log "starting on $PORTICO_HOST:$PORT"
  redis-server --bind "$PORTICO_HOST" --port "$PORT" --protected-mode yes \
    --save '' --appendonly no --daemonize yes \
    --pidfile "$PIDFILE" --logfile "$LOG" --dir "$ST" \
    </dev/null >>"$ST/redis.out" 2>&1 8>&-
fi
portico_wait_port "$PORT" 30
portico_wait_cmd 10 test -s "$PIDFILE"
[[ $(redis-cli -h "$PORTICO_HOST" -p "$PORT" ping) == PONG ]] || portico_fail "no PONG from $URL"

portico_env_set "PORTICO_REDIS_URL=$URL"
portico_ready redis "$PORTICO_HOST:$PORT" "$URL; redis-cli -h $PORTICO_HOST -p $PORT"
