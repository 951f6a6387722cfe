//! baremcp: a synchronous Model Context Protocol server over stdio, with no async runtime.
//!
//! A server is a value: register tools as plain functions, then call [`Server::serve`] with
//! any `BufRead` and `Write`. One thread reads one line at a time, dispatches it, and writes
//! the reply. Both MCP eras are spoken on one process, decided per message: the legacy
//! `initialize` handshake (2024-11-05 to 2025-11-25) and stateless 2026-07-28 requests.
//!
//! ```
//! use baremcp::{Server, Tool, ToolOutput};
//! use serde_json::json;
//!
//! let mut server = Server::new("greeter", "1.0.0");
//! server.add_tool(Tool::new(
//!     "hello",
//!     "Greets someone by name",
//!     json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
//!     |args, _cx| Ok(ToolOutput::text(format!("Hello, {}!", args["name"].as_str().unwrap_or_default()))),
//! ))?;
//!
//! let input = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hello","arguments":{"name":"World"}}}
//! "#;
//! let mut output = Vec::new();
//! server.serve(&mut &input[..], &mut output)?;
//! let last = String::from_utf8(output)?.lines().last().unwrap().to_string();
//! assert_eq!(last, r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"Hello, World!"}]}}"#);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(clippy::print_stdout, clippy::print_stderr)]

mod conn;
mod context;
mod decode;
mod dispatch;
pub mod encoding;
mod era;
mod error;
mod files;
pub mod http;
mod jsonrpc;
mod log_level;
mod methods;
mod outbox;
mod params;
mod prompt;
mod request;
mod resource;
mod scan;
pub mod schema;
mod serve;
mod server;
mod session;
mod stamp;
mod state;
mod task;
mod tasks;
mod tool;
pub mod transport;

pub use context::{ClientError, Context, LogLevel};
pub use era::{LEGACY_VERSIONS, MODERN_VERSIONS};
pub use error::{Error, Kind, Warning};
pub use files::{FileRoot, read_regular_file};
pub use http::HttpOptions;
pub use jsonrpc::{ErrorObject, Id};
pub use prompt::{Prompt, PromptArgs, PromptMessage, Role};
pub use resource::{Completer, Contents, ReadError, Resource, ResourceTemplate, Vars};
pub use server::{DEFAULT_MAX_MESSAGE_BYTES, Server};
pub use tasks::{Prepare, TaskContext, TaskHandler, TaskTool};
pub use tool::{Content, Handler, HandlerError, Json, Tool, ToolOutput};
