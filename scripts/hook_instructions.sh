#!/bin/sh
# The instructions one `toolgate hook` run executes (issue 34), counted by
# callgrind: repeatable to a few thousand instructions whatever else runs
# on the machine, unlike its wall-clock time (scripts/hook_latency.py).
#
# Usage: scripts/hook_instructions.sh TOOLGATE_BIN [STORE_URL]
# (EXTRA="--no-cache" to count a run that parses the schema text and
# type-checks the policies, as every run did before the hook remembered
# validated texts; SCHEMA_TEXT=1 to count a run that skips the type check
# but parses the schema text, as every run did before the hook kept the
# schema's JSON form: the kept form is removed and the cache folder made
# read-only before the counted run.)
#
# Runs the recorded Claude Code PreToolUse event (an allowed `Bash` call)
# through `TOOLGATE_BIN hook --agent claude --config
# examples/agents/toolgate.toml` three times to create and warm the store
# (a fresh SQLite file in a temporary folder unless STORE_URL is given),
# then once under callgrind, and prints the total and the ten costliest
# functions by inclusive count. Build the release binary first: cargo
# build --release -p toolgate-cli.
set -eu
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp"; rm -rf "$tmp"' EXIT
store=${2:-sqlite://$tmp/toolgate.db}
EXTRA=${EXTRA:---cache-dir $tmp/cache}
event=$root/crates/toolgate-cli/tests/hook/events/claude-pre-bash.json
n=0
run() {
    # Each run its own tool use id: a non-read call id is allowed once.
    n=$((n + 1))
    sed "s/toolu_01/toolu_$n/" "$event" >"$tmp/event"
    "$@" hook --agent claude --config "$root/examples/agents/toolgate.toml" \
        --store "$store" --timeout-ms 600000 $EXTRA <"$tmp/event" >"$tmp/answer" 2>"$tmp/stderr"
    grep -q '"permissionDecision":"allow"' "$tmp/answer" || {
        echo "unexpected answer: $(cat "$tmp/answer" "$tmp/stderr")" >&2
        exit 1
    }
}
for _ in 1 2 3; do run "$bin"; done
if [ "${SCHEMA_TEXT:-0}" = 1 ]; then
    rm -f "$tmp"/cache/schema-*.json
    chmod 500 "$tmp/cache"
fi
run valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$bin"
total=$(callgrind_annotate "$tmp/cg.out" 2>/dev/null | awk '/PROGRAM TOTALS/ {print $1}')
echo "instructions per hook run: $total"
callgrind_annotate --inclusive=yes "$tmp/cg.out" 2>/dev/null |
    grep -E '^ *[0-9,]+ ' | head -40 | grep -v -E 'PROGRAM TOTALS|\?\?\?|std::rt|core::ops::function|main$|lang_start' | head -12
