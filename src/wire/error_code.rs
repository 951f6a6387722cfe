//! JSON-RPC error codes: every code the server sends, named once, with when it is sent.

use std::fmt;

/// The code of a JSON-RPC error, written as a JSON integer.
///
/// The server sends only the codes named here. A code a client sends, in its error response
/// to the server's own request ([`crate::ClientError::Rejected`]), may be any integer, so
/// the type holds any `i64`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ErrorCode(pub i64);

impl ErrorCode {
    /// -32700: the line is not JSON, or not UTF-8; replied to with a null id.
    pub const PARSE_ERROR: ErrorCode = ErrorCode(-32700);
    /// -32600: JSON that is not a valid request (a wrong `jsonrpc`, a member named twice, an
    /// id that is no string or integer, a refused batch), a line past the size limit or
    /// nested too deep, a request refused while too much waits on the client; over HTTP, the
    /// body of every refusal made before a message is read (limits, headers, authentication).
    pub const INVALID_REQUEST: ErrorCode = ErrorCode(-32600);
    /// -32601: a method the server does not serve, or not in the request's era, or whose
    /// capability is not declared; over HTTP a 2026-07-28 request gets it with status 404.
    pub const METHOD_NOT_FOUND: ErrorCode = ErrorCode(-32601);
    /// -32602: parameters the method cannot take, an unknown tool, prompt or task; in
    /// 2026-07-28 also a resource that does not exist.
    pub const INVALID_PARAMS: ErrorCode = ErrorCode(-32602);
    /// -32603: the server failed (a panicking handler, a task that cannot start).
    pub const INTERNAL_ERROR: ErrorCode = ErrorCode(-32603);
    /// -32000, HTTP: the server holds as many connections, or legacy sessions, as it may;
    /// sent with status 503.
    pub const AT_CAPACITY: ErrorCode = ErrorCode(-32000);
    /// -32001, HTTP: `Mcp-Session-Id` names no live legacy session (unknown, expired or
    /// deleted); sent with status 404, so the client initializes again.
    pub const SESSION_NOT_FOUND: ErrorCode = ErrorCode(-32001);
    /// -32002, MCP up to 2025-11-25: the resource does not exist (2026-07-28 sends
    /// [`ErrorCode::INVALID_PARAMS`] instead).
    pub const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);
    /// -32020, MCP 2026-07-28 over HTTP: a header that repeats the body (`Mcp-Method`,
    /// `Mcp-Name`, `Mcp-Param-{Name}`) is missing or disagrees with it; sent with status 400.
    pub const HEADER_MISMATCH: ErrorCode = ErrorCode(-32020);
    /// -32021, MCP 2026-07-28: the request needs a client capability (or extension) it did
    /// not declare; over HTTP sent with status 400.
    pub const MISSING_CLIENT_CAPABILITY: ErrorCode = ErrorCode(-32021);
    /// -32022, MCP 2026-07-28: the request names a protocol version the server does not
    /// speak; over HTTP sent with status 400.
    pub const UNSUPPORTED_PROTOCOL_VERSION: ErrorCode = ErrorCode(-32022);
}

/// The integer, as it is written on the wire.
impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// A JSON integer, as the `code` member of an error object is.
impl serde::Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i64(self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_is_written_as_its_integer() {
        let code = ErrorCode::UNSUPPORTED_PROTOCOL_VERSION;
        assert_eq!(code.to_string(), "-32022");
        assert_eq!(serde_json::to_string(&code).unwrap(), "-32022");
        assert_eq!(serde_json::json!({ "code": code }), serde_json::json!({ "code": -32022 }));
    }
}
