"""The official Python SDK client (mcp==2.3.0) against baremcp over stdio.

usage: python_client.py BAREMCP_BINARY auto|legacy

'auto' is the SDK's default: it probes server/discover first and stays on 2026-07-28 when
the server answers. 'legacy' forces the initialize handshake. Either way the client lists
the tools and calls hello and calculate; any mismatch raises and exits non-zero.
"""

import asyncio
import sys

from mcp import Client, StdioServerParameters


async def main(binary: str, mode: str) -> None:
    params = StdioServerParameters(command=binary, args=[])
    async with Client(params, mode=mode) as client:
        version = client.protocol_version
        expected = "2026-07-28" if mode == "auto" else "2025-11-25"
        assert version == expected, f"{mode}: negotiated {version}, expected {expected}"
        assert client.server_info is not None and client.server_info.name == "baremcp", client.server_info

        tools = await client.list_tools()
        names = [tool.name for tool in tools.tools]
        assert names == ["hello", "calculate"], names

        hello = await client.call_tool("hello", {"name": "World"})
        assert not hello.is_error, hello
        assert hello.content[0].text == "Hello, World!", hello

        calc = await client.call_tool("calculate", {"expression": "(1 + 2) * sqrt(16)"})
        assert not calc.is_error, calc
        assert calc.structured_content == {"value": 12}, calc

        bad = await client.call_tool("hello", {"name": ""})
        assert bad.is_error, bad
        assert "/name: must be at least 1 character long" in bad.content[0].text, bad
    print(f"python sdk ({mode}, {version}): listed {len(names)} tools, called hello and calculate")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
