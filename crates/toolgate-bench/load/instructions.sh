#!/usr/bin/env bash
# Instructions per durable decision of `toolgate serve` (issue 35, item 4),
# counted by callgrind: repeatable whatever else runs on the machine,
# unlike the CPU time cpu.sh reads. The shop's config with the durable
# SQLite store, as cpu.sh; the server runs under callgrind with
# instrumentation off until `examples/load.rs` has warmed it up, then
# counts N decisions at a low fixed rate (each batch of the group commit
# then holds about one record: the per-commit costs are all counted) and
# prints the instructions per decision by thread (the runtime workers: HTTP,
# gate, Cedar, store reads, response; the committer: the audit records'
# chain hash, inserts and commit) and the costliest functions.
# Usage: crates/toolgate-bench/load/instructions.sh [DECISIONS] [CONNECTIONS]
# (defaults 1000, 4). Builds in release mode (with debug info, the
# workspace's release profile), in CARGO_TARGET_DIR if set (NO_BUILD=1:
# the binaries there as they are). OUT=DIR keeps the callgrind files there.
set -euo pipefail
cd "$(dirname "$0")/../../.."
n="${1:-1000}"
conns="${2:-4}"
target="${CARGO_TARGET_DIR:-target}"

if [ -z "${NO_BUILD:-}" ]; then
  cargo build --release -q -p toolgate-cli
  cargo build --release -q -p toolgate-bench --example load
fi
bin="${BIN:-$target/release/toolgate}"
gen="${GEN:-$target/release/examples/load}"

work="$(mktemp -d)"
out="${OUT:-$work}"
mkdir -p "$out"
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cp -r examples/shop/toolgate.toml examples/shop/policies.cedar examples/shop/shop.cedarschema \
  examples/shop/entities.json examples/shop/schemas "$work/"
sed -i 's/^listen = .*/listen = "127.0.0.1:0"/' "$work/toolgate.toml"

rm -f "$out"/cg.out*
valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes \
  --callgrind-out-file="$out/cg.out" \
  "$bin" serve --config "$work/toolgate.toml" 2>"$work/server.log" &
server=$!
for _ in $(seq 1 600); do
  grep -q "serving on" "$work/server.log" 2>/dev/null && break
  sleep 0.1
done
addr="$(sed -n 's/^toolgate: serving on http:\/\///p' "$work/server.log")"
[ -n "$addr" ] || { cat "$work/server.log"; exit 1; }
# Warm-up: connections, caches, the store's first pages (uncounted).
"$gen" --addr "$addr" --rate 50 --seconds 4 --connections "$conns" >/dev/null
callgrind_control -i on "$server" >/dev/null
"$gen" --addr "$addr" --rate 50 --seconds "$(awk -v n="$n" 'BEGIN { print n / 50 }')" \
  --connections "$conns" | sed -n '1p;3p'
callgrind_control -d "$server" >/dev/null
# Every thread's dump (the final one at exit is empty: instrumentation
# counted only between `-i on` and the dump).
sleep 1
done_n="$n"
echo "instructions per decision ($done_n decisions; load average $(cut -d' ' -f1-3 /proc/loadavg)):"
total=0
for f in "$out"/cg.out.*-*; do
  [ -s "$f" ] || continue
  ir="$(callgrind_annotate "$f" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')"
  [ -n "$ir" ] && [ "$ir" != 0 ] || continue
  name="$(sed -n 's/^cmd: //p;' "$f" | head -1)"
  thread="$(sed -n 's/^thread: //p' "$f" | head -1)"
  total=$((total + ir))
  printf '  thread %-3s %10.1f k\n' "$thread" "$(awk -v i="$ir" -v n="$done_n" 'BEGIN { print i / n / 1000 }')"
done
printf '  whole server %6.1f k\n' "$(awk -v i="$total" -v n="$done_n" 'BEGIN { print i / n / 1000 }')"
