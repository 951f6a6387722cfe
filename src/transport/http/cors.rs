//! CORS for the origins `--allow-origin` names: the answer to a browser's preflight `OPTIONS`,
//! and the headers each response to such a page carries so that the browser lets it read the
//! response. Other origins get none (and are refused 403 unless they are loopback ones).

use crate::transport::http::parser::Head;
use crate::transport::http::response::Response;

/// Request headers a page may send besides the ones browsers always allow: what MCP's HTTP
/// transport uses in both eras (and any `Mcp-Param-{Name}`). `*` is not used: it does not
/// cover `Authorization`.
const REQUEST_HEADERS: [&str; 8] = [
    "authorization",
    "content-type",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
    "mcp-method",
    "mcp-name",
    "accept",
];

/// How long a browser may keep a preflight's answer, in seconds.
const MAX_AGE: &str = "3600";

/// The headers every response to a page of allowed `origin` carries.
pub fn response_headers(origin: &str) -> [(&'static str, String); 3] {
    [
        ("Access-Control-Allow-Origin", origin.to_string()),
        ("Vary", "Origin".to_string()),
        ("Access-Control-Expose-Headers", "Mcp-Session-Id, WWW-Authenticate".to_string()),
    ]
}

/// The answer to a preflight from allowed `origin`: 204 with the methods served and those of
/// the requested headers a page may send, as the browser named them (a header not allowed is
/// left out, and the browser refuses to send it).
pub fn preflight(head: &Head, origin: &str) -> Response {
    let requested = head.header("access-control-request-headers").unwrap_or("");
    let allowed: Vec<&str> = requested
        .split(',')
        .map(str::trim)
        .filter(|name| {
            let lower = name.to_ascii_lowercase();
            REQUEST_HEADERS.contains(&lower.as_str())
                || lower.strip_prefix("mcp-param-").is_some_and(|rest| {
                    !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                })
        })
        .collect();
    let mut response = Response::new(204)
        .header("Access-Control-Allow-Origin", origin)
        .header("Access-Control-Allow-Methods", "GET, POST, DELETE")
        .header("Access-Control-Max-Age", MAX_AGE)
        .header("Vary", "Origin, Access-Control-Request-Headers");
    if !allowed.is_empty() {
        response = response.header("Access-Control-Allow-Headers", allowed.join(", "));
    }
    response
}
