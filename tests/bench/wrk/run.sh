#!/usr/bin/env bash
# The REST service benchmark: wrk against a real `linkwise serve` on loopback, 64 connections for
# 10 s each on GET /healthz, GET /v1/instances?gpu=H100 and POST /v1/recommendations: once with the
# same body every time (Llama 3.1 70B pre-training searched over the whole catalog,
# data/examples/recommend-llama3.1-70b.json; answered from the service's cache after the first), once
# with a different workload per request (linkwise.lua's WRK_VARY mix: model presets, sequence
# lengths and node limits in turn, every body numbered, so every request is planned). GET
# /v1/instances runs twice too: as wrk asks (no Accept-Encoding: 51 KB of JSON per answer) and as
# curl --compressed, Python requests and browsers ask (Accept-Encoding: gzip: 7 KB).
#
#   bash tests/bench/wrk/run.sh            # after building build/bin/linkwise
#
# Knobs (environment): LINKWISE_BIN (build/bin/linkwise), CONNECTIONS (64), PLANNER_CONNECTIONS (16:
# the varied line, every request a search, within the server's admission), DURATION (10s),
# WRK_THREADS (1: wrk and the server share this machine's cores), SERVER_THREADS (64: one per
# connection, as cpp-httplib serves a kept-alive connection on one pool thread; planner searches
# still run one per core), PORT (18090). Note `uptime`'s load with the figures: the cores are shared.
set -euo pipefail
cd "$(dirname "$0")/../../.."
BIN=${LINKWISE_BIN:-build/bin/linkwise}
CONNECTIONS=${CONNECTIONS:-64}
PLANNER_CONNECTIONS=${PLANNER_CONNECTIONS:-16}
DURATION=${DURATION:-10s}
WRK_THREADS=${WRK_THREADS:-1}
SERVER_THREADS=${SERVER_THREADS:-64}
PORT=${PORT:-18090}
SCRIPT=tests/bench/wrk/linkwise.lua
WORKLOAD=data/examples/recommend-llama3.1-70b.json

tmp=$(mktemp -d)
"$BIN" serve --port "$PORT" --db "$tmp/bench.db" --threads "$SERVER_THREADS" --quiet 2>"$tmp/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null && break
  sleep 0.1
done
curl -sf "http://127.0.0.1:$PORT/healthz" >/dev/null || { cat "$tmp/server.log"; exit 1; }

echo "linkwise REST benchmark: $(nproc) cores, load $(cut -d" " -f1-3 /proc/loadavg), wrk -t$WRK_THREADS -c$CONNECTIONS (varied: -c$PLANNER_CONNECTIONS) -d$DURATION, server --threads $SERVER_THREADS"
printf '%-38s %12s %10s %10s %8s\n' "endpoint" "requests/s" "p50 ms" "p99 ms" "failed"
bench() {  # name, url, [body file], [1: a different body each request], [wrk options...]
  local line connections=$CONNECTIONS
  # Every varied request is a search: the server admits one per core plus 16 waiting and answers
  # the rest 503 + Retry-After (README "Limits"), so that line keeps its clients within admission.
  [ -n "${4:-}" ] && connections=$PLANNER_CONNECTIONS
  line=$(WRK_BODY=${3:-} WRK_VARY=${4:-} wrk -t"$WRK_THREADS" -c"$connections" -d"$DURATION" -s "$SCRIPT" "${@:5}" "$2" |
         grep '^RESULT')
  # shellcheck disable=SC2086
  local $(echo "${line#RESULT }")
  printf '%-38s %12s %10s %10s %8s\n' "$1" "$requests_per_s" "$p50_ms" "$p99_ms" "$failed"
  [ "$failed" -eq 0 ] || { echo "bench: $1 had $failed failed requests" >&2; exit 1; }
}
bench "GET /healthz" "http://127.0.0.1:$PORT/healthz"
bench "GET /v1/instances?gpu=H100" "http://127.0.0.1:$PORT/v1/instances?gpu=H100"
bench "GET /v1/instances?gpu=H100 (gzip)" "http://127.0.0.1:$PORT/v1/instances?gpu=H100" "" "" \
  -H "Accept-Encoding: gzip"
# The cached line measures answers from the cache: one request first fills it (64 identical
# requests at once would otherwise all miss, and those beyond admission get 503 + Retry-After).
curl -sf -o /dev/null -H "Content-Type: application/json" --data-binary "@$WORKLOAD" \
  "http://127.0.0.1:$PORT/v1/recommendations"
bench "POST /v1/recommendations" "http://127.0.0.1:$PORT/v1/recommendations" "$WORKLOAD"
bench "POST /v1/recommendations (varied)" "http://127.0.0.1:$PORT/v1/recommendations" "" 1
