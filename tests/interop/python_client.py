"""The official Python SDK client (mcp==2.3.0) against baremcp over stdio.

usage: python_client.py BAREMCP_BINARY ROOT_DIR auto|legacy [RECORD_FILE]

'auto' is the SDK's default: it probes server/discover first and stays on 2026-07-28 when
the server answers. 'legacy' forces the initialize handshake. Either way the client lists
the tools and calls hello and calculate, lists and reads the files of ROOT_DIR (served with
--root), completes a path, and gets the code_review prompt; any mismatch raises and exits
non-zero. With RECORD_FILE the server is reached through `baremcp proxy --record`, which
writes the session as a transcript for `baremcp replay`.
"""

import asyncio
import sys

from mcp import Client, StdioServerParameters


async def main(binary: str, root: str, mode: str, record: str | None) -> None:
    server = ["--root", root]
    if record:
        server = ["proxy", "--record", record, "--", binary, *server]
    params = StdioServerParameters(command=binary, args=server)
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

        resources = await client.list_resources()
        by_name = {r.name: r for r in resources.resources}
        assert "hello.txt" in by_name and ".hidden" not in by_name, sorted(by_name)
        text = await client.read_resource(str(by_name["hello.txt"].uri))
        assert text.contents[0].text == "Hello from the tree.\n", text
        blob = await client.read_resource(str(by_name["pixel.png"].uri))
        assert blob.contents[0].mime_type == "image/png" and blob.contents[0].blob.startswith("iVBORw0KGgo"), blob
        templates = await client.list_resource_templates()
        assert templates.resource_templates[0].uri_template.endswith("/{+path}"), templates

        prompts = await client.list_prompts()
        assert [p.name for p in prompts.prompts] == ["code_review"], prompts
        prompt = await client.get_prompt("code_review", {"language": "rust", "focus": "safety"})
        assert "rust code, focusing on safety" in prompt.messages[0].content.text, prompt
    print(
        f"python sdk ({mode}, {version}): {len(names)} tools called, "
        f"{len(resources.resources)} resources listed and read, code_review prompt fetched"
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None))
