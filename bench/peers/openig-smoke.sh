#!/usr/bin/env bash
# End-to-end check of bench/peers/openig.sh, loopback only, bounded in time (about 2 minutes):
#   1. fetch; a temporary instance with one proxy route; a 100-byte node upstream
#   2. start OpenIG, time start -> first proxied response, curl through it
#   3. wrk -t1 -c50 -d10s against OpenIG (after a 10 s warm-up run) and against the upstream; OpenIG's VmRSS
#   4. an instance with 1000 path-condition routes: start time, route load time, wrk on the first/last route
#   5. stop everything it started and check both ports are closed
# Environment: OPENIG_SMOKE_PORT (default 18080), OPENIG_SMOKE_UPSTREAM_PORT (default 18081),
# OPENIG_SMOKE_DURATION (wrk seconds, default 10), OPENIG_SMOKE_KEEP=1 keeps the temp dir.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
OIG="$HERE/openig.sh"
PORT="${OPENIG_SMOKE_PORT:-18080}"
UPORT="${OPENIG_SMOKE_UPSTREAM_PORT:-18081}"
DUR="${OPENIG_SMOKE_DURATION:-10}"
NODE="$HERE/../../node_modules/.bin/node"
[[ -x "$NODE" ]] || NODE="$(command -v node)" || { echo "node not found" >&2; exit 1; }
command -v wrk >/dev/null || { echo "wrk not found (apt-get install wrk)" >&2; exit 1; }

TMP="$(mktemp -d /tmp/openig-smoke.XXXXXX)"
UPID=""
cleanup() {
  "$OIG" stop >/dev/null 2>&1 || true
  if [[ -n "$UPID" ]]; then kill "$UPID" 2>/dev/null || true; wait "$UPID" 2>/dev/null || true; fi
  [[ "${OPENIG_SMOKE_KEEP:-0}" == 1 ]] || rm -rf "$TMP"
}
trap cleanup EXIT

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
for p in "$PORT" "$UPORT"; do port_open "$p" && { echo "port $p already in use" >&2; exit 1; }; done

"$OIG" fetch

# --- upstream: 100-byte body ------------------------------------------------------------------
cat > "$TMP/upstream.js" <<'EOF'
const http = require('http');
const body = Buffer.alloc(100, 'x');
http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length }); res.end(body); });
}).listen(Number(process.argv[2]), '127.0.0.1');
EOF
"$NODE" "$TMP/upstream.js" "$UPORT" > "$TMP/upstream.log" 2>&1 &
UPID=$!
for _ in $(seq 1 50); do port_open "$UPORT" && break; sleep 0.1; done

# --- instance with one route -----------------------------------------------------------------
make_instance() { # dir
  mkdir -p "$1/config/routes"
  printf '{"handler": {"type": "Router", "config": {"directory": "%s/config/routes", "scanInterval": "disabled"}}}\n' \
    "$1" > "$1/config/config.json"
}
I1="$TMP/one"; make_instance "$I1"
printf '{"name": "proxy", "baseURI": "http://127.0.0.1:%s", "handler": "ClientHandler"}\n' "$UPORT" \
  > "$I1/config/routes/proxy.json"

first_proxied() { # path -> ms from now until a 200 through OpenIG (started by this function)
  local inst="$1" path="$2" t0 code
  t0="$(now_ms)"
  "$OIG" start "$inst" "$PORT" >&2
  for _ in $(seq 1 600); do
    code="$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$PORT$path" || true)"
    [[ "$code" == 200 ]] && { echo $(( $(now_ms) - t0 )); return 0; }
    sleep 0.05
  done
  echo "no 200 on $path" >&2; return 1
}

wrk_run() { # url label [pid-for-rss]
  local url="$1" label="$2" pid="${3:-}" rssf="$TMP/rss.txt" sampler=""
  : > "$rssf"
  if [[ -n "$pid" ]]; then
    ( end=$(( $(date +%s) + DUR )); while (( $(date +%s) < end )); do
        awk '/VmRSS/ {print $2}' "/proc/$pid/status" 2>/dev/null >> "$rssf"; sleep 0.5; done ) &
    sampler=$!
  fi
  wrk -t1 -c50 -d"${DUR}s" --latency "$url" > "$TMP/wrk.txt"
  [[ -n "$sampler" ]] && wait "$sampler"
  local rps p50 p99 errs rss=""
  rps="$(awk '/Requests\/sec/ {print $2}' "$TMP/wrk.txt")"
  p50="$(awk '$1 == "50%" {print $2}' "$TMP/wrk.txt")"
  p99="$(awk '$1 == "99%" {print $2}' "$TMP/wrk.txt")"
  errs="$(grep -E 'Non-2xx|Socket errors' "$TMP/wrk.txt" | tr -s ' ' | tr '\n' ';' || true)"
  [[ -n "$pid" ]] && rss=", max VmRSS $(( $(sort -n "$rssf" | tail -1) / 1024 )) MiB"
  printf '  %-34s %9s req/s  p50 %-8s p99 %-8s%s %s\n' "$label" "$rps" "$p50" "$p99" "$rss" "$errs"
}

echo "== one route"
ms="$(first_proxied "$I1" /hello)"
echo "  start -> first proxied response: ${ms} ms"
LOG="${PORTICO_BENCH_DIR:-/tmp/portico-bench}/openig/run/openig.log"
grep 'portico-openig-launcher.*listening' "$LOG" | sed 's/^/  /'
body="$(curl -s -D "$TMP/h.txt" "http://127.0.0.1:$PORT/hello")"
echo "  curl through OpenIG: $(head -1 "$TMP/h.txt" | tr -d '\r'), ${#body} bytes"
PID="$("$OIG" pid)"
echo "  VmRSS idle: $(awk '/VmRSS/ {print $2}' "/proc/$PID/status") kB"
wrk_run "http://127.0.0.1:$PORT/hello" "openig (warm-up run)" "$PID"
wrk_run "http://127.0.0.1:$PORT/hello" "openig" "$PID"
wrk_run "http://127.0.0.1:$UPORT/hello" "upstream direct"
echo "  VmHWM after load: $(awk '/VmHWM/ {print $2}' "/proc/$PID/status") kB"
"$OIG" stop

echo "== 1000 routes with path conditions"
I2="$TMP/thousand"; make_instance "$I2"
for i in $(seq 0 999); do
  # shellcheck disable=SC2016  # ${...} is OpenIG's expression syntax, not the shell's
  printf '{"name": "r%d", "condition": "${matches(request.uri.path, '"'"'^/r%d/'"'"')}", "baseURI": "http://127.0.0.1:%s", "handler": "ClientHandler"}\n' \
    "$i" "$i" "$UPORT" > "$I2/config/routes/r$i.json"
done
ms="$(first_proxied "$I2" /r999/x)"
loaded="$(grep -c 'Loaded the route' "$LOG" || true)"
span="$(grep 'Loaded the route' "$LOG" | sed -n '1p;$p' | awk '{split($1,t,/[:.]/); print ((t[1]*60+t[2])*60+t[3])*1000+t[4]}' \
  | tr '\n' ' ' | awk '{print $2-$1}')"
echo "  routes loaded: $loaded; first->last route load: ${span} ms; start -> first proxied /r999/x: ${ms} ms"
grep 'portico-openig-launcher' "$LOG" | sed 's/^/  /'
for p in /r0/x /r500/x /r999/x /nomatch; do echo "  GET $p -> $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT$p")"; done
PID="$("$OIG" pid)"
wrk_run "http://127.0.0.1:$PORT/r0/x" "openig /r0/ (warm-up run)" "$PID"
wrk_run "http://127.0.0.1:$PORT/r0/x" "openig /r0/ (first route)" "$PID"
wrk_run "http://127.0.0.1:$PORT/r999/x" "openig /r999/ (last route)" "$PID"
"$OIG" stop

kill "$UPID" 2>/dev/null || true; wait "$UPID" 2>/dev/null || true; UPID=""
for p in "$PORT" "$UPORT"; do
  if port_open "$p"; then echo "port $p still open" >&2; exit 1; fi
done
echo "== all stopped; 127.0.0.1:$PORT and :$UPORT closed"
