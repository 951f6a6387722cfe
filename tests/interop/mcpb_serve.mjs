// Serves from an unpacked MCP Bundle as Claude Desktop would: the command line comes from
// the bundle's manifest through the mcpb package's own getMcpConfigForManifest (variables
// and user_config filled in), then an initialize, tools/list and resources/list go through
// the unpacked binary over stdio.
//
//   usage: node mcpb_serve.mjs UNPACKED_DIR FOLDER
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, sep } from "node:path";
import { createInterface } from "node:readline";
import { getMcpConfigForManifest } from "@anthropic-ai/mcpb";

const [dir, folder] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(dir, "manifest.json"), "utf8"));
const config = await getMcpConfigForManifest({
  manifest,
  extensionPath: dir,
  systemDirs: {},
  userConfig: { folder },
  pathSeparator: sep,
});
if (!config) throw new Error("the manifest gave no server command");

const child = spawn(config.command, config.args, { stdio: ["pipe", "pipe", "inherit"] });
const replies = [];
createInterface({ input: child.stdout }).on("line", (line) => replies.push(JSON.parse(line)));
const send = (message) => child.stdin.write(JSON.stringify({ jsonrpc: "2.0", ...message }) + "\n");
send({ id: 1, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "mcpb-test", version: "1.0.0" } } });
send({ method: "notifications/initialized" });
send({ id: 2, method: "tools/list" });
send({ id: 3, method: "resources/list" });
child.stdin.end();
const status = await new Promise((resolve) => child.on("exit", resolve));

const fail = (why) => { console.error(`mcpb: ${why}\n${JSON.stringify(replies)}`); process.exit(1); };
if (status !== 0) fail(`the bundled server exited with ${status}`);
if (replies.length !== 3) fail(`expected 3 replies, got ${replies.length}`);
if (replies[0].result?.serverInfo?.name !== "baremcp") fail("no initialize result");
// The tools the bundle declares (shown in the install dialog) are the ones the binary lists.
const listed = replies[1].result.tools;
const declared = manifest.tools;
const names = (tools) => tools.map((t) => t.name).sort().join(",");
if (names(listed) !== names(declared)) fail(`declared ${names(declared)}, listed ${names(listed)}`);
for (const tool of declared) {
  const served = listed.find((t) => t.name === tool.name);
  if (!served.description.startsWith(tool.description)) fail(`${tool.name}: "${tool.description}" is not how the binary describes it`);
}
if (!replies[2].result.resources.some((r) => r.name === "hello.txt")) fail("the chosen folder's files are not served");
console.log(`mcpb: ${config.command} ${config.args.join(" ")}: initialize, ${listed.length} tools, ${replies[2].result.resources.length} resources`);
