//! Streamable HTTP: the MCP endpoint over HTTP/1.1 on `std::net`, both eras on one path.
//!
//! Threads: one acceptor per listening address; one thread per connection (capped), which
//! reads requests, enforces limits and security, and writes responses; and the dispatching
//! loop on the thread that called [`Server::serve_http`], which alone touches the `Server`
//! and the sessions, so handlers need not be `Send` or `Sync`. Connection threads hand it
//! work over a channel and get each request's messages back on a bounded one of their own.
//! A slow handler delays the other requests (as on stdio), never the refusals, 202s and
//! keep-alives the connection threads give on their own.

mod acceptor;
mod claims;
mod cors;
mod exchange;
mod guard;
mod headers;
#[cfg_attr(not(test), expect(dead_code, reason = "--jwks-file is wired into the guard next"))]
mod jwks_file;
mod main_loop;
mod options;
mod parser;
mod peer_table;
mod response;
mod session_table;
mod signals;
mod socket;

use std::io;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::registry::server::Server;
pub use options::HttpOptions;

use exchange::Shared;
use guard::{Guard, Jwt};
use main_loop::Dispatcher;
use parser::Limits;
use peer_table::Peers;
use session_table::Sessions;
use socket::Listener;

/// The log target: the name `RUST_LOG` filters by (README, Logging), kept when files move.
const LOG: &str = "baremcp::http";

/// Work waiting for the dispatching loop, at most (more: the request is answered 503).
const INBOUND_CAPACITY: usize = 65_536;
/// The bodies of requests waiting for the dispatching loop, in bytes at most beyond the
/// first, and as many again of client notifications and responses (more: 503). While a
/// handler waits on its client, what it does not take waits here too; a request whose client
/// leaves is withdrawn at once.
const INBOUND_BYTES: usize = 64 << 20;

/// How long requests in flight may take to finish once the server is stopping.
const DRAIN: Duration = Duration::from_secs(10);

/// HMAC-SHA-256 of a JWT's signing input (`header.payload`) with `key`: the signature an
/// HS256 token accepted by `--jwt-secret-file` carries, for programs that issue them.
pub fn hs256(key: &[u8], signing_input: &[u8]) -> [u8; 32] {
    crate::util::sha256::hmac(key, signing_input)
}

impl Server {
    /// Serves Streamable HTTP on `options.listen` until SIGTERM or SIGINT (then requests in
    /// flight finish, streams end, and it returns `Ok`). Handlers run on the calling thread.
    ///
    /// Fails at once, with the reason, when an address cannot be bound, or is not a loopback
    /// one while no authentication is configured and `allow_unauthenticated` is not set.
    pub fn serve_http(&self, options: &HttpOptions) -> io::Result<()> {
        let listeners = bind(options)?;
        // A stop signalled to an earlier `serve_http` of this process is not this one's.
        signals::forget_stop();
        signals::install_signal_handlers();
        self.serve_listeners(listeners, options, Arc::new(AtomicBool::new(false)))
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
        self.serve_listeners(listeners.into_iter().map(Listener::Tcp).collect(), options, stop)
    }

    fn serve_listeners(
        &self,
        listeners: Vec<Listener>,
        options: &HttpOptions,
        stop: Arc<AtomicBool>,
    ) -> io::Result<()> {
        let guard = guard(options)?;
        // Said at the level the binary shows by default: where to connect, and with what.
        let token = if guard.authenticates() { "bearer token" } else { "no token" };
        let table = Arc::new(Sessions::new(
            Duration::from_secs(options.session_idle_secs),
            options.max_sessions,
        ));
        let (tx, rx) = crate::util::queue::sized_queue(INBOUND_CAPACITY, INBOUND_BYTES);
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
            path: options.path.clone(),
            keepalive: Duration::from_secs(options.sse_keepalive_secs),
            stop: stop.clone(),
            metadata: metadata(options),
            param_headers: headers::param_headers(self),
        });
        let live = Arc::new(AtomicUsize::new(0));
        let mut wakers = Vec::new();
        for listener in listeners {
            let name = listener.name()?;
            // The address ends the line: scripts read it from there (benches/http_load).
            let at = listener.endpoint(&options.path)?;
            log::info!(target: LOG, "{token} required; serving MCP at {at}");
            wakers.push(listener.waker()?);
            let (shared, live) = (shared.clone(), live.clone());
            let cap = options.max_connections;
            std::thread::Builder::new()
                .name(format!("accept {name}"))
                .spawn(move || acceptor::accept(listener, shared, live, cap))?;
        }
        // The loop holds no sender: when every connection and acceptor is gone, it ends.
        let mut stopping: Option<Instant> = None;
        let ask_timeout = Duration::from_secs(options.ask_timeout_secs);
        let mut dispatcher = Dispatcher::new(self, rx, table, &stop, ask_timeout);
        dispatcher.run(|dispatcher| {
            if signals::signalled() {
                stop.store(true, Ordering::Relaxed);
            }
            if !stop.load(Ordering::Relaxed) {
                return false;
            }
            let since = *stopping.get_or_insert_with(|| {
                log::info!(
                    target: LOG,
                    "stopping: no new connections; finishing requests in flight",
                );
                dispatcher.end_streams();
                // Wake the acceptors blocked in accept, so they see the flag and leave.
                wakers.iter().for_each(socket::Waker::wake);
                Instant::now()
            });
            dispatcher.end_streams();
            let open = live.load(Ordering::Relaxed);
            if open > 0 && since.elapsed() >= DRAIN {
                log::warn!(target: LOG, "stopped with {open} connection(s) still open");
            }
            open == 0 || since.elapsed() >= DRAIN
        });
        drop(shared);
        wakers.iter().for_each(socket::Waker::clean_up);
        Ok(())
    }
}

/// Who may call, from the authentication flags: the token file and the JWT secret are read
/// now, so a missing one stops the start with its name.
fn guard(options: &HttpOptions) -> io::Result<Guard> {
    let jwt = match &options.jwt_secret_file {
        Some(path) => {
            let secret = std::fs::read(path)
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
            let secret = secret.trim_ascii().to_vec();
            Some(Jwt {
                secret,
                audience: options.jwt_audience.clone(),
                issuer: options.jwt_issuer.clone(),
            })
        }
        None => None,
    };
    Guard::new(
        &options.allow_hosts,
        &options.allow_origins,
        options.auth_token_file.clone(),
        jwt,
        options.resource_metadata_url.clone(),
    )
    .map_err(|e| {
        let file = options.auth_token_file.clone().unwrap_or_default();
        io::Error::new(e.kind(), format!("--auth-token-file {}: {e}", file.display()))
    })
}

/// Binds every address, refusing a non-loopback one without authentication.
fn bind(options: &HttpOptions) -> io::Result<Vec<Listener>> {
    if options.listen.is_empty() {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no --http address"));
    }
    let authenticated = options.auth_token_file.is_some() || options.jwt_secret_file.is_some();
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
                     give --auth-token-file or --jwt-secret-file, or --allow-unauthenticated"
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
