"""An MCP client (the official Python SDK, unchanged) that connects to
`toolgate mcp --listen` with the SDK's OAuth support and lists its tools.

    python oauth_client.py MCP_URL

The SDK is given no token: it meets the endpoint's 401, reads the
protected resource metadata it points to, discovers the authorization
server, registers itself (RFC 7591), and runs the authorization-code grant
with PKCE. The redirect to the authorization endpoint is followed here as a
browser would (the test's authorization server logs the user in without
asking) and the code handed back. One JSON object per step on standard
output: `tools` with the tool names, then `done`.
"""

import asyncio
import json
import sys
from urllib.parse import parse_qs, urlparse

import httpx2

from mcp import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

REDIRECT = "http://127.0.0.1:9/callback"


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def main() -> None:
    url = sys.argv[1]
    redirected: dict[str, str] = {}

    async def redirect_handler(authorization_url: str) -> None:
        emit("authorize", resource=parse_qs(urlparse(authorization_url).query).get("resource", [None])[0])
        async with httpx2.AsyncClient() as browser:
            answer = await browser.get(authorization_url)
        location = answer.headers["location"]
        query = parse_qs(urlparse(location).query)
        redirected["code"] = query["code"][0]
        redirected["state"] = query["state"][0]

    async def callback_handler() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=redirected["code"], state=redirected["state"])

    auth = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name="toolgate test client",
            redirect_uris=[REDIRECT],
            grant_types=["authorization_code"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=Memory(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    http = create_mcp_http_client(auth=auth)
    async with http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            listed = await client.list_tools()
            emit("tools", names=sorted(t.name for t in listed.tools))
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
