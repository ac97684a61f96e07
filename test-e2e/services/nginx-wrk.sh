#!/usr/bin/env bash
# nginx and wrk for the benchmarks. Installs only; starts nothing (the
# Debian package's own nginx service is never started, see lib.sh).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
portico_init nginx-wrk

portico_ensure "${PORTICO_PKGS_nginx_wrk[@]}"

NGINX=$(command -v nginx || echo /usr/sbin/nginx)
WRK=$(command -v wrk)
nginx_v=$("$NGINX" -v 2>&1 | sed -n 's|.*nginx/||p')
# "wrk -v" prints its version and exits non-zero
wrk_v=$({ "$WRK" -v 2>&1 || true; } | awk 'NR==1 {sub(/^debian\//, "", $2); print $2}')
[[ -n $nginx_v && -n $wrk_v ]] || portico_fail "cannot run nginx -v / wrk -v"

portico_ready nginx-wrk "$NGINX,$WRK" "installed only, nothing started: nginx $nginx_v, wrk $wrk_v; run nginx with its own -p/-c, pid and temp paths"
