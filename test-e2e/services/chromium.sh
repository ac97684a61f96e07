#!/usr/bin/env bash
# Debian's chromium (plus fonts-liberation), checked with a headless
# --dump-dom of about:blank. Starts no daemon.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
portico_init chromium

ST=$PORTICO_SERVICES_DIR/chromium
CHECKLOG=$ST/check.log
portico_watch_log "$CHECKLOG"

portico_ensure "${PORTICO_PKGS_chromium[@]}"
install -d -m 0755 "$ST"
BIN=/usr/bin/chromium

# The flags tests should use too (root needs --no-sandbox; no network calls home).
FLAGS=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage
  --disable-background-networking --disable-component-update --no-first-run
  --disable-sync --disable-quic)
profile=$(mktemp -d "$ST/profile.XXXXXX")
cleanup() { rm -rf "$profile"; }
trap cleanup EXIT

VERSION=$("$BIN" --version 2>>"$CHECKLOG" | head -n1)
portico_log "checking $VERSION headless"
rc=0
dom=$(timeout -k 5 90 "$BIN" "${FLAGS[@]}" --user-data-dir="$profile" --dump-dom about:blank \
  </dev/null 2>>"$CHECKLOG" 8>&-) || rc=$?
((rc == 0)) || portico_fail "chromium --dump-dom exited $rc"
[[ $dom == *'<html><head></head><body></body></html>'* ]] ||
  portico_fail "unexpected --dump-dom output: ${dom:0:200}"

portico_env_set "PORTICO_CHROMIUM=$BIN"
portico_ready chromium "$BIN" "$VERSION; headless: $BIN ${FLAGS[*]} --user-data-dir=<tmp dir>; no daemon"
