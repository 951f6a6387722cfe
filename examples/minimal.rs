//! The smallest useful server: one typed tool on stdio (`cargo run --example minimal`).
use baremcp::{Server, Tool, tool_args};

tool_args! {
    /// What to shout.
    #[derive(serde::Deserialize)]
    struct Shout {
        /// The text to put in capitals.
        #[schema(minLength = 1, examples = ["hello"])]
        text: String,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut server = Server::new("minimal", "0.1.0").instructions("Ask me to shout something.");
    server.add_tool(Tool::typed("shout", "Returns the text in capitals", |args: Shout, _cx| {
        Ok(args.text.to_uppercase())
    }))?;
    // A client that closes its end, stdin or stdout, ends this with Ok.
    Ok(server.serve_stdio()?)
}
