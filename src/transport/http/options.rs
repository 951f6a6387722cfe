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
    /// A JSON Web Key Set (RFC 7517): JWTs signed by one of its keys (RS256, PS256, ES256,
    /// EdDSA) are accepted. Re-read when the file changes or on SIGHUP; needs `jwt_audience`.
    pub jwks_file: Option<PathBuf>,
    /// A JWT's `aud` must name this (when set; required with `jwks_file`).
    pub jwt_audience: Option<String>,
    /// A JWT's `iss` must be this (when set).
    pub jwt_issuer: Option<String>,
    /// Scopes every JWT must grant (`scope` or `scp`), else `403 insufficient_scope`; listed
    /// in the metadata as `scopes_supported`. Static tokens are not subject to them.
    pub required_scopes: Vec<String>,
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
    /// After SIGTERM, `/readyz` answers 503 and the listeners keep serving this many seconds
    /// (default 5), so a balancer sends new requests elsewhere before they stop; SIGINT, or a
    /// second signal, skips the wait.
    pub drain_secs: u64,
    /// `/readyz` answers 503 while the dispatching loop has been on one message longer than
    /// this many seconds (default 10).
    pub ready_stall_secs: u64,
    /// Where to send each request's span as OTLP/HTTP JSON: `http://HOST:PORT/PATH`, plain
    /// HTTP to an IP address or `localhost` (default port 4318, path `/v1/traces`).
    pub otlp_endpoint: Option<String>,
    /// Put before every legacy session id with a dot (`NAME.` and 32 hex digits), so a
    /// balancer can route a session to its process by the id: 1 to 16 of `A-Z a-z 0-9 _ -`.
    pub session_id_prefix: Option<String>,
}

impl Default for HttpOptions {
    fn default() -> Self {
        HttpOptions {
            listen: Vec::new(),
            path: "/mcp".into(),
            auth_token_file: None,
            jwt_secret_file: None,
            jwks_file: None,
            jwt_audience: None,
            jwt_issuer: None,
            required_scopes: Vec::new(),
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
            drain_secs: 5,
            ready_stall_secs: 10,
            otlp_endpoint: None,
            session_id_prefix: None,
        }
    }
}
