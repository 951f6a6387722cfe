// The official TypeScript SDK client (@modelcontextprotocol/sdk@1.32.2) over Streamable HTTP
// against examples/everything --http, legacy era (initialize, Mcp-Session-Id): list and call
// tools, and answer the server's sampling and elicitation requests, which arrive on the
// tools/call's event stream while the call is in flight.
// usage: node ts_http_client.mjs URL   (run where node_modules holds the SDK)

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateMessageRequestSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
const client = new Client(
  { name: "baremcp-interop-http", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: {} } },
);
const asked = { sampling: 0, elicitation: 0 };
client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
  asked.sampling += 1;
  assert.equal(request.params.messages[0].content.text, "Test prompt for sampling");
  return { role: "assistant", content: { type: "text", text: "from the ts client" }, model: "m" };
});
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  asked.elicitation += 1;
  assert.equal(request.params.message, "Please provide your information");
  return { action: "accept", content: { username: "tsuser", email: "ts@example.com" } };
});
await client.connect(transport);
assert.ok(transport.sessionId, "the server issued a session id");

const { tools } = await client.listTools();
assert.ok(tools.some((t) => t.name === "test_sampling"));
const simple = await client.callTool({ name: "test_simple_text", arguments: {} });
assert.equal(simple.content[0].text, "This is a simple text response for testing.");

const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "Test prompt for sampling" } });
assert.equal(sampled.content[0].text, "LLM response: from the ts client");
const elicited = await client.callTool({ name: "test_elicitation", arguments: { message: "Please provide your information" } });
assert.match(elicited.content[0].text, /action=accept.*tsuser/);
assert.deepEqual(asked, { sampling: 1, elicitation: 1 });

const progress = [];
await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, {
  onprogress: (p) => progress.push(p.progress),
});
assert.deepEqual(progress, [0, 50, 100]);

await transport.terminateSession();
await client.close();
console.log(`typescript sdk over http (legacy): listed ${tools.length} tools; sampling, elicitation, progress ok`);
