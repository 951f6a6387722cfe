//! baremcp: a synchronous Model Context Protocol server, with no async runtime.
//!
//! A server is a value: register tools, resources and prompts as plain functions, then call
//! [`Server::serve_stdio`], [`Server::serve`] with any `BufRead` and `Write`, or
//! [`Server::serve_http`]. One thread reads one message at a time, dispatches it, and writes
//! the reply. Both MCP eras are spoken on one process, decided per message: the legacy
//! `initialize` handshake (2024-11-05 to 2025-11-25) and stateless 2026-07-28 requests.
//!
//! This page is the library's guide; every example on it is a tested program. The
//! repository's `docs/library.md` has the same topics for reading outside rustdoc.
//!
//! ```
//! use baremcp::{Server, Tool, tool_args};
//!
//! tool_args! {
//!     /// Whom to greet.
//!     #[derive(serde::Deserialize)]
//!     struct Hello {
//!         /// Their name.
//!         name: String,
//!     }
//! }
//!
//! let mut server = Server::new("greeter", "1.0.0");
//! server.add_tool(Tool::typed("hello", "Greets someone by name", |args: Hello, _cx| {
//!     Ok(format!("Hello, {}!", args.name))
//! }))?;
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
//!   `add_prompt` and `add_directory` refuse with an [`Error`] whose variants hold the
//!   problem as data (the tool, the JSON Pointer, why). `add_tool` returns the schema's
//!   [`Warning`]s (keywords known but not enforced), which are also logged.
//! - **Handlers are plain functions.** A handler returns `Result<_, HandlerError>`, any
//!   error boxed, so `?` works on every error; the model sees its text in an `isError`
//!   result. Handlers are `Fn` and run one at a time on the serving thread (they need not be
//!   `Send`): state lives in a `Cell` or `RefCell` the handler captures (see [`Tool`]).
//! - **What a handler may do** with the request (log, progress, cancellation, asking the
//!   client) is on its [`Context`].
//!
//! # A tool
//!
//! [`Tool::new`] takes a name, a description, the JSON Schema of the arguments and a handler
//! that gets them as JSON, already validated against the schema. It returns a
//! [`ToolOutput`]: text, [`Content`] blocks (images, audio, resource links), structured
//! content, and whether the call failed in a way the model should see.
//!
//! ```
//! use baremcp::{Content, Json, Server, Tool, ToolOutput, encoding};
//! use serde_json::json;
//!
//! let schema = json!({
//!     "type": "object",
//!     "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 20}},
//!     "required": ["n"]
//! });
//! let factorial = Tool::new("factorial", "n!", schema, |args, _cx| {
//!     let n = args["n"].as_u64().ok_or("n must be an integer")?;
//!     Ok(Json(json!({"factorial": (1..=n).product::<u64>()})).into())
//! })
//! .title("Factorial")
//! .annotations(json!({"readOnlyHint": true}));
//!
//! let dot = Tool::new("dot", "A one-pixel image", json!({"type": "object"}), |_, _| {
//!     let png = encoding::base64(b"\x89PNG...");
//!     Ok(ToolOutput::text("here it is")
//!         .with(Content::Image { data: png, mime_type: "image/png".into() }))
//! });
//!
//! let mut server = Server::new("maths", "1.0.0");
//! server.add_tool(factorial)?;
//! server.add_tool(dot)?;
//! # Ok::<(), baremcp::Error>(())
//! ```
//!
//! A structured result ([`Json`], or [`ToolOutput::structured`]) is also sent as JSON text
//! in a last text block, as MCP asks for clients that only read `content`;
//! [`Tool::structured_text`]`(false)` turns that copy off. A tool declared with
//! [`Tool::output_schema`] must return structured content that satisfies it. Before
//! 2026-07-28 `structuredContent` and an output schema's root are objects: a session of those
//! revisions gets any other structured value as the text block alone, and the tool listed
//! without such a schema. A handler that panics becomes an `isError` result, and the server keeps serving.
//!
//! # Typed arguments
//!
//! [`Tool::typed`] hands the handler its arguments decoded into a type of yours, and lists
//! that type's JSON Schema ([`Describe`]) as the tool's `inputSchema`. Declare the type with
//! [`tool_args!`]: the struct, its serde derive (which you write) and its schema come from
//! one declaration, so the two cannot drift apart. Field types give the schema's types and
//! bounds (the table is on [`Describe`]), `Option` fields are not required, doc comments are
//! descriptions, and `#[schema(...)]` says what a type cannot.
//!
//! ```
//! use baremcp::{Server, Tool, tool_args};
//! use serde::Deserialize;
//!
//! tool_args! {
//!     /// A reminder to set.
//!     #[derive(Deserialize)]
//!     struct Remind {
//!         /// What to be reminded of.
//!         #[schema(minLength = 1, maxLength = 200)]
//!         what: String,
//!         /// In how many minutes.
//!         #[schema(minimum = 1)]
//!         minutes: u16,
//!         /// How loudly.
//!         level: Option<Level>,
//!     }
//! }
//!
//! tool_args! {
//!     #[derive(Deserialize)]
//!     enum Level {
//!         Quiet,
//!         Loud,
//!     }
//! }
//!
//! let mut server = Server::new("reminders", "1.0.0");
//! server.add_tool(Tool::typed("remind", "Sets a reminder", |r: Remind, _cx| {
//!     Ok(format!("in {} minutes: {}", r.minutes, r.what))
//! }))?;
//!
//! let input = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}
//! {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remind","arguments":{"what":"tea","minutes":0}}}
//! "#;
//! let mut output = Vec::new();
//! server.serve(&mut &input[..], &mut output)?;
//! // Arguments are validated against the schema, then decoded; what does not fit is named.
//! assert!(String::from_utf8(output)?.contains(r#""isError":true"#));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Registration compares the names the derived schema lists with those the type's
//! `Deserialize` reads, and refuses a tool whose two disagree ([`Error::Mismatch`]): serde
//! attributes such as `rename` or `flatten` are not followed by the macro. Such a type, or a
//! schema that says more than a type can, is written out and given to
//! [`Tool::typed_with_schema`].
//!
//! ## schemars
//!
//! Types that already derive `schemars::JsonSchema` need no [`tool_args!`]: give the schema
//! schemars makes to [`Tool::typed_with_schema`].
//!
//! ```
//! use baremcp::{Server, Tool};
//! use schemars::{JsonSchema, schema_for};
//! use serde::Deserialize;
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct Order {
//!     item: String,
//!     #[schemars(range(min = 1, max = 9))]
//!     count: u8,
//! }
//!
//! let schema = serde_json::to_value(schema_for!(Order))?;
//! let mut server = Server::new("shop", "1.0.0");
//! let warnings = server.add_tool(Tool::typed_with_schema("order", "Orders", schema, |o: Order, _cx| {
//!     Ok(format!("{} x {}", o.count, o.item))
//! }))?;
//! assert!(warnings.is_empty());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Of what schemars 1 emits, the validator ([`schema`]) reads `$schema` (2020-12, or
//! draft-07 as schemars 0.8 writes), follows `$ref` into `$defs`, takes
//! `"type": ["string", "null"]` for `Option`, and enforces `minimum`, `maximum`,
//! `minLength`, `pattern` and `enum`. `format` (`uint8`, `email`, ...) is an annotation, as
//! JSON Schema 2020-12 has it by default: shown to the model, not checked. Each of these is
//! tested (`tests/it/schemars_recipe.rs`).
//!
//! # A resource
//!
//! A [`Resource`] has a fixed URI and a reader; a [`ResourceTemplate`] matches URIs by an RFC
//! 6570 template and gets the variables; [`Server::add_directory`] serves the regular files
//! under a directory ([`FileRoot`], the binary's `--root`).
//!
//! ```
//! use baremcp::{Contents, ReadError, Resource, ResourceTemplate, Server};
//!
//! let mut server = Server::new("notes", "1.0.0");
//! server.add_resource(
//!     Resource::new("notes://today", "Today's note", |_cx| Ok(Contents::Text("tea at 4".into())))
//!         .mime_type("text/plain"),
//! )?;
//! server.add_template(ResourceTemplate::new("notes://day/{date}", "A day's note", |vars, _cx| {
//!     match vars.get("date").map(String::as_str) {
//!         Some("2026-01-01") => Ok(Contents::Text("new year".into())),
//!         _ => Err(ReadError::NotFound),
//!     }
//! }))?;
//! # Ok::<(), baremcp::Error>(())
//! ```
//!
//! # A prompt
//!
//! ```
//! use baremcp::{Prompt, PromptMessage, Server};
//!
//! let mut server = Server::new("reviewer", "1.0.0");
//! server.add_prompt(
//!     Prompt::new("review", |args, _cx| {
//!         let code = args.get("code").map_or("", String::as_str);
//!         Ok(vec![PromptMessage::user(format!("Review this code:\n{code}"))])
//!     })
//!     .description("Asks for a code review")
//!     .argument("code", Some("The code to review"), true),
//! )?;
//! # Ok::<(), baremcp::Error>(())
//! ```
//!
//! # The Context
//!
//! Every handler gets a [`Context`]: the request's id and protocol version, logging to the
//! client, progress, cancellation, and asking the client (elicitation, sampling, roots) in
//! both eras. In a legacy session the question goes to the client while the call waits; in
//! 2026-07-28 the first question ends the call with `input_required`, and the client retries
//! with the answer (see [`Context::elicit`]).
//!
//! ```
//! use baremcp::{LogLevel, Server, Tool, ToolOutput};
//! use serde_json::json;
//!
//! let tool = Tool::new("slow", "Counts slowly", json!({"type": "object"}), |_, cx| {
//!     cx.log(LogLevel::Info, Some("slow"), "starting");
//!     for step in 1..=3 {
//!         if cx.is_cancelled() {
//!             break;
//!         }
//!         cx.progress(f64::from(step), Some(3.0), None);
//!     }
//!     Ok(ToolOutput::text(format!("done for request {}", cx.request_id())))
//! });
//! let mut server = Server::new("counter", "1.0.0");
//! server.add_tool(tool)?;
//! # Ok::<(), baremcp::Error>(())
//! ```
//!
//! # Serving on stdio and HTTP
//!
//! [`Server::serve_stdio`] serves stdin and stdout until the client closes either (a clean
//! end, `Ok`); [`Server::serve`] serves any `BufRead` and `Write`, which is how tests feed it
//! bytes. [`Server::serve_http`] serves Streamable HTTP ([`HttpOptions`]: addresses,
//! authentication, Origin and Host checks, limits) until SIGTERM or SIGINT; handlers still
//! run on the calling thread.
//!
//! ```no_run
//! use baremcp::{HttpOptions, Server};
//!
//! let server = Server::new("web", "1.0.0");
//! let options = HttpOptions { listen: vec!["127.0.0.1:8080".into()], ..HttpOptions::default() };
//! server.serve_http(&options)?;
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! [`Server::on_request`] and [`Server::on_reply`] see each request and its reply on the
//! serving thread, over stdio and HTTP alike, for metrics, audit logs, authorization or rate
//! limits; `on_request` may refuse a request with an [`ErrorObject`].
//!
//! # Testing with transcripts
//!
//! A test serves bytes and compares lines:
//!
//! ```
//! use baremcp::{Server, Tool};
//! use serde_json::json;
//!
//! let mut server = Server::new("t", "1");
//! server.add_tool(Tool::new("ping", "p", json!({"type": "object"}), |_, _| Ok("pong".into())))?;
//! let transcript = [
//!     (r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ping","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#,
//!      r#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"t","version":"1"}},"content":[{"type":"text","text":"pong"}],"resultType":"complete"}}"#),
//! ];
//! for (request, expected) in transcript {
//!     let mut output = Vec::new();
//!     server.serve(&mut format!("{request}\n").as_bytes(), &mut output)?;
//!     assert_eq!(String::from_utf8(output)?.trim_end(), expected);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! For a whole server process, the `baremcp` binary records a real client's session
//! (`baremcp proxy --record session.txt -- your-server`) and checks the server against it
//! whenever it changes (`baremcp replay session.txt -- your-server`): client lines marked
//! `-->`, server lines `<--`, compared byte for byte.

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

pub use conn::connection::ClientError;
pub use conn::context::Context;
pub use conn::principal::Principal;
pub use registry::describe::Describe;
pub use registry::error::{DuplicateKind, Error, Warning};
pub use registry::files::{FileRoot, read_regular_file};
pub use registry::intercept::{Intercepted, OnReply, OnRequest};
pub use registry::prompt::{Prompt, PromptArgs, PromptMessage, Role};
pub use registry::resource::{Completer, Contents, ReadError, Resource, ResourceTemplate, Vars};
pub use registry::server::{DEFAULT_MAX_MESSAGE_BYTES, Server};
pub use registry::task::TaskContext;
pub use registry::task_tool::{Prepare, TaskHandler, TaskTool};
pub use registry::tool::{Content, Handler, HandlerError, Json, Tool, ToolOutput};
pub use transport::http::HttpOptions;
pub use util::trace_context::TraceContext;
pub use wire::era::{Era, LEGACY_VERSIONS, MODERN_VERSIONS};
pub use wire::error_code::{ErrorCode, ErrorObject};
pub use wire::jsonrpc::Id;
pub use wire::log_level::LogLevel;

/// Base64 as MCP uses it (the standard alphabet, padded): for the `data` of image and audio
/// [`Content`] blocks, and for binary resources.
pub mod encoding {
    pub use crate::util::encoding::{base64, base64_decode};
}

/// Not part of the API: what `tool_args!` expands to, and what the `baremcp` binary and the
/// tests use of the library's insides. Nothing here is stable; it may change in any release.
///
/// The binary may use only the library's public API (ARCHITECTURE.md); these utilities are
/// the library's own, which it shares rather than the binary copying them, and no embedder
/// needs them.
#[doc(hidden)]
pub mod __private {
    // For `tool_args!`.
    pub use crate::registry::agreement::{check_enum, check_struct};
    pub use crate::registry::describe::{
        ObjectSchema, Within, enum_schema, keyword, property, recursion,
    };
    pub use serde_json::Value;

    // For the binary: log timestamps, transcript paths, manifest checks, the proxy.
    pub use crate::registry::param_header::param_header_problems;
    pub use crate::schema::pointer::{escape_token, pointer_to};
    pub use crate::schema::validate::json_eq as json_equal;
    #[cfg(unix)]
    pub use crate::transport::http::ignored;
    pub use crate::transport::http::{hs256, is_scope_token};
    pub use crate::util::encoding::{percent_encode_path, rfc3339};
    pub use crate::util::poll::{RawFd, readable_within, writable_within};
    pub use crate::util::shown::{Clipped, escaped};
    pub use crate::util::sort::sort_by;
    pub use crate::wire::jsonrpc::{error_response, response_in_head};
    pub use crate::wire::scanner::{RawPart, raw_at, raw_parts};
    pub use crate::wire::strict::{Outline, StrictError, read_strict};
}
