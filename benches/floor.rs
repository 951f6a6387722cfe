//! Floor B for the benchmark: the plainest serde_json stdio server. Each line is parsed into
//! a `Value`, the reply is built as a `Value` and written, flushed once per message. It
//! answers `initialize` and `tools/call hello` and nothing else: the baseline baremcp is
//! measured against, not a server to use.

use std::io::{self, BufRead, BufWriter, Write};

use serde_json::{Value, json};

fn main() -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    for line in io::stdin().lock().lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(&line) {
            Ok(message) => message,
            Err(_) => {
                let error = json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": "parse error"}});
                serde_json::to_writer(&mut out, &error)?;
                out.write_all(b"\n")?;
                out.flush()?;
                continue;
            }
        };
        let Some(id) = message.get("id").cloned() else { continue };
        let reply = match message["method"].as_str() {
            Some("initialize") => json!({"jsonrpc": "2.0", "id": id, "result": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "floor", "version": "0"}
            }}),
            Some("tools/call") => {
                let name = message["params"]["arguments"]["name"].as_str().unwrap_or_default();
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": format!("Hello, {name}!")}]
                }})
            }
            _ => {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32601, "message": "method not found"}})
            }
        };
        serde_json::to_writer(&mut out, &reply)?;
        out.write_all(b"\n")?;
        out.flush()?;
    }
    out.flush()
}
