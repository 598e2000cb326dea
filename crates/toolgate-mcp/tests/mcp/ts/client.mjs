// An MCP client built on the official TypeScript SDK (npm
// @modelcontextprotocol/sdk, the version package.json pins, unchanged)
// driving examples/mcp/server.py (FastMCP) through `toolgate mcp`.
//
//     node client.mjs ERA SCENARIO TOOLGATE_BIN CONFIG PYTHON SERVER_PY
//
// ERA is `latest` (the SDK offers its own LATEST_PROTOCOL_VERSION) or a
// protocol version to offer instead (`2025-06-18`, `2025-03-26`). The SDK's
// Client has no option for the version it offers: it always sends
// LATEST_PROTOCOL_VERSION in `initialize`. So a legacy era is offered by
// a transport wrapper (OfferVersion below) that rewrites that one field of
// the outgoing initialize request; everything else (the negotiation check,
// the handshake, the calls) is the SDK's own code.
//
// SCENARIO is one of: list, allowed, denied, approval, coercion.
//
// It starts `TOOLGATE_BIN mcp --config CONFIG -- PYTHON SERVER_PY` with the
// SDK's StdioClientTransport and prints one JSON object per step on
// standard output ({"step": …, "is_error": …, "text": …, "structured": …},
// "tools"/"schemas" for a list, and an "initialize" step first), ending
// with {"step":"done"}. crates/toolgate-mcp/tests/mcp_ts.rs reads them.
// The server logs what it receives to the file env MCP_TEST_SEEN names.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

function emit(step, fields = {}) {
    const keys = Object.keys(fields).sort();
    const sorted = { step };
    for (const k of keys) sorted[k] = fields[k];
    process.stdout.write(`${JSON.stringify(sorted)}\n`);
}

/**
 * A Transport in front of another one. When `offer` is set, the
 * `initialize` request the Client sends leaves with
 * `params.protocolVersion = offer`; the version the server answers with
 * (and the one the Client then hands to setProtocolVersion) is recorded.
 */
class OfferVersion {
    constructor(inner, offer) {
        this.inner = inner;
        this.offer = offer;
        this.offered = undefined;
        this.answered = undefined;
        this.clientSet = undefined;
        this.initializeId = undefined;
        inner.onmessage = (message, extra) => {
            if (this.initializeId !== undefined && message.id === this.initializeId && message.result) {
                this.answered = message.result.protocolVersion;
            }
            this.onmessage?.(message, extra);
        };
        inner.onclose = () => this.onclose?.();
        inner.onerror = (error) => this.onerror?.(error);
    }

    get sessionId() {
        return this.inner.sessionId;
    }

    start() {
        return this.inner.start();
    }

    close() {
        return this.inner.close();
    }

    send(message, options) {
        if (message.method === 'initialize') {
            this.initializeId = message.id;
            if (this.offer !== undefined) {
                message = { ...message, params: { ...message.params, protocolVersion: this.offer } };
            }
            this.offered = message.params.protocolVersion;
        }
        return this.inner.send(message, options);
    }

    setProtocolVersion(version) {
        this.clientSet = version;
        this.inner.setProtocolVersion?.(version);
    }
}

function resultFields(result) {
    const texts = (result.content ?? []).filter((b) => b.type === 'text').map((b) => b.text);
    return {
        is_error: result.isError === true,
        text: texts.join('\n'),
        structured: result.structuredContent ?? null,
    };
}

async function call(client, step, name, args) {
    let fields;
    try {
        fields = resultFields(await client.callTool({ name, arguments: args }));
    } catch (e) {
        // A JSON-RPC error, or the SDK's own check of the result.
        fields = { error: e?.constructor?.name ?? 'Error', message: String(e?.message ?? e) };
    }
    emit(step, fields);
    return fields;
}

const REFUND = { order_id: 'ord_1', amount_cents: 500 };

const scenarios = {
    async list(client) {
        const { tools } = await client.listTools();
        const schemas = {};
        for (const t of tools) schemas[t.name] = t.inputSchema;
        emit('list', { tools: tools.map((t) => t.name).sort(), schemas });
    },

    async allowed(client) {
        await client.listTools(); // the SDK caches the output schemas it then checks
        await call(client, 'add_allowed', 'add', { a: 2, b: 3 });
        await call(client, 'weather', 'weather', { city: 'Kyoto' });
    },

    async denied(client) {
        await call(client, 'unregistered', 'secret_admin', {});
        await call(client, 'add_extra', 'add', { a: 2, b: 3, extra: 'x' });
        await call(client, 'refund_bad_order', 'refund', { order_id: 'x; drop', amount_cents: 500 });
    },

    async approval(client, { toolgate, config }) {
        const held = await call(client, 'refund_held', 'refund', REFUND);
        const match = /approval (\S+);/.exec(held.text ?? '');
        if (match) {
            const approved = spawnSync(toolgate, ['approvals', 'approve', match[1], '--config', config], {
                encoding: 'utf8',
            });
            emit('approve', { id: match[1], code: approved.status, stderr: approved.stderr });
        }
        await call(client, 'refund_retry', 'refund', REFUND);
        await call(client, 'refund_again', 'refund', REFUND);
    },

    async coercion(client) {
        // FastMCP would coerce "2" to 2 and run add(2, 3).
        await call(client, 'add_strings', 'add', { a: '2', b: '3' });
        // The same call with integers still runs, so the refusal above is the gate's.
        await call(client, 'add_ints', 'add', { a: 2, b: 3 });
    },
};

async function main() {
    const [era, scenario, toolgate, config, python, server] = process.argv.slice(2);
    if (!server || !(scenario in scenarios)) {
        process.stderr.write(`usage: node client.mjs ERA (${Object.keys(scenarios).join('|')}) TOOLGATE CONFIG PYTHON SERVER_PY\n`);
        process.exit(2);
    }
    const sdk = JSON.parse(
        readFileSync(new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url), 'utf8'),
    );
    const stdio = new StdioClientTransport({
        command: toolgate,
        args: ['mcp', '--config', config, '--', python, server],
        env: { ...getDefaultEnvironment(), MCP_TEST_SEEN: process.env.MCP_TEST_SEEN ?? '' },
        stderr: 'inherit',
    });
    const transport = new OfferVersion(stdio, era === 'latest' ? undefined : era);
    const client = new Client({ name: 'toolgate-ts-test', version: '0.0.0' });
    await client.connect(transport);
    emit('initialize', {
        sdk_version: sdk.version,
        sdk_latest: LATEST_PROTOCOL_VERSION,
        offered: transport.offered,
        answered: transport.answered ?? null,
        client_set: transport.clientSet ?? null,
        server: client.getServerVersion()?.name ?? null,
    });
    await scenarios[scenario](client, { toolgate, config });
    await client.close();
    emit('done');
}

main().catch((e) => {
    process.stderr.write(`client failed: ${e?.stack ?? e}\n`);
    process.exit(1);
});
