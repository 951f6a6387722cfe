//! baremcp: a synchronous Model Context Protocol server over stdio, with no async runtime.
//!
//! A server is a value: register tools as plain functions, then call [`Server::serve`] with
//! any `BufRead` and `Write` (or [`Server::serve_stdio`]). One thread reads one line at a
//! time, dispatches it, and writes the reply. Both MCP eras are spoken on one process,
//! decided per message: the legacy `initialize` handshake (2024-11-05 to 2025-11-25) and
//! stateless 2026-07-28 requests.
//!
//! ```
//! use baremcp::{Server, Tool};
//! use serde::Deserialize;
//! use serde_json::json;
//!
//! #[derive(Deserialize)]
//! struct Hello {
//!     name: String,
//! }
//!
//! let mut server = Server::new("greeter", "1.0.0");
//! server.add_tool(Tool::typed(
//!     "hello",
//!     "Greets someone by name",
//!     json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
//!     |args: Hello, _cx| Ok(format!("Hello, {}!", args.name)),
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
//!
//! # Conventions
//!
//! - **Configuration by value.** [`Server`], [`Tool`], [`Resource`], [`ResourceTemplate`] and
//!   [`Prompt`] are built with `new` (what each cannot do without) and then methods that take
//!   and return the value: `Server::new(..).title(..)`, `Tool::typed(..).annotations(..)`.
//! - **Registration by `&mut`, with a `Result`.** `add_tool`, `add_resource`, `add_template`,
//!   `add_prompt` and `add_root` refuse with an [`Error`] whose variants hold the problem as
//!   data (the tool, the JSON Pointer, why). `add_tool` returns the schema's [`Warning`]s
//!   (keywords known but not enforced), which are also logged.
//! - **Handlers are plain functions.** A tool handler returns `Result<_, HandlerError>`, any
//!   error boxed, so `?` works on every error; the model sees its text in an `isError`
//!   result. Handlers are `Fn` and run one at a time on the serving thread (they need not be
//!   `Send`): state lives in a `Cell` or `RefCell` the handler captures (see [`Tool`]).
//! - **What a handler may do** with the request (log, progress, cancellation, asking the
//!   client) is on its [`Context`].

#![deny(missing_docs)]
#![deny(clippy::print_stdout, clippy::print_stderr)]

// One folder per layer; bottom to top they are util, then crypto, wire and schema, then
// conn, registry, dispatch and transport. Each imports only the layers below it (checked by
// `tidy::layers_point_down`; ARCHITECTURE.md has the map).
mod conn;
mod crypto;
mod dispatch;
mod registry;
pub mod schema;
pub mod transport;
mod util;
mod wire;

pub use transport::http;
pub use util::encoding;

pub use conn::connection::ClientError;
pub use conn::context::Context;
pub use conn::principal::Principal;
pub use registry::error::{Error, Kind, Warning};
pub use registry::files::{FileRoot, read_regular_file};
pub use registry::prompt::{Prompt, PromptArgs, PromptMessage, Role};
pub use registry::resource::{Completer, Contents, ReadError, Resource, ResourceTemplate, Vars};
pub use registry::server::{DEFAULT_MAX_MESSAGE_BYTES, Server};
pub use registry::task::TaskContext;
pub use registry::task_tool::{Prepare, TaskHandler, TaskTool};
pub use registry::tool::{Content, Handler, HandlerError, Json, Tool, ToolOutput};
pub use transport::http::HttpOptions;
pub use wire::era::{LEGACY_VERSIONS, MODERN_VERSIONS};
pub use wire::error_code::ErrorCode;
pub use wire::jsonrpc::{ErrorObject, Id};
pub use wire::log_level::LogLevel;
