//! Transports, the top layer: the stdio loop and Streamable HTTP, each driving
//! `serve_line`.
//!
//! Public: MCP's stdio framing, for anything else that speaks it (a client, a proxy such as
//! `baremcp proxy`): bounded line reading, and waiting for input with a timeout.

pub mod http;
mod stdio;

pub use crate::util::poll::{RawFd, readable_within};
pub use crate::wire::lines::{Line, LineReader, TOO_LONG_HEAD};
