#!/usr/bin/env bash
# Load test of `toolgate serve` at loopback with the SQLite store (durable:
# every decision's audit record is fsynced, in group commits, before its
# answer is written):
#   1. wrk at full rate (closed loop) -> decisions/s
#   2. the fixed-rate generator (examples/load.rs) at half that rate -> p50/p99
#   3. `toolgate audit verify` and a count of the records written
# Usage: crates/toolgate-bench/load/run.sh [SECONDS] [CONNECTIONS]
# Needs wrk (Debian: apt-get install wrk). Builds in release mode.
set -euo pipefail
cd "$(dirname "$0")/../../.."
seconds="${1:-20}"
conns="${2:-64}"
command -v wrk >/dev/null || { echo "run.sh: wrk is needed (apt-get install wrk)" >&2; exit 2; }

cargo build --release -q -p toolgate-cli
cargo build --release -q -p toolgate-bench --example load
bin=target/release/toolgate
gen=target/release/examples/load

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
echo "toolgate serve on $addr, store $work/toolgate.db ($(nproc) cores)"

echo; echo "== full rate: wrk -t2 -c$conns -d${seconds}s"
wrk -t2 -c"$conns" -d"${seconds}s" --latency -s crates/toolgate-bench/load/decide.lua "http://$addr" \
  | tee "$work/wrk.txt"
rate="$(sed -n 's/^decisions\/s: //p' "$work/wrk.txt")"
half=$((rate / 2))

echo; echo "== half rate: $half/s, latency from the scheduled send"
"$gen" --addr "$addr" --rate "$half" --seconds "$seconds" --connections 32

kill -TERM "$server"; wait "$server" || true; server=""
echo; echo "== audit"
"$bin" audit verify --config "$work/toolgate.toml"
allow="$("$bin" audit export --jsonl --config "$work/toolgate.toml" | grep -c '"verdict":"allow"' || true)"
echo "allow records: $allow"
