//! The smallest useful server: one typed tool, served on stdio. Run it with
//! `cargo run --example minimal` and paste an initialize and a tools/call.

use baremcp::{Server, Tool};
use serde::Deserialize;
use serde_json::json;

/// The tool's arguments, decoded once they have passed the schema.
#[derive(Deserialize)]
struct Shout {
    text: String,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("minimal", "0.1.0").instructions("Ask me to shout something.");
    server.add_tool(Tool::typed(
        "shout",
        "Returns the text in capitals",
        json!({
            "type": "object",
            "properties": { "text": { "type": "string", "minLength": 1 } },
            "required": ["text"],
            "examples": [{ "text": "hello" }]
        }),
        |args: Shout, _cx| Ok(args.text.to_uppercase()),
    ))?;
    // A client that closes its end, stdin or stdout, ends this with Ok.
    server.serve_stdio()?;
    Ok(())
}
