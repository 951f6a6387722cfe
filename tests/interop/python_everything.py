"""The official Python SDK client (mcp==2.3.0) with sampling and elicitation callbacks
against examples/everything, over stdio, or over Streamable HTTP (`streamable_http_client`)
when given the URL of `examples/everything --http`.

usage: python_everything.py EVERYTHING_BINARY|URL auto|legacy

In the legacy era the server sends sampling/createMessage and elicitation/create while the
tools/call is in flight; in 2026-07-28 ('auto') it answers with an InputRequiredResult and
the SDK retries with the callbacks' answers. Either way test_sampling and test_elicitation
must complete with the callbacks' data, and the logging and progress fixtures must reach
the client.
"""

import asyncio
import sys
import warnings

import mcp.types as types
from mcp import Client, StdioServerParameters

# logging/setLevel is deprecated in 2026-07-28 but is the legacy era's way to ask for logs.
warnings.filterwarnings("ignore", message="The logging capability is deprecated")

calls = {"sampling": 0, "elicitation": 0}


async def sampling(context, params):
    calls["sampling"] += 1
    assert params.messages[0].content.text == "Test prompt for sampling", params
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="This is a test response from the client"),
        model="test-model",
        stop_reason="endTurn",
    )


async def elicitation(context, params):
    calls["elicitation"] += 1
    assert params.message == "Please provide your information", params
    assert params.requested_schema["required"] == ["username", "email"], params
    return types.ElicitResult(action="accept", content={"username": "testuser", "email": "test@example.com"})


async def main(binary: str, mode: str) -> None:
    logs = []

    async def logging(params):
        logs.append(params.data)

    http = binary.startswith("http://")
    async with Client(
        binary if http else StdioServerParameters(command=binary, args=[]),
        mode=mode,
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        logging_callback=logging,
        log_level="debug",
    ) as client:
        version = client.protocol_version
        sampled = await client.call_tool("test_sampling", {"prompt": "Test prompt for sampling"})
        assert sampled.content[0].text == "LLM response: This is a test response from the client", sampled
        elicited = await client.call_tool("test_elicitation", {"message": "Please provide your information"})
        assert "action=accept" in elicited.content[0].text and "testuser" in elicited.content[0].text, elicited
        assert calls == {"sampling": 1, "elicitation": 1}, calls

        if mode == "legacy":
            await client.set_logging_level("debug")
        await client.call_tool("test_tool_with_logging", {})
        assert logs[-3:] == ["Tool execution started", "Tool processing data", "Tool execution completed"], logs

        progress = []

        async def on_progress(value, total, message):
            progress.append(value)

        await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        assert progress == [0, 50, 100], progress

        templates = await client.list_resource_templates()
        assert templates.resource_templates[0].uri_template == "test://template/{id}/data", templates
        data = await client.read_resource("test://template/123/data")
        assert "123" in data.contents[0].text, data
        prompt = await client.get_prompt("test_prompt_with_arguments", {"arg1": "testValue1", "arg2": "testValue2"})
        assert "testValue1" in prompt.messages[0].content.text, prompt
    print(f"python sdk everything ({'http' if http else 'stdio'}, {mode}, {version}): sampling, elicitation, logging, progress, resources, prompts ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
