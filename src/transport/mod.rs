//! Transports, the top layer: the stdio loop and Streamable HTTP, each driving
//! `serve_line`.
//!
//! Public: MCP's stdio framing, for anything else that speaks it (a client, a proxy such as
//! `baremcp proxy`): bounded line reading, waiting for input with a timeout, reading a line
//! strictly (and who hears of one refused), and writing an error response.

pub mod http;
mod stdio;
pub(crate) mod telemetry;

pub use crate::util::poll::{RawFd, readable_within};
pub use crate::wire::jsonrpc::error_response;
pub use crate::wire::lines::{Line, LineReader, TOO_LONG_HEAD};
pub use crate::wire::strict::{Outline, StrictError, read_strict};
