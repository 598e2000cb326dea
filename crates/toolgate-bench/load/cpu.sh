#!/usr/bin/env bash
# Server CPU per durable decision of `toolgate serve` (issue 35, item 4):
# the shop's config, SQLite store (durable), `examples/load.rs` at a fixed
# rate over keep-alive connections; the server's user + system CPU time is
# read from /proc/PID/stat before and after each run and divided by the
# decisions answered. CPU time moves much less with other load on the
# machine than latency does; still, run it on a quiet machine.
# Usage: crates/toolgate-bench/load/cpu.sh [RATE] [SECONDS] [CONNECTIONS] [RUNS]
# (defaults 3000/s, 8 s, 64 connections, 3 runs). Builds in release mode,
# in CARGO_TARGET_DIR if set (NO_BUILD=1: the binaries there as they are).
set -euo pipefail
cd "$(dirname "$0")/../../.."
rate="${1:-3000}"
seconds="${2:-8}"
conns="${3:-64}"
runs="${4:-3}"

target="${CARGO_TARGET_DIR:-target}"

if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release -q -p toolgate-cli
  cargo build --release -q -p toolgate-bench --example load
fi
bin="${BIN:-$target/release/toolgate}"
gen="${GEN:-$target/release/examples/load}"

work="$(mktemp -d)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cp -r examples/shop/toolgate.toml examples/shop/policies.cedar examples/shop/shop.cedarschema \
  examples/shop/entities.json examples/shop/schemas "$work/"
sed -i 's/^listen = .*/listen = "127.0.0.1:0"/' "$work/toolgate.toml"

"$bin" serve --config "$work/toolgate.toml" 2>"$work/server.log" &
server=$!
for _ in $(seq 1 100); do
  grep -q "serving on" "$work/server.log" 2>/dev/null && break
  sleep 0.1
done
addr="$(sed -n 's/^toolgate: serving on http:\/\///p' "$work/server.log")"
[ -n "$addr" ] || { cat "$work/server.log"; exit 1; }
tick="$(getconf CLK_TCK)"
# Fields 14 and 15 of /proc/PID/stat: user and system time in ticks (the
# command name, field 2, has no spaces here).
cpu_ticks() { awk '{print $14 + $15}' "/proc/$server/stat"; }
echo "toolgate serve on $addr ($(nproc) cores), $rate/s for ${seconds} s over $conns connections"
# Warm-up: connections, caches, the store's first pages.
"$gen" --addr "$addr" --rate "$rate" --seconds 2 --connections "$conns" >/dev/null
for run in $(seq 1 "$runs"); do
  before="$(cpu_ticks)"
  out="$("$gen" --addr "$addr" --rate "$rate" --seconds "$seconds" --connections "$conns" || true)"
  after="$(cpu_ticks)"
  n="$(echo "$out" | sed -n 's/.*: \([0-9]*\) requests in.*/\1/p')"
  echo "$out" | sed -n '2p;3p'
  awk -v b="$before" -v a="$after" -v t="$tick" -v n="$n" -v r="$run" \
    'BEGIN { printf "run %d: %d decisions, server CPU %.0f us per decision\n", r, n, (a - b) / t * 1e6 / n }'
done
