//! The smallest useful server: one tool, served on stdio. Try it with
//! `cargo run --example minimal` and paste an initialize and a tools/call.

use baremcp::{Server, Tool, ToolOutput};
use serde_json::json;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("minimal", "0.1.0").instructions("Ask me to shout something.");
    server.add_tool(Tool::new(
        "shout",
        "Returns the text in capitals",
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "minLength": 1 } },
            "required": ["text"]
        }),
        |args, _cx| {
            let text = args["text"].as_str().unwrap_or_default();
            Ok(ToolOutput::text(text.to_uppercase()))
        },
    ))?;
    // A client that closes its end, stdin or stdout, ends this with Ok.
    server.serve_stdio()?;
    Ok(())
}
