//! The `everything` server: every tool, resource, template, prompt, completion and utility
//! the official MCP conformance suite expects, built only with baremcp's public API. Run it
//! with `cargo run --example everything` (stdio) or `cargo run --example everything -- --http
//! 127.0.0.1:8080` (Streamable HTTP, with the other `--http-*` flags of the binary);
//! `server.rs` is the part to copy from.

/// The binary's `--http` flags, read the same way.
#[path = "../../src/bin/baremcp/http_flags.rs"]
mod http_flags;
mod modern;
mod server;
mod tasks;

use std::io;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let options = http_flags::parse(std::env::args_os().skip(1))?;
    let server = server::build()?;
    if !options.listen.is_empty() {
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn")).init();
        return Ok(server.serve_http(&options)?);
    }
    match server.serve_stdio() {
        Err(e) if e.kind() != io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}
