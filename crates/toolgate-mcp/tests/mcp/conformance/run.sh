#!/usr/bin/env bash
# Runs the official MCP conformance suite's server scenarios
# (@modelcontextprotocol/conformance, the version package.json pins) against
# a streamable HTTP MCP endpoint, and prints the counts.
#
#     run.sh URL [SUITE] [extra conformance-server options…]
#
# URL is the MCP endpoint (e.g. http://127.0.0.1:3000/mcp: the reference
# server, or later `toolgate mcp --listen` in front of it). SUITE is the
# suite's own: active (default; the pending scenarios left out), all, or
# pending. Needs `npm ci` in this folder first (it brings Node 22, which the
# suite needs, as the npm package `node`).
#
# The suite's report goes to standard error; standard output gets one line
# per scenario (`PASS name checks=N` / `FAIL name checks=N failures=M`) and
# last `passed=N failed=M` (scenarios; a scenario passes when none of its
# checks is a FAILURE). Exit status: 0 when none failed, 1 when some did,
# 2 when the suite could not run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
url="${1:?usage: run.sh URL [active|all|pending] [options…]}"
suite="${2:-active}"
shift $(( $# >= 2 ? 2 : 1 ))

node="$here/node_modules/.bin/node"
suite_js="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
if [[ ! -x "$node" || ! -f "$suite_js" ]]; then
    echo "run.sh: no suite installed: (cd $here && npm ci)" >&2
    exit 2
fi

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# The suite's own exit status says only whether some scenario failed; the
# counts come from the checks.json of each scenario.
"$node" "$suite_js" server --url "$url" --suite "$suite" -o "$out" "$@" >&2 || true

"$node" - "$out" <<'JS'
const fs = require('node:fs');
const path = require('node:path');
const dir = process.argv[2];
let passed = 0;
let failed = 0;
for (const entry of fs.readdirSync(dir).sort()) {
    const file = path.join(dir, entry, 'checks.json');
    if (!fs.existsSync(file)) continue;
    // server-<scenario>-<ISO timestamp with - for : and .>
    const name = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    const checks = JSON.parse(fs.readFileSync(file, 'utf8'));
    const counted = checks.filter((c) => c.status === 'SUCCESS' || c.status === 'FAILURE');
    const failures = checks.filter((c) => c.status === 'FAILURE');
    if (failures.length === 0) {
        passed += 1;
        console.log(`PASS ${name} checks=${counted.length}`);
    } else {
        failed += 1;
        const what = failures.map((c) => c.id).join(',');
        console.log(`FAIL ${name} checks=${counted.length} failures=${failures.length} (${what})`);
    }
}
if (passed + failed === 0) {
    console.error('run.sh: the suite ran no scenario (is the server up at that URL?)');
    console.log('passed=0 failed=0');
    process.exit(2);
}
console.log(`passed=${passed} failed=${failed}`);
process.exit(failed === 0 ? 0 : 1);
JS
