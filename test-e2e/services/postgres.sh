#!/usr/bin/env bash
# Throwaway PostgreSQL 15 on 127.0.0.1:15432 (trust auth, fsync off), data and
# unix socket under $PORTICO_SERVICES_DIR/postgres. Role/db portico/portico.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
portico_init postgres

PORT=15432
PGBIN=/usr/lib/postgresql/15/bin
ST=$PORTICO_SERVICES_DIR/postgres
DATA=$ST/data
LOG=$ST/postgres.log
URL="postgres://portico:portico@$PORTICO_HOST:$PORT/portico"
portico_watch_log "$ST/initdb.log" "$ST/pg_ctl.log" "$LOG"

portico_ensure "${PORTICO_PKGS_postgres[@]}"
id -u postgres >/dev/null 2>&1 || portico_fail "user postgres is missing (it comes with postgresql-common)"
install -d -o postgres -g postgres -m 0755 "$ST"

as_pg() { runuser -u postgres -- "$@"; }

if [[ ! -s $DATA/PG_VERSION ]]; then
  portico_log "initdb $DATA"
  rm -rf "$DATA"
  as_pg "$PGBIN/initdb" -D "$DATA" -U postgres --auth=trust -E UTF8 --locale=C \
    --no-sync --no-instructions >"$ST/initdb.log" 2>&1
  cat >>"$DATA/postgresql.conf" <<EOF

# ---- portico e2e (test-e2e/services/postgres.sh) ----
listen_addresses = '$PORTICO_HOST'
port = $PORT
unix_socket_directories = '$ST'
max_connections = 200
# throwaway data: durability off for speed
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
fi

if as_pg "$PGBIN/pg_ctl" -D "$DATA" status >/dev/null 2>&1; then
  portico_log "already running (pid $(head -n1 "$DATA/postmaster.pid"))"
else
  portico_require_free_port "$PORT"
  portico_log "starting on $PORTICO_HOST:$PORT"
  setsid -w runuser -u postgres -- "$PGBIN/pg_ctl" -D "$DATA" -l "$LOG" -w -t 60 start \
    </dev/null >>"$ST/pg_ctl.log" 2>&1 8>&-
fi
portico_wait_port "$PORT" 30

PSQL=("$PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$ST" -p "$PORT" -U postgres -d postgres)
"${PSQL[@]}" >/dev/null <<'SQL'
DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'portico') THEN
    CREATE ROLE portico LOGIN PASSWORD 'portico';
  ELSE
    ALTER ROLE portico LOGIN PASSWORD 'portico';
  END IF;
END $$;
SELECT 'CREATE DATABASE portico OWNER portico ENCODING ''UTF8'''
WHERE NOT EXISTS (SELECT FROM pg_database WHERE datname = 'portico')\gexec
SQL

# Check what tests will do: TCP, password, as portico.
[[ $("$PGBIN/psql" -X -tA "$URL" -c 'SELECT current_user || current_database()') == porticoportico ]] ||
  portico_fail "cannot query $URL"

portico_env_set "PORTICO_PG_URL=$URL"
portico_ready postgres "$PORTICO_HOST:$PORT" "$URL; superuser: psql -h $ST -p $PORT -U postgres"
