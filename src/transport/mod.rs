//! Transports, the top layer: the stdio loop and Streamable HTTP, each driving
//! `serve_line`.
//!
//! Public: MCP's stdio framing, for anything else that speaks it (a client, or a program
//! that sits between one and a server): lines read one at a time, each bounded, a line over
//! the bound skipped with its head kept (where its id usually is). The servers themselves
//! are [`crate::Server::serve`], [`crate::Server::serve_stdio`] and
//! [`crate::Server::serve_http`].

pub(crate) mod http;
mod stdio;
pub(crate) mod telemetry;

pub use crate::wire::lines::{Line, LineReader, TOO_LONG_HEAD};
