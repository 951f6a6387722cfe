"""The official Python SDK (mcp==2.3.0) as a machine client of baremcp behind an
authorization server: ClientCredentialsOAuthProvider runs the OAuth client credentials grant
by itself, from baremcp's 401 (its RFC 9728 metadata, then the provider's) to the token for
baremcp's resource, then the client calls `hello`. No scope is configured: the SDK asks for
the one baremcp's 401 names (the MCP spec's scope selection). Run by oidc.sh.

usage: oidc_client.py URL ISSUER CLIENT_ID CLIENT_SECRET
"""

import asyncio
import base64
import json
import sys

import httpx2
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client


class Memory:
    """Token storage for one run."""

    def __init__(self):
        self.tokens = None
        self.client_info = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info):
        self.client_info = client_info


async def main(url: str, issuer: str, client_id: str, secret: str) -> None:
    storage = Memory()
    auth = ClientCredentialsOAuthProvider(
        server_url=url, storage=storage, client_id=client_id, client_secret=secret, issuer=issuer,
    )
    async with httpx2.AsyncClient(auth=auth) as http:
        async with Client(streamable_http_client(url, http_client=http)) as client:
            result = await client.call_tool("hello", {"name": "World"})
            text = result.content[0].text
            assert text == "Hello, World!", result
    payload = storage.tokens.access_token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    print(f"python: {text} (token for {claims['aud']}, scope {claims['scope']})")


asyncio.run(main(*sys.argv[1:]))
