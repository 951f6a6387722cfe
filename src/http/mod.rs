//! Streamable HTTP: the MCP endpoint over HTTP/1.1 on `std::net`, both eras on one path.
//!
//! Threads: one acceptor per listening address; one thread per connection (capped), which
//! reads requests, enforces limits and security, and writes responses; and the dispatching
//! loop on the thread that called [`Server::serve_http`], which alone touches the `Server`
//! and the sessions, so handlers need not be `Send` or `Sync`. Connection threads hand it
//! work over a channel and get each request's messages back on a bounded one of their own.
//! A slow handler delays the other requests (as on stdio), never the refusals, 202s and
//! keep-alives the connection threads give on their own.

mod connection;
mod dispatcher;
mod guard;
mod queue;
mod sessions;
mod wire;

use std::ffi::OsString;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use lexopt::prelude::*;
use serde_json::json;

use crate::server::{DEFAULT_MAX_MESSAGE_BYTES, Server};
use connection::Shared;
use dispatcher::Dispatcher;
use guard::{Guard, Jwt};
use sessions::Sessions;
use wire::{Limits, Response};

/// Set by SIGTERM and SIGINT: every server in the process stops.
static SIGNALLED: AtomicBool = AtomicBool::new(false);

/// Work waiting for the dispatching loop, at most (more: the request is answered 503).
const INBOUND_CAPACITY: usize = 65_536;

/// How long requests in flight may take to finish once the server is stopping.
const DRAIN: Duration = Duration::from_secs(10);

/// The HTTP flags (`--http ADDR` and its company) and their defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpOptions {
    /// Addresses to listen on (`127.0.0.1:8080`, `[::1]:8080`); empty: serve stdio.
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
            max_body: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl HttpOptions {
    /// The long flags [`HttpOptions::take`] reads.
    pub const FLAGS: [&str; 16] = [
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
            "session-idle-secs" => self.session_idle_secs = number(parser, "--session-idle-secs")? as u64,
            "max-sessions" => self.max_sessions = number(parser, "--max-sessions")?,
            "max-connections" => self.max_connections = number(parser, "--max-connections")?,
            "sse-keepalive-secs" => self.sse_keepalive_secs = number(parser, "--sse-keepalive-secs")? as u64,
            "request-timeout-secs" => self.request_timeout_secs = number(parser, "--request-timeout-secs")? as u64,
            other => return Err(format!("--{other} is not an http flag").into()),
        }
        Ok(())
    }

    /// Reads the HTTP flags (and `--max-message-bytes`) from `args`, ignoring nothing: for
    /// programs (like `examples/everything`) whose only flags are these.
    pub fn parse(args: impl IntoIterator<Item = impl Into<OsString>>) -> Result<HttpOptions, lexopt::Error> {
        let mut parser = lexopt::Parser::from_args(args);
        let mut options = HttpOptions::default();
        while let Some(arg) = parser.next()? {
            match arg {
                Long(name) if Self::FLAGS.contains(&name) => {
                    let name = name.to_string();
                    options.take(&name, &mut parser)?;
                }
                Long("max-message-bytes") => options.max_body = number(&mut parser, "--max-message-bytes")?,
                _ => return Err(arg.unexpected()),
            }
        }
        Ok(options)
    }
}

/// HMAC-SHA-256 of a JWT's signing input (`header.payload`) with `key`: the signature an
/// HS256 token accepted by `--jwt-secret-file` carries, for programs that issue them.
pub fn hs256(key: &[u8], signing_input: &[u8]) -> [u8; 32] {
    crate::state::hmac(key, signing_input)
}

fn number(parser: &mut lexopt::Parser, option: &str) -> Result<usize, lexopt::Error> {
    let value = parser.value()?;
    match value.to_str().and_then(|v| v.parse().ok()) {
        Some(n) if n > 0 => Ok(n),
        _ => Err(format!("{option} needs a whole number of at least 1, not {value:?}").into()),
    }
}

impl Server {
    /// Serves Streamable HTTP on `options.listen` until SIGTERM or SIGINT (then requests in
    /// flight finish, streams end, and it returns `Ok`). Handlers run on the calling thread.
    ///
    /// Fails at once, with the reason, when an address cannot be bound, or is not a loopback
    /// one while no authentication is configured and `allow_unauthenticated` is not set.
    pub fn serve_http(&self, options: &HttpOptions) -> io::Result<()> {
        let listeners = bind(options)?;
        install_signal_handlers();
        self.serve_http_on(listeners, options, Arc::new(AtomicBool::new(false)))
    }

    /// [`Server::serve_http`] on listeners already bound, stopping gracefully when `stop` is
    /// set (or a signal handler installed by [`Server::serve_http`] fired). Installs no signal
    /// handler itself: a program (or test) that owns its signals sets `stop`.
    pub fn serve_http_on(
        &self,
        listeners: Vec<TcpListener>,
        options: &HttpOptions,
        stop: Arc<AtomicBool>,
    ) -> io::Result<()> {
        let jwt = match &options.jwt_secret_file {
            Some(path) => {
                let secret =
                    std::fs::read(path).map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
                let secret = secret.trim_ascii().to_vec();
                Some(Jwt { secret, audience: options.jwt_audience.clone(), issuer: options.jwt_issuer.clone() })
            }
            None => None,
        };
        let guard = Guard::new(
            &options.allow_hosts,
            &options.allow_origins,
            options.auth_token_file.clone(),
            jwt,
            options.resource_metadata_url.clone(),
        )
        .map_err(|e| io::Error::new(e.kind(), format!("--auth-token-file: {e}")))?;
        let table = Arc::new(Sessions::new(Duration::from_secs(options.session_idle_secs), options.max_sessions));
        let (tx, rx) = queue::queue(INBOUND_CAPACITY);
        let limits = Limits {
            max_body: options.max_body.min(self.max_message_bytes),
            deadline: Duration::from_secs(options.request_timeout_secs),
            idle: Duration::from_secs(15),
        };
        let shared = Arc::new(Shared {
            guard,
            table: table.clone(),
            tx,
            limits,
            path: options.path.clone(),
            keepalive: Duration::from_secs(options.sse_keepalive_secs),
            stop: stop.clone(),
            metadata: metadata(options),
            param_headers: connection::param_headers(self),
        });
        let live = Arc::new(AtomicUsize::new(0));
        let mut addresses = Vec::new();
        for listener in listeners {
            let address = listener.local_addr()?;
            log::info!("serving MCP at http://{address}{}", options.path);
            addresses.push(address);
            let (shared, live) = (shared.clone(), live.clone());
            let cap = options.max_connections;
            std::thread::Builder::new()
                .name(format!("accept {address}"))
                .spawn(move || accept(listener, shared, live, cap))?;
        }
        // The loop holds no sender: when every connection and acceptor is gone, it ends.
        let mut stopping: Option<Instant> = None;
        let mut dispatcher = Dispatcher::new(self, rx, table, &stop);
        dispatcher.run(|dispatcher| {
            if SIGNALLED.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
            }
            if !stop.load(Ordering::Relaxed) {
                return false;
            }
            let since = *stopping.get_or_insert_with(|| {
                log::info!("stopping: no new connections; finishing requests in flight");
                dispatcher.end_streams();
                // Wake the acceptors blocked in accept, so they see the flag and leave.
                for address in &addresses {
                    let _ = TcpStream::connect_timeout(address, Duration::from_millis(200));
                }
                Instant::now()
            });
            dispatcher.end_streams();
            let open = live.load(Ordering::Relaxed);
            if open > 0 && since.elapsed() >= DRAIN {
                log::warn!("stopped with {open} connection(s) still open");
            }
            open == 0 || since.elapsed() >= DRAIN
        });
        drop(shared);
        Ok(())
    }
}

/// Binds every address, refusing a non-loopback one without authentication.
fn bind(options: &HttpOptions) -> io::Result<Vec<TcpListener>> {
    if options.listen.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no --http address"));
    }
    let authenticated = options.auth_token_file.is_some() || options.jwt_secret_file.is_some();
    let mut listeners = Vec::new();
    for text in &options.listen {
        // IP literals only (and `localhost`): a name is not resolved, so what is bound is
        // exactly what was written, and no resolver is linked into the static binary.
        let address = match text.strip_prefix("localhost:") {
            Some(port) => format!("127.0.0.1:{port}").parse::<SocketAddr>(),
            None => text.parse(),
        };
        let address = address.map_err(|_| {
            let why = format!("--http {text}: not an address like 127.0.0.1:8080 or [::1]:8080");
            io::Error::new(io::ErrorKind::InvalidInput, why)
        })?;
        if !address.ip().is_loopback() && !authenticated && !options.allow_unauthenticated {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "refusing to listen on {address} without authentication: \
                     give --auth-token-file or --jwt-secret-file, or --allow-unauthenticated"
                ),
            ));
        }
        let listener =
            TcpListener::bind(address).map_err(|e| io::Error::new(e.kind(), format!("--http {address}: {e}")))?;
        listeners.push(listener);
    }
    Ok(listeners)
}

/// The RFC 9728 document and the paths it is served at: the configured URL's path, and the
/// well-known root.
fn metadata(options: &HttpOptions) -> Option<(Vec<String>, Vec<u8>)> {
    const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
    let url = options.resource_metadata_url.as_ref()?;
    let (scheme, rest) = url.split_once("://")?;
    let (authority, path) = rest.split_once('/').map_or((rest, String::new()), |(a, p)| (a, format!("/{p}")));
    // RFC 9728 §3.1: the metadata URL is the resource's with the well-known part inserted
    // after the authority, so taking it out gives the resource back.
    let resource_path = path.strip_prefix(WELL_KNOWN).unwrap_or(&options.path);
    let resource = format!("{scheme}://{authority}{resource_path}");
    let document = json!({
        "resource": resource,
        "authorization_servers": options.authorization_servers,
        "bearer_methods_supported": ["header"],
    });
    let mut paths = vec![WELL_KNOWN.to_string(), format!("{WELL_KNOWN}{}", options.path)];
    if !path.is_empty() && !paths.contains(&path) {
        paths.push(path);
    }
    Some((paths, document.to_string().into_bytes()))
}

/// Accepts connections until the server stops; past the cap, answers 503 at once.
fn accept(listener: TcpListener, shared: Arc<Shared>, live: Arc<AtomicUsize>, cap: usize) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::Relaxed) {
            return;
        }
        let Ok(mut stream) = stream else { continue };
        let Ok(peer) = stream.peer_addr() else { continue };
        if live.load(Ordering::Relaxed) >= cap {
            log::warn!("{peer} refused: {cap} connections open (--max-connections)");
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let body = dispatcher::error_body(None, crate::jsonrpc::ErrorObject::new(-32000, "too many connections"));
            let _ = Response::json(503, body).header("Retry-After", "1").closing().write(&mut stream, 1, 0);
            let _ = stream.shutdown(std::net::Shutdown::Write);
            continue;
        }
        live.fetch_add(1, Ordering::Relaxed);
        let (shared, live) = (shared.clone(), live.clone());
        let spawned =
            std::thread::Builder::new().name(format!("http {peer}")).stack_size(512 * 1024).spawn(move || {
                // Counted down however the thread ends.
                struct Leave(Arc<AtomicUsize>);
                impl Drop for Leave {
                    fn drop(&mut self) {
                        self.0.fetch_sub(1, Ordering::Relaxed);
                    }
                }
                let _leave = Leave(live);
                connection::serve(&shared, stream, peer);
            });
        if let Err(e) = spawned {
            log::error!("{peer}: cannot start a connection thread: {e}");
        }
    }
}

#[cfg(unix)]
extern "C" fn on_stop(_signal: i32) {
    SIGNALLED.store(true, Ordering::Relaxed);
}

#[cfg(unix)]
extern "C" fn on_hangup(_signal: i32) {
    guard::RELOAD.store(true, Ordering::Relaxed);
}

/// SIGTERM and SIGINT stop the server gracefully; SIGHUP re-reads the token file. The
/// handlers only store to an atomic, which is all a signal handler may safely do. Elsewhere
/// (Windows) Ctrl-C ends the process as before.
#[cfg(unix)]
fn install_signal_handlers() {
    unsafe extern "C" {
        fn signal(signum: i32, handler: extern "C" fn(i32)) -> usize;
    }
    const SIGHUP: i32 = 1;
    const SIGINT: i32 = 2;
    const SIGTERM: i32 = 15;
    // SAFETY: `signal` installs a handler; both handlers only store to a static atomic,
    // which is async-signal-safe.
    unsafe {
        signal(SIGTERM, on_stop);
        signal(SIGINT, on_stop);
        signal(SIGHUP, on_hangup);
    }
}

#[cfg(not(unix))]
fn install_signal_handlers() {}
