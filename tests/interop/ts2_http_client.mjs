// The TypeScript SDK v2 client (@modelcontextprotocol/client@2.4.0) over Streamable HTTP in
// its 2026-07-28 mode (versionNegotiation pinned: server/discover, then stateless POSTs
// carrying the per-request headers and _meta), against examples/everything --http: list and
// call tools; sampling and elicitation come back as input_required results, which the client
// fulfils through its handlers and retries with the signed requestState.
// usage: node ts2_http_client.mjs URL   (run where node_modules holds the v2 client)

import assert from "node:assert/strict";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
const client = new Client(
  { name: "baremcp-interop-http-v2", version: "1.0.0" },
  { capabilities: { sampling: {}, elicitation: {} }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
const asked = { sampling: 0, elicitation: 0 };
client.setRequestHandler("sampling/createMessage", async (request) => {
  asked.sampling += 1;
  assert.equal(request.params.messages[0].content.text, "Test prompt for sampling");
  return { role: "assistant", content: { type: "text", text: "from the v2 client" }, model: "m" };
});
client.setRequestHandler("elicitation/create", async (request) => {
  asked.elicitation += 1;
  assert.equal(request.params.message, "Please provide your information");
  return { action: "accept", content: { username: "v2user", email: "v2@example.com" } };
});
await client.connect(transport);
assert.equal(transport.sessionId, undefined, "2026-07-28 has no sessions");

const { tools } = await client.listTools();
assert.ok(tools.some((t) => t.name === "test_sampling"));
const simple = await client.callTool({ name: "test_simple_text", arguments: {} });
assert.equal(simple.content[0].text, "This is a simple text response for testing.");
const sampled = await client.callTool({ name: "test_sampling", arguments: { prompt: "Test prompt for sampling" } });
assert.equal(sampled.content[0].text, "LLM response: from the v2 client");
const elicited = await client.callTool({ name: "test_elicitation", arguments: { message: "Please provide your information" } });
assert.match(elicited.content[0].text, /action=accept.*v2user/);
assert.deepEqual(asked, { sampling: 1, elicitation: 1 });

await client.close();
console.log(`typescript sdk v2 over http (2026-07-28): listed ${tools.length} tools; sampling, elicitation ok`);
