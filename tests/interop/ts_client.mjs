// The official TypeScript SDK client (@modelcontextprotocol/sdk@1.32.2) against baremcp over
// stdio, legacy era (initialize handshake). usage: node ts_client.mjs BAREMCP_BINARY
// Run from a directory whose node_modules holds the SDK (the interop script copies it there).

import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const transport = new StdioClientTransport({ command: process.argv[2], args: [] });
const client = new Client({ name: "baremcp-interop", version: "1.0.0" });
await client.connect(transport);

assert.equal(client.getServerVersion().name, "baremcp");
const { tools } = await client.listTools();
assert.deepEqual(tools.map((t) => t.name), ["hello", "calculate"]);

const hello = await client.callTool({ name: "hello", arguments: { name: "World" } });
assert.equal(hello.isError, undefined);
assert.equal(hello.content[0].text, "Hello, World!");

const calc = await client.callTool({ name: "calculate", arguments: { expression: "2 ^ 10" } });
assert.deepEqual(calc.structuredContent, { value: 1024 });

const bad = await client.callTool({ name: "calculate", arguments: { expression: "1 +" } });
assert.equal(bad.isError, true);
assert.match(bad.content[0].text, /syntax error at column 4/);

await client.close();
console.log(`typescript sdk (legacy): listed ${tools.length} tools, called hello and calculate`);
