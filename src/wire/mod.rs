//! The wire: bytes to messages and back. Line framing, the strict JSON scanner and value
//! decoding, the JSON-RPC envelope, its error objects and codes, the `params` members methods
//! read, the two MCP eras a request may belong to, and what a client declared it can do.
//! Nothing here knows a server.

pub(crate) mod capabilities;
pub(crate) mod carried;
pub(crate) mod era;
pub(crate) mod error_code;
pub(crate) mod json_string;
pub(crate) mod jsonrpc;
pub(crate) mod lines;
pub(crate) mod log_level;
pub(crate) mod params;
pub(crate) mod scanner;
pub(crate) mod strict;
pub(crate) mod value;
