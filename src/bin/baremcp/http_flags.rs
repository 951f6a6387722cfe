//! The `--http` flags: reading `HttpOptions` from a command line (lexopt stays out of the
//! library's API). `examples/everything` includes this file to take the same flags.

use std::ffi::OsString;

use baremcp::HttpOptions;
use lexopt::prelude::*;

/// The long flags [`take`] reads.
pub const FLAGS: [&str; 26] = [
    "http",
    "http-path",
    "auth-token-file",
    "jwt-secret-file",
    "jwks-file",
    "jwt-audience",
    "jwt-issuer",
    "required-scope",
    "allow-unauthenticated",
    "allow-origin",
    "allow-host",
    "resource-metadata-url",
    "authorization-server",
    "session-idle-secs",
    "max-sessions",
    "max-connections",
    "max-connections-per-peer",
    "max-streams-per-peer",
    "ask-timeout-secs",
    "sse-keepalive-secs",
    "request-timeout-secs",
    "idle-timeout-secs",
    "drain-secs",
    "ready-stall-secs",
    "session-id-prefix",
    "otlp-endpoint",
];

/// The flags of [`FLAGS`] that add up; each other keeps one value.
const REPEATABLE: [&str; 5] =
    ["http", "required-scope", "allow-origin", "allow-host", "authorization-server"];

/// The options given so far that keep one value: given again, the last would silently win
/// over the first, so the second is refused. (Those marked repeatable in the help add up.)
/// Every command's parser uses it, the `--http` flags' too.
#[derive(Default)]
pub struct Given(Vec<(String, String)>);

impl Given {
    /// Notes `flag`, as written, which sets `what`; refuses it when `what` was set already.
    pub fn once(&mut self, flag: &str, what: &str) -> Result<(), lexopt::Error> {
        match self.0.iter().find(|(_, set)| set == what) {
            Some((first, _)) if first == flag => {
                Err(format!("{flag} given twice: it is not repeatable").into())
            }
            Some((first, _)) => Err(format!("{first} and {flag} both set {what}: give one").into()),
            None => {
                self.0.push((flag.to_string(), what.to_string()));
                Ok(())
            }
        }
    }
}

/// Notes `--http` flag `name` (one of [`FLAGS`]) in `given`: one that keeps a value is
/// refused when given again.
pub fn once(given: &mut Given, name: &str) -> Result<(), lexopt::Error> {
    match REPEATABLE.contains(&name) {
        true => Ok(()),
        false => given.once(&format!("--{name}"), name),
    }
}

/// Takes long flag `name` (one of [`FLAGS`]) into `options`, reading its value from `parser`.
pub fn take(
    options: &mut HttpOptions,
    name: &str,
    parser: &mut lexopt::Parser,
) -> Result<(), lexopt::Error> {
    let mut text = || -> Result<String, lexopt::Error> { parser.value()?.string() };
    match name {
        "http" => {
            let addr = text()?;
            if let Some(fix) = url_instead_of_address(&addr) {
                return Err(fix.into());
            }
            options.listen.push(addr)
        }
        "http-path" => {
            let path = text()?;
            if !path.starts_with('/') {
                return Err(format!("--http-path must start with /, not {path:?}").into());
            }
            options.path = path;
        }
        "auth-token-file" => options.auth_token_file = Some(text()?.into()),
        "jwt-secret-file" => options.jwt_secret_file = Some(text()?.into()),
        "jwks-file" => options.jwks_file = Some(text()?.into()),
        "jwt-audience" => options.jwt_audience = Some(text()?),
        "jwt-issuer" => options.jwt_issuer = Some(text()?),
        "required-scope" => {
            let scope = text()?;
            if !baremcp::__private::is_scope_token(&scope) {
                let why = "a scope is printable ASCII without spaces, quotes or backslashes \
                           (one scope a flag)";
                return Err(format!("--required-scope {scope:?}: {why}").into());
            }
            options.required_scopes.push(scope)
        }
        "allow-unauthenticated" => options.allow_unauthenticated = true,
        "allow-origin" => options.allow_origins.push(text()?),
        "allow-host" => options.allow_hosts.push(text()?),
        "resource-metadata-url" => options.resource_metadata_url = Some(text()?),
        "authorization-server" => options.authorization_servers.push(text()?),
        "session-idle-secs" => {
            options.session_idle_secs = positive(parser, "--session-idle-secs")? as u64
        }
        "max-sessions" => options.max_sessions = positive(parser, "--max-sessions")?,
        "max-connections" => options.max_connections = positive(parser, "--max-connections")?,
        "max-connections-per-peer" => {
            options.max_connections_per_peer = positive(parser, "--max-connections-per-peer")?
        }
        "max-streams-per-peer" => {
            options.max_streams_per_peer = positive(parser, "--max-streams-per-peer")?
        }
        "ask-timeout-secs" => {
            options.ask_timeout_secs = positive(parser, "--ask-timeout-secs")? as u64
        }
        "sse-keepalive-secs" => {
            options.sse_keepalive_secs = positive(parser, "--sse-keepalive-secs")? as u64
        }
        "request-timeout-secs" => {
            options.request_timeout_secs = positive(parser, "--request-timeout-secs")? as u64
        }
        "idle-timeout-secs" => {
            options.idle_timeout_secs = positive(parser, "--idle-timeout-secs")? as u64
        }
        "drain-secs" => options.drain_secs = whole(parser, "--drain-secs")?,
        "ready-stall-secs" => {
            options.ready_stall_secs = positive(parser, "--ready-stall-secs")? as u64
        }
        // Checked when serving starts, which refuses a bad one (exit 2) before it binds.
        "session-id-prefix" => options.session_id_prefix = Some(text()?),
        "otlp-endpoint" => options.otlp_endpoint = Some(text()?),
        other => return Err(format!("--{other} is not an http flag").into()),
    }
    Ok(())
}

/// Reads the HTTP flags (and `--max-message-bytes`) from `args`, ignoring nothing: for
/// programs (like `examples/everything`) whose only flags are these.
#[allow(dead_code, reason = "the binary takes these among its other flags, with `take`")]
pub fn parse(
    args: impl IntoIterator<Item = impl Into<OsString>>,
) -> Result<HttpOptions, lexopt::Error> {
    let mut parser = lexopt::Parser::from_args(args);
    let mut options = HttpOptions::default();
    let mut given = Given::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Long(name) if FLAGS.contains(&name) => {
                let name = name.to_string();
                once(&mut given, &name)?;
                take(&mut options, &name, &mut parser)?;
            }
            Long("max-message-bytes") => {
                once(&mut given, "max-message-bytes")?;
                options.max_body = positive(&mut parser, "--max-message-bytes")?
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(options)
}

/// For `--http http://127.0.0.1:8080/mcp`, which reads like the URL clients are given: what
/// to write instead (the address; the path, when not the default, in `--http-path`).
fn url_instead_of_address(addr: &str) -> Option<String> {
    let (scheme, rest) = addr.split_once("://")?;
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let tls = if scheme.eq_ignore_ascii_case("https") {
        " (baremcp speaks plain HTTP: TLS belongs to a proxy in front of it)"
    } else {
        ""
    };
    let fix = match path {
        "" | "/mcp" => format!("--http {host} (and --http-path for a path other than /mcp)"),
        path => format!("--http {host} --http-path {path}"),
    };
    Some(format!("--http takes an address, not a URL{tls}: write {fix}"))
}

/// The value of `option`, a whole number of at least 1; the error names the option.
pub fn positive(parser: &mut lexopt::Parser, option: &str) -> Result<usize, lexopt::Error> {
    let value = parser.value()?;
    match value.to_str().and_then(|v| v.parse().ok()) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("{option} needs a whole number of at least 1, not {value:?}").into()),
    }
}

/// The value of `option`, a whole number (0 included); the error names the option.
fn whole(parser: &mut lexopt::Parser, option: &str) -> Result<u64, lexopt::Error> {
    let value = parser.value()?;
    match value.to_str().and_then(|v| v.parse().ok()) {
        Some(n) => Ok(n),
        None => Err(format!("{option} needs a whole number, not {value:?}").into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_flag_is_read() {
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
            "--jwks-file",
            "k",
            "--jwt-audience",
            "aud",
            "--jwt-issuer",
            "iss",
            "--required-scope",
            "mcp:tools",
            "--required-scope",
            "api://x/.default",
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
            "--max-connections-per-peer",
            "9",
            "--max-streams-per-peer",
            "10",
            "--ask-timeout-secs",
            "11",
            "--sse-keepalive-secs",
            "5",
            "--request-timeout-secs",
            "6",
            "--idle-timeout-secs",
            "7",
            "--max-message-bytes",
            "8",
            "--drain-secs",
            "0",
            "--ready-stall-secs",
            "12",
            "--session-id-prefix",
            "p1",
            "--otlp-endpoint",
            "http://127.0.0.1:4318",
        ];
        let o = parse(args).unwrap();
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
        assert_eq!(o.jwks_file, Some("k".into()));
        assert_eq!(o.required_scopes, ["mcp:tools", "api://x/.default"]);
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
        let per_peer = (o.max_connections_per_peer, o.max_streams_per_peer, o.ask_timeout_secs);
        assert_eq!(per_peer, (9, 10, 11));
        assert_eq!((o.request_timeout_secs, o.idle_timeout_secs, o.max_body), (6, 7, 8));
        assert_eq!((o.drain_secs, o.ready_stall_secs), (0, 12));
        assert_eq!(
            (o.session_id_prefix.as_deref(), o.otlp_endpoint.as_deref()),
            (Some("p1"), Some("http://127.0.0.1:4318"))
        );
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let refused = |args: &[&str]| parse(args).unwrap_err().to_string();
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
        for (flag, value) in
            [("--jwt-audience", "a"), ("--http-path", "/m"), ("--max-sessions", "2")]
        {
            let twice = refused(&[flag, value, flag, value]);
            assert_eq!(twice, format!("{flag} given twice: it is not repeatable"));
        }
        let adds_up = ["--allow-host", "a", "--allow-host", "b", "--http", ":1", "--http", ":2"];
        assert_eq!(parse(adds_up).unwrap().allow_hosts, ["a", "b"]);
        assert_eq!(
            refused(&["--required-scope", "mcp:read mcp:write"]),
            "--required-scope \"mcp:read mcp:write\": a scope is printable ASCII without spaces, \
             quotes or backslashes (one scope a flag)"
        );
        assert_eq!(
            refused(&["--drain-secs", "-1"]),
            "--drain-secs needs a whole number, not \"-1\""
        );
        // A URL where an address goes: the scheme dropped, the path moved to --http-path.
        assert_eq!(
            refused(&["--http", "http://127.0.0.1:8080/v1/mcp"]),
            "--http takes an address, not a URL: write --http 127.0.0.1:8080 --http-path /v1/mcp"
        );
        assert_eq!(
            refused(&["--http", "http://127.0.0.1:8080/mcp"]),
            "--http takes an address, not a URL: write --http 127.0.0.1:8080 (and --http-path for \
             a path other than /mcp)"
        );
        assert!(refused(&["--http", "https://[::1]:8443"]).ends_with(
            "(baremcp speaks plain HTTP: TLS belongs to a proxy in front of it): write --http \
             [::1]:8443 (and --http-path for a path other than /mcp)"
        ));
        let mut options = HttpOptions::default();
        let mut parser = lexopt::Parser::from_args(["x"]);
        assert_eq!(
            take(&mut options, "nope", &mut parser).unwrap_err().to_string(),
            "--nope is not an http flag"
        );
    }
}
