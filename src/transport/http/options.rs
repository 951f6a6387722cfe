//! `HttpOptions`: what `serve_http` is told, and its defaults. The binary reads them from
//! its `--http` flags (`src/bin/baremcp/http_flags.rs`); an embedder fills them in.

use std::path::PathBuf;

use crate::registry::server::DEFAULT_MAX_MESSAGE_BYTES;

/// The HTTP flags (`--http ADDR` and its company) and their defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// Addresses to listen on (`127.0.0.1:8080`, `[::1]:8080`, or on unix `unix:PATH`, a
    /// unix-domain socket); empty: serve stdio.
    pub listen: Vec<String>,
    /// The endpoint's path (default `/mcp`).
    pub path: String,
    /// Bearer tokens, one a line as `NAME TOKEN` (each name a principal; a name is
    /// `[A-Za-z0-9._@-]+`) or `TOKEN` alone (principal `token-` and the first 8 hex digits of
    /// its SHA-256); `#` comments. Re-read when the file changes or on SIGHUP.
    pub auth_token_file: Option<PathBuf>,
    /// The HS256 secret that signs accepted JWTs.
    pub jwt_secret_file: Option<PathBuf>,
    /// A JWT's `aud` must name this (when set).
    pub jwt_audience: Option<String>,
    /// A JWT's `iss` must be this (when set).
    pub jwt_issuer: Option<String>,
    /// Allows a non-loopback listener without authentication.
    pub allow_unauthenticated: bool,
    /// Origins allowed besides loopback ones (`https://app.example`); their hosts are
    /// allowed `Host` values too, and their pages get CORS headers (preflight `OPTIONS`).
    pub allow_origins: Vec<String>,
    /// `Host` values allowed besides loopback names (`mcp.example`, `mcp.example:8443`, `*`).
    pub allow_hosts: Vec<String>,
    /// Public URL of the RFC 9728 metadata; then it is served, and named in 401s.
    pub resource_metadata_url: Option<String>,
    /// The authorization servers that metadata lists.
    pub authorization_servers: Vec<String>,
    /// A legacy session ends after this many seconds without a request (default 1800).
    pub session_idle_secs: u64,
    /// Legacy sessions kept at most; a new one evicts the least recently used idle one.
    pub max_sessions: usize,
    /// Open connections at most; more are answered 503 (default 128).
    pub max_connections: usize,
    /// Open connections from one address (an IPv6 /64) at most; more are answered 429
    /// (default 32). Loopback and unix-socket peers are not counted: a reverse proxy in front
    /// is one address for every client, and limits them itself.
    pub max_connections_per_peer: usize,
    /// Long-lived streams (legacy GET streams, 2026-07-28 `subscriptions/listen`) open from
    /// one address at most; more are answered 429 (default 8). Loopback and unix-socket peers
    /// are not counted.
    pub max_streams_per_peer: usize,
    /// How long a legacy handler waits for its client's answer to a server request (sampling,
    /// elicitation, roots) before it hears `Disconnected` (default 300): the dispatching loop,
    /// and so every other client, waits with it.
    pub ask_timeout_secs: u64,
    /// A quiet event stream gets a comment this often (default 15).
    pub sse_keepalive_secs: u64,
    /// A request's head and body must arrive within this many seconds of its first byte.
    pub request_timeout_secs: u64,
    /// A keep-alive connection with no request for this many seconds is closed (default 15).
    pub idle_timeout_secs: u64,
    /// Largest accepted body (the server's `--max-message-bytes`).
    pub max_body: usize,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            listen: Vec::new(),
            path: "/mcp".into(),
            auth_token_file: None,
            jwt_secret_file: None,
            jwt_audience: None,
            jwt_issuer: None,
            allow_unauthenticated: false,
            allow_origins: Vec::new(),
            allow_hosts: Vec::new(),
            resource_metadata_url: None,
            authorization_servers: Vec::new(),
            session_idle_secs: 1800,
            max_sessions: 1000,
            max_connections: 128,
            max_connections_per_peer: 32,
            max_streams_per_peer: 8,
            ask_timeout_secs: 300,
            sse_keepalive_secs: 15,
            request_timeout_secs: 30,
            idle_timeout_secs: 15,
            max_body: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}
