//! `HttpOptions`: the `--http` flags, their defaults, and reading them from a command line.

use std::ffi::OsString;
use std::path::PathBuf;

use lexopt::prelude::*;

use crate::registry::server::DEFAULT_MAX_MESSAGE_BYTES;

/// The HTTP flags (`--http ADDR` and its company) and their defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// Addresses to listen on (`127.0.0.1:8080`, `[::1]:8080`, or on unix `unix:PATH`, a
    /// unix-domain socket); empty: serve stdio.
    pub listen: Vec<String>,
    /// The endpoint's path (default `/mcp`).
    pub path: String,
    /// Bearer tokens, one a line; re-read when the file changes or on SIGHUP.
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
    /// allowed `Host` values too.
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
            sse_keepalive_secs: 15,
            request_timeout_secs: 30,
            idle_timeout_secs: 15,
            max_body: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl HttpOptions {
    /// The long flags [`HttpOptions::take`] reads.
    pub const FLAGS: [&str; 17] = [
        "http",
        "http-path",
        "auth-token-file",
        "jwt-secret-file",
        "jwt-audience",
        "jwt-issuer",
        "allow-unauthenticated",
        "allow-origin",
        "allow-host",
        "resource-metadata-url",
        "authorization-server",
        "session-idle-secs",
        "max-sessions",
        "max-connections",
        "sse-keepalive-secs",
        "request-timeout-secs",
        "idle-timeout-secs",
    ];

    /// Takes long flag `name` (one of [`HttpOptions::FLAGS`]), reading its value from
    /// `parser`.
    pub fn take(&mut self, name: &str, parser: &mut lexopt::Parser) -> Result<(), lexopt::Error> {
        let mut text = || -> Result<String, lexopt::Error> { parser.value()?.string() };
        match name {
            "http" => self.listen.push(text()?),
            "http-path" => {
                let path = text()?;
                if !path.starts_with('/') {
                    return Err(format!("--http-path must start with /, not {path:?}").into());
                }
                self.path = path;
            }
            "auth-token-file" => self.auth_token_file = Some(text()?.into()),
            "jwt-secret-file" => self.jwt_secret_file = Some(text()?.into()),
            "jwt-audience" => self.jwt_audience = Some(text()?),
            "jwt-issuer" => self.jwt_issuer = Some(text()?),
            "allow-unauthenticated" => self.allow_unauthenticated = true,
            "allow-origin" => self.allow_origins.push(text()?),
            "allow-host" => self.allow_hosts.push(text()?),
            "resource-metadata-url" => self.resource_metadata_url = Some(text()?),
            "authorization-server" => self.authorization_servers.push(text()?),
            "session-idle-secs" => {
                self.session_idle_secs = number(parser, "--session-idle-secs")? as u64
            }
            "max-sessions" => self.max_sessions = number(parser, "--max-sessions")?,
            "max-connections" => self.max_connections = number(parser, "--max-connections")?,
            "sse-keepalive-secs" => {
                self.sse_keepalive_secs = number(parser, "--sse-keepalive-secs")? as u64
            }
            "request-timeout-secs" => {
                self.request_timeout_secs = number(parser, "--request-timeout-secs")? as u64
            }
            "idle-timeout-secs" => {
                self.idle_timeout_secs = number(parser, "--idle-timeout-secs")? as u64
            }
            other => return Err(format!("--{other} is not an http flag").into()),
        }
        Ok(())
    }

    /// Reads the HTTP flags (and `--max-message-bytes`) from `args`, ignoring nothing: for
    /// programs (like `examples/everything`) whose only flags are these.
    pub fn parse(
        args: impl IntoIterator<Item = impl Into<OsString>>,
    ) -> Result<HttpOptions, lexopt::Error> {
        let mut parser = lexopt::Parser::from_args(args);
        let mut options = HttpOptions::default();
        while let Some(arg) = parser.next()? {
            match arg {
                Long(name) if Self::FLAGS.contains(&name) => {
                    let name = name.to_string();
                    options.take(&name, &mut parser)?;
                }
                Long("max-message-bytes") => {
                    options.max_body = number(&mut parser, "--max-message-bytes")?
                }
                _ => return Err(arg.unexpected()),
            }
        }
        Ok(options)
    }
}

fn number(parser: &mut lexopt::Parser, option: &str) -> Result<usize, lexopt::Error> {
    let value = parser.value()?;
    match value.to_str().and_then(|v| v.parse().ok()) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("{option} needs a whole number of at least 1, not {value:?}").into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_is_read_and_bad_values_are_refused_by_name() {
        let args = [
            "--http",
            "127.0.0.1:1",
            "--http",
            "unix:/tmp/s",
            "--http-path",
            "/x",
            "--auth-token-file",
            "t",
            "--jwt-secret-file",
            "j",
            "--jwt-audience",
            "aud",
            "--jwt-issuer",
            "iss",
            "--allow-unauthenticated",
            "--allow-origin",
            "https://o",
            "--allow-host",
            "h",
            "--resource-metadata-url",
            "https://m/.well-known/x",
            "--authorization-server",
            "https://a",
            "--session-idle-secs",
            "2",
            "--max-sessions",
            "3",
            "--max-connections",
            "4",
            "--sse-keepalive-secs",
            "5",
            "--request-timeout-secs",
            "6",
            "--idle-timeout-secs",
            "7",
            "--max-message-bytes",
            "8",
        ];
        let o = HttpOptions::parse(args).unwrap();
        assert_eq!(o.listen, ["127.0.0.1:1", "unix:/tmp/s"]);
        assert_eq!(o.path, "/x");
        assert_eq!(
            (o.auth_token_file.unwrap(), o.jwt_secret_file.unwrap()),
            ("t".into(), "j".into())
        );
        assert_eq!(
            (o.jwt_audience.as_deref(), o.jwt_issuer.as_deref()),
            (Some("aud"), Some("iss"))
        );
        assert!(o.allow_unauthenticated);
        assert_eq!(
            (o.allow_origins, o.allow_hosts),
            (vec!["https://o".to_string()], vec!["h".to_string()])
        );
        assert_eq!(o.resource_metadata_url.as_deref(), Some("https://m/.well-known/x"));
        assert_eq!(o.authorization_servers, ["https://a"]);
        let numbers = [
            o.session_idle_secs as usize,
            o.max_sessions,
            o.max_connections,
            o.sse_keepalive_secs as usize,
        ];
        assert_eq!(numbers, [2, 3, 4, 5]);
        assert_eq!((o.request_timeout_secs, o.idle_timeout_secs, o.max_body), (6, 7, 8));
        let refused = |args: &[&str]| HttpOptions::parse(args).unwrap_err().to_string();
        assert_eq!(refused(&["--http-path", "mcp"]), "--http-path must start with /, not \"mcp\"");
        assert_eq!(
            refused(&["--max-sessions", "0"]),
            "--max-sessions needs a whole number of at least 1, not \"0\""
        );
        assert_eq!(
            refused(&["--idle-timeout-secs", "x"]),
            "--idle-timeout-secs needs a whole number of at least 1, not \"x\""
        );
        assert!(refused(&["--bogus"]).contains("--bogus"));
        let mut options = HttpOptions::default();
        let mut parser = lexopt::Parser::from_args(["x"]);
        assert_eq!(
            options.take("nope", &mut parser).unwrap_err().to_string(),
            "--nope is not an http flag"
        );
    }
}
