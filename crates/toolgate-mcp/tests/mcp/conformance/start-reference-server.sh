#!/usr/bin/env bash
# Starts the conformance suite's reference server (the "everything server",
# `examples/servers/typescript/everything-server.ts` of the
# modelcontextprotocol/conformance repository at the tag matching the suite
# package.json pins, v0.1.16) on http://localhost:PORT/mcp, in the
# foreground.
#
#     start-reference-server.sh CONFORMANCE_CHECKOUT [PORT]
#
# CONFORMANCE_CHECKOUT is a checkout of that repository at v0.1.16 (the
# server is in no package registry, so it is not installed from here). Its
# own package-lock.json pins what it runs on (@modelcontextprotocol/sdk
# 1.27.1, express, zod, tsx); `npm ci` there brings them. PORT defaults to
# 3000. It listens on every interface (its own `app.listen(PORT)`); keep
# the port firewalled or use a loopback-only machine.
#
# Then, from this folder:  ./run.sh http://localhost:PORT/mcp
set -euo pipefail

src="${1:?usage: start-reference-server.sh CONFORMANCE_CHECKOUT [PORT]}"
port="${2:-3000}"
server="$src/examples/servers/typescript"
if [[ ! -f "$server/everything-server.ts" ]]; then
    echo "start-reference-server.sh: no $server/everything-server.ts (a checkout of modelcontextprotocol/conformance at v0.1.16?)" >&2
    exit 2
fi
cd "$server"
if [[ ! -x node_modules/.bin/tsx ]]; then
    npm ci --no-audit --no-fund --loglevel=error
fi
PORT="$port" exec node_modules/.bin/tsx everything-server.ts
