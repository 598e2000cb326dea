// An MCP client built on the official TypeScript SDK (npm
// @modelcontextprotocol/sdk, the version package.json pins, unchanged)
// that connects to `toolgate mcp --listen` with the SDK's OAuth support
// and lists its tools.
//
//     node oauth_client.mjs MCP_URL
//
// The SDK is given no token: it meets the endpoint's 401, reads the
// protected resource metadata, discovers the authorization server,
// registers itself, and sends the user to the authorization endpoint with
// PKCE. That redirect is followed here as a browser would (the test's
// authorization server logs the user in without asking); the code goes
// back through the transport's finishAuth, and the client connects again.
// One JSON object per step on standard output: `authorize` (the resource
// asked for), `tools` (the names), `done`. Read by
// crates/toolgate-cli/tests/mcp_oauth.rs.

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

function emit(step, fields = {}) {
    const sorted = { step };
    for (const k of Object.keys(fields).sort()) sorted[k] = fields[k];
    process.stdout.write(`${JSON.stringify(sorted)}\n`);
}

const url = new URL(process.argv[2]);
const REDIRECT = 'http://127.0.0.1:9/callback';
let clientInformation;
let tokens;
let verifier;
let code;

const provider = {
    get redirectUrl() {
        return REDIRECT;
    },
    get clientMetadata() {
        return {
            client_name: 'toolgate test client',
            redirect_uris: [REDIRECT],
            grant_types: ['authorization_code'],
            response_types: ['code'],
            token_endpoint_auth_method: 'none',
        };
    },
    clientInformation: () => clientInformation,
    saveClientInformation: (info) => {
        clientInformation = info;
    },
    tokens: () => tokens,
    saveTokens: (t) => {
        tokens = t;
    },
    redirectToAuthorization: async (authorizationUrl) => {
        emit('authorize', { resource: authorizationUrl.searchParams.get('resource') });
        const answer = await fetch(authorizationUrl, { redirect: 'manual' });
        code = new URL(answer.headers.get('location')).searchParams.get('code');
    },
    saveCodeVerifier: (v) => {
        verifier = v;
    },
    codeVerifier: () => verifier,
};

async function connect() {
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    const client = new Client({ name: 'toolgate-oauth-test', version: '0.0.0' });
    await client.connect(transport);
    return client;
}

let client;
try {
    client = await connect();
} catch (error) {
    if (!(error instanceof UnauthorizedError) || code === undefined) throw error;
    const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
    await transport.finishAuth(code);
    client = await connect();
}
const listed = await client.listTools();
emit('tools', { names: listed.tools.map((t) => t.name).sort() });
await client.close();
emit('done');
