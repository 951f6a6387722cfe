//! The `everything` server: every tool, resource, template, prompt, completion and utility
//! the official MCP conformance suite expects, built only with baremcp's public API. Run it
//! with `cargo run --example everything`; `server.rs` is the part to copy from.

mod modern;
mod server;
mod tasks;

use std::io;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = server::build()?;
    match server.serve_stdio() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
