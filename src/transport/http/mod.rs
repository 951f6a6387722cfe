//! Streamable HTTP: the MCP endpoint over HTTP/1.1 on `std::net`, both eras on one path.
//!
//! Threads: one acceptor per listening address; one thread per connection (capped), which
//! reads requests, enforces limits and security, and writes responses; and the dispatching
//! loop on the thread that called [`Server::serve_http`], which alone touches the `Server`
//! and the sessions, so handlers need not be `Send` or `Sync`. Connection threads hand it
//! work over a channel and get each request's messages back on a bounded one of their own;
//! a small JSON response with nothing before it the loop writes itself, without waiting
//! (`direct`).
//! A slow handler delays the other requests (as on stdio), never the refusals, 202s and
//! keep-alives the connection threads give on their own.

mod acceptor;
mod body;
mod body_budget;
mod claims;
mod cors;
mod direct;
mod exchange;
mod grammar;
mod guard;
mod headers;
mod jwks_file;
mod legacy_routes;
mod main_loop;
mod negotiation;
mod options;
#[cfg(target_os = "linux")]
mod park;
mod parser;
mod peer_table;
mod probes;
mod readiness;
mod relay;
mod response;
mod session_table;
mod signals;
mod socket;
mod stopping;
mod token_file;
mod verified;

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::registry::server::Server;
use crate::transport::telemetry::observer::Observer;
use crate::transport::telemetry::otlp::{Endpoint, Exporter, Resource};
use crate::transport::telemetry::server_metrics::ServerMetrics;
pub use options::HttpOptions;

use body_budget::BodyBudget;
pub use claims::is_scope_token;
use exchange::Shared;
use guard::Guard;
use main_loop::Dispatcher;
use parser::Limits;
use peer_table::Peers;
use readiness::Readiness;
use session_table::Sessions;
#[cfg(unix)]
pub use signals::ignored;
use socket::Listener;
use stopping::{Closer, DRAIN};

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http";

/// Work waiting for the dispatching loop, at most (more: the request is answered 503).
const INBOUND_CAPACITY: usize = 65_536;
/// The bodies of requests waiting for the dispatching loop, in bytes at most beyond the
/// first, and as many again of client notifications and responses (more: 503). While a
/// handler waits on its client, what it does not take waits here too; a request whose client
/// leaves is withdrawn at once.
const INBOUND_BYTES: usize = 64 << 20;

/// The most seconds any of `HttpOptions`' durations may be (about 31 years), and the most
/// of any of its counts.
const MAX_SECS: u64 = 1_000_000_000;
const MAX_COUNT: usize = u32::MAX as usize;

/// Past [`DRAIN`], how long connection threads still get to write what the loop answered.
const LAST_WRITES: Duration = Duration::from_millis(250);

/// HMAC-SHA-256 of a JWT's signing input (`header.payload`) with `key`: the signature an
/// HS256 token accepted by `--jwt-secret-file` carries, for programs that issue them.
pub fn hs256(key: &[u8], signing_input: &[u8]) -> [u8; 32] {
    crate::util::sha256::hmac(key, signing_input)
}

impl Server {
    /// Serves Streamable HTTP on `options.listen` until SIGTERM or SIGINT. SIGTERM first
    /// drains: `/readyz` answers 503 and the listeners serve `drain_secs` more; SIGINT (or a
    /// second signal) skips that. Then the listeners close, requests in flight get 10 s to
    /// finish, streams end, and it returns `Ok`; a handler still running 11 s after the close
    /// ends the process (exit status 0), since its process's signals were given to it.
    /// Handlers run on the calling thread.
    ///
    /// Fails at once, with the reason, when an address cannot be bound, or is not a loopback
    /// one while no authentication is configured and `allow_unauthenticated` is not set; or
    /// when `path` is a probe's, `session_id_prefix` or `otlp_endpoint` is malformed, or a
    /// duration is over 10^9 s or a count over `u32::MAX`.
    pub fn serve_http(&self, options: &HttpOptions) -> io::Result<()> {
        check(options)?;
        let listeners = bind(options)?;
        // A stop signalled to an earlier `serve_http` of this process is not this one's.
        signals::forget_stop();
        signals::install_signal_handlers();
        self.serve_listeners(listeners, options, Arc::new(AtomicBool::new(false)), true)
    }

    /// [`Server::serve_http`] on listeners already bound, stopping gracefully when `stop` is
    /// set, without a drain (or as a signal handler installed by [`Server::serve_http`] says).
    /// Installs no signal handler itself: a program (or test) that owns its signals sets
    /// `stop`. Never ends the process: a handler that outlives the stop's 10 s holds the
    /// return until it returns.
    pub fn serve_http_on(
        &self,
        listeners: Vec<TcpListener>,
        options: &HttpOptions,
        stop: Arc<AtomicBool>,
    ) -> io::Result<()> {
        let listeners = listeners.into_iter().map(Listener::Tcp).collect();
        self.serve_listeners(listeners, options, stop, false)
    }

    /// With `owns_signals`, a handler still running when a stop's drain is over ends the
    /// process ([`stopping::Watch`]).
    fn serve_listeners(
        &self,
        listeners: Vec<Listener>,
        options: &HttpOptions,
        stop: Arc<AtomicBool>,
        owns_signals: bool,
    ) -> io::Result<()> {
        let endpoint = check(options)?;
        let guard = Guard::new(options)?;
        // Said at the level the binary shows by default: where to connect, and with what.
        let token = if guard.authenticates() { "bearer token" } else { "no token" };
        let metrics = Arc::new(ServerMetrics::new());
        let exporter = endpoint.map(|at| Exporter::start(at, self.resource(), metrics.clone()));
        let exporter = exporter.transpose()?;
        let readiness = Arc::new(Readiness::new(
            stop.clone(),
            Duration::from_secs(options.drain_secs),
            Duration::from_secs(options.ready_stall_secs),
        ));
        let table = Arc::new(Sessions::new(
            Duration::from_secs(options.session_idle_secs),
            options.max_sessions,
            options.session_id_prefix.clone(),
            metrics.clone(),
        ));
        let (tx, rx) = crate::util::queue::sized_queue(INBOUND_CAPACITY, INBOUND_BYTES);
        #[cfg(target_os = "linux")]
        let (dock, watcher) = park::watch(&rx);
        #[cfg(not(target_os = "linux"))]
        let (dock, watcher) = (None, None);
        let limits = Limits {
            max_body: options.max_body.min(self.max_message_bytes),
            deadline: Duration::from_secs(options.request_timeout_secs),
            idle: Duration::from_secs(options.idle_timeout_secs),
        };
        let shared = Arc::new(Shared {
            guard,
            table: table.clone(),
            peers: Arc::new(Peers::new(
                options.max_connections_per_peer,
                options.max_streams_per_peer,
            )),
            tx,
            limits,
            bodies: BodyBudget::new(INBOUND_BYTES),
            path: options.path.clone(),
            keepalive: Duration::from_secs(options.sse_keepalive_secs),
            stop: readiness.closing.clone(),
            readiness: readiness.clone(),
            metrics: metrics.clone(),
            metadata: metadata(options),
            param_headers: headers::param_headers(self),
            dock,
        });
        let mut wakers = Vec::new();
        for listener in listeners {
            let name = listener.name()?;
            // The address ends the line: scripts read it from there (benches/http_load).
            let at = listener.endpoint(&options.path)?;
            log::info!(target: LOG, "{token} required; serving MCP at {at}");
            wakers.push(listener.waker()?);
            let shared = shared.clone();
            let cap = options.max_connections;
            std::thread::Builder::new()
                .name(format!("accept {name}"))
                .spawn(move || acceptor::accept(listener, shared, cap))?;
        }
        // The loop holds no sender: when every connection and acceptor is gone, it ends.
        let closer = Arc::new(Closer::new(readiness.clone(), wakers));
        let watch = stopping::Watch::start(closer.clone(), owns_signals);
        let ask_timeout = Duration::from_secs(options.ask_timeout_secs);
        let observer = Observer::new(metrics.clone(), exporter);
        let mut dispatcher =
            Dispatcher::new(self, rx, table, &readiness, observer, ask_timeout).watching(watcher);
        dispatcher.run(|dispatcher| {
            let Some(since) = closer.close_if_due() else { return false };
            dispatcher.end_streams();
            let open = metrics.connections.get();
            if open > 0 && since.elapsed() >= DRAIN {
                log::warn!(target: LOG, "stopped with {open} connection(s) still open");
            }
            open == 0 || since.elapsed() >= DRAIN
        });
        drop(watch);
        dispatcher.finish();
        drop(shared);
        last_writes(&metrics);
        closer.clean_up();
        Ok(())
    }

    /// What spans say produced them: this server's name and version.
    fn resource(&self) -> Resource {
        let text = |key: &str| self.info[key].as_str().unwrap_or_default().to_string();
        Resource { service_name: text("name"), service_version: text("version") }
    }
}

/// Stopped with connections open, waits up to [`LAST_WRITES`] for them to close: a request
/// the loop answered just before the end may not be written yet (its connection thread was
/// only just woken), nor one still arriving refused (the loop is gone: 503). Both take a
/// moment, not a tick.
fn last_writes(metrics: &ServerMetrics) {
    let began = Instant::now();
    while metrics.connections.get() > 0 && began.elapsed() < LAST_WRITES {
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// What `serve_http` refuses before it binds anything: an endpoint path a probe or
/// `/metrics` has, a malformed session id prefix, metadata flags that cannot work, or a
/// malformed OTLP endpoint (which is returned, read).
fn check(options: &HttpOptions) -> io::Result<Option<Endpoint>> {
    let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
    // A request's path is compared without its query, and is printable ASCII without spaces.
    // Clients that normalize URLs (curl, browsers) never send `.` or `..` segments.
    let reachable = |b: u8| b.is_ascii_graphic() && b != b'?' && b != b'#';
    let dotted =
        options.path.contains("//") || options.path.split('/').any(|s| s == "." || s == "..");
    if !options.path.starts_with('/') || !options.path.bytes().all(reachable) || dotted {
        let path = &options.path;
        return Err(invalid(format!(
            "--http-path {path:?}: a path starting with /, without spaces, ? or #, // or . or \
             .. segments"
        )));
    }
    if [probes::HEALTHZ, probes::READYZ, probes::METRICS].contains(&options.path.as_str()) {
        let path = &options.path;
        return Err(invalid(format!("--http-path {path}: that path is served for operators")));
    }
    // Each duration is added to the clock and each count read as a gauge: past these they
    // would overflow (a panic on every connection), and no use comes near them.
    let o = options;
    let secs = [
        ("--session-idle-secs", o.session_idle_secs),
        ("--ask-timeout-secs", o.ask_timeout_secs),
        ("--sse-keepalive-secs", o.sse_keepalive_secs),
        ("--request-timeout-secs", o.request_timeout_secs),
        ("--idle-timeout-secs", o.idle_timeout_secs),
        ("--drain-secs", o.drain_secs),
        ("--ready-stall-secs", o.ready_stall_secs),
    ];
    let counts = [
        ("--max-sessions", o.max_sessions),
        ("--max-connections", o.max_connections),
        ("--max-connections-per-peer", o.max_connections_per_peer),
        ("--max-streams-per-peer", o.max_streams_per_peer),
    ];
    let too_many = counts.into_iter().find(|(_, n)| *n > MAX_COUNT).map(|(f, n)| (f, n as u64));
    if let Some((flag, n)) = secs.into_iter().find(|(_, n)| *n > MAX_SECS).or(too_many) {
        let most = if flag.ends_with("-secs") { MAX_SECS } else { MAX_COUNT as u64 };
        return Err(invalid(format!("{flag} {n}: at most {most}")));
    }
    if let Some(prefix) = &options.session_id_prefix {
        let allowed = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
        if prefix.is_empty() || prefix.len() > 16 || !prefix.bytes().all(allowed) {
            return Err(invalid(format!(
                "--session-id-prefix {prefix:?}: 1 to 16 letters, digits, _ or -"
            )));
        }
    }
    check_metadata(options).map_err(invalid)?;
    options.otlp_endpoint.as_deref().map(Endpoint::parse).transpose().map_err(invalid)
}

/// RFC 9728 metadata, whose URL a client fetches and a challenge quotes as it is, and which
/// must name an authorization server (MCP authorization, protected resource metadata).
fn check_metadata(options: &HttpOptions) -> Result<(), String> {
    let servers = &options.authorization_servers;
    match &options.resource_metadata_url {
        Some(url) => absolute_url("--resource-metadata-url", url)?,
        None if servers.is_empty() => return Ok(()),
        None => {
            return Err("--authorization-server is listed in the RFC 9728 metadata: give \
                        --resource-metadata-url too"
                .into());
        }
    }
    if servers.is_empty() {
        return Err("--resource-metadata-url needs --authorization-server: the metadata must \
                    name at least one (MCP authorization)"
            .into());
    }
    servers.iter().try_for_each(|server| absolute_url("--authorization-server", server))
}

/// `url` is an absolute `http` or `https` URL with a host, of the characters RFC 3986 allows
/// but `?` and `#`: one a client can fetch, and a quoted string can carry as it is.
fn absolute_url(flag: &str, url: &str) -> Result<(), String> {
    let allowed = |b: u8| b.is_ascii_alphanumeric() || b"-._~:/[]@!$&'()*+,;=%".contains(&b);
    let authority = match url.split_once("://") {
        Some((scheme, rest))
            if ["http", "https"].iter().any(|s| s.eq_ignore_ascii_case(scheme)) =>
        {
            rest.split('/').next().unwrap_or_default()
        }
        _ => "",
    };
    if authority.is_empty() || !url.bytes().all(allowed) {
        return Err(format!(
            "{flag} {url:?}: an absolute http:// or https:// URL with a host, without spaces, \
             quotes, ? or #"
        ));
    }
    Ok(())
}

/// Binds every address, refusing a non-loopback one without authentication.
fn bind(options: &HttpOptions) -> io::Result<Vec<Listener>> {
    if options.listen.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no --http address"));
    }
    let authenticated = options.auth_token_file.is_some()
        || options.jwt_secret_file.is_some()
        || options.jwks_file.is_some();
    let mut listeners = Vec::new();
    for text in &options.listen {
        // A unix-domain socket: local like loopback, and its file's permissions say who may
        // connect.
        if let Some(path) = text.strip_prefix("unix:") {
            listeners.push(bind_unix(path)?);
            continue;
        }
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
                     give --auth-token-file, --jwt-secret-file or --jwks-file, or \
                     --allow-unauthenticated"
                ),
            ));
        }
        let listener = TcpListener::bind(address)
            .map_err(|e| io::Error::new(e.kind(), format!("--http {address}: {e}")))?;
        listeners.push(Listener::Tcp(listener));
    }
    Ok(listeners)
}

#[cfg(unix)]
fn bind_unix(path: &str) -> io::Result<Listener> {
    Listener::bind_unix(path.into())
        .map_err(|e| io::Error::new(e.kind(), format!("--http unix:{path}: {e}")))
}

#[cfg(not(unix))]
fn bind_unix(path: &str) -> io::Result<Listener> {
    let why = format!("--http unix:{path}: unix-domain sockets are served on unix only");
    Err(io::Error::new(io::ErrorKind::Unsupported, why))
}

/// The RFC 9728 document and the paths it is served at: the configured URL's path, and the
/// well-known root.
fn metadata(options: &HttpOptions) -> Option<(Vec<String>, Vec<u8>)> {
    const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";
    let url = options.resource_metadata_url.as_ref()?;
    let (scheme, rest) = url.split_once("://")?;
    let (authority, path) =
        rest.split_once('/').map_or((rest, String::new()), |(a, p)| (a, format!("/{p}")));
    // RFC 9728 §3.1: the metadata URL is the resource's with the well-known part inserted
    // after the authority, so taking it out gives the resource back.
    let resource_path = path.strip_prefix(WELL_KNOWN).unwrap_or(&options.path);
    let resource = format!("{scheme}://{authority}{resource_path}");
    let mut document = json!({
        "resource": resource,
        "authorization_servers": options.authorization_servers,
        "bearer_methods_supported": ["header"],
    });
    if !options.required_scopes.is_empty() {
        document["scopes_supported"] = json!(options.required_scopes);
    }
    let mut paths = vec![WELL_KNOWN.to_string(), format!("{WELL_KNOWN}{}", options.path)];
    if !path.is_empty() && !paths.contains(&path) {
        paths.push(path);
    }
    Some((paths, document.to_string().into_bytes()))
}
