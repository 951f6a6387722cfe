//! The server: what is registered, the per-process session, and the loop
//! bytes → line → message → dispatch → reply → bytes.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::os::fd::RawFd;
use std::panic::{self, AssertUnwindSafe};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::conn::{Conn, Outbox};
use crate::dispatch;
use crate::era;
use crate::files::{FileRoot, Stamp};
use crate::jsonrpc::{self, Answer, ErrorObject, Frame, Id, Message, Reply};
use crate::prompt::Prompt;
use crate::resource::{Resource, ResourceTemplate};
use crate::schema::Schema;
use crate::tool::Tool;
use crate::transport::{self, Line};

/// Default bound on one incoming line.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How often [`Server::serve_stdio`] looks at subscribed files while the client is quiet.
const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// A registration problem: a duplicate name or a schema that does not load.
#[derive(Debug, Clone, PartialEq)]
pub struct Error(pub String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// A tool with its schemas compiled and its listing prepared once.
pub(crate) struct Registered {
    pub tool: Tool,
    pub input: Schema,
    pub output: Option<Schema>,
    pub listing: Value,
}

/// FNV-1a: tool names are short and chosen by the server author, so the lookup every call
/// makes needs no flooding-resistant (and slower) SipHash.
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 = (self.0 ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// An MCP server: identity, registered tools and limits. Build it, then [`Server::serve`].
pub struct Server {
    pub(crate) info: Value,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: Vec<Registered>,
    tool_index: HashMap<String, usize, BuildHasherDefault<Fnv>>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
    pub(crate) roots: Vec<FileRoot>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) page_size: Option<usize>,
    pub(crate) ttl_ms: u64,
    max_message_bytes: usize,
    /// Signs 2026-07-28 `requestState`; made on first use, so start-up reads no randomness.
    state_key: OnceLock<Vec<u8>>,
    /// `info` as JSON text, written into every 2026-07-28 tool result; made on first use.
    info_json: OnceLock<String>,
}

/// What one process remembers between messages: the legacy handshake and its resource
/// subscriptions, and open `subscriptions/listen` streams. Modern requests never read the
/// handshake.
#[derive(Default)]
pub(crate) struct Session {
    pub legacy_version: Option<&'static str>,
    /// What the legacy client declared in `initialize`.
    pub client_capabilities: Value,
    /// Set by `logging/setLevel` (legacy).
    pub log_level: Option<crate::context::LogLevel>,
    /// The request a handler is waiting on the client for, and whether it was cancelled.
    pub in_flight: Option<Id<'static>>,
    pub cancelled: bool,
    /// Legacy `resources/subscribe` URIs.
    pub subscribed: BTreeSet<String>,
    /// Open `subscriptions/listen` streams and the resource URIs each agreed to watch.
    pub listening: Vec<(Id<'static>, Vec<String>)>,
    /// Resources that changed (reported by handlers, or watched files), to notify after the
    /// current response.
    pub updated: Vec<String>,
    /// The files some subscription names (`--root` files, resources' watched files), as they
    /// looked when last seen (`None`: gone).
    pub watched: BTreeMap<String, Option<Stamp>>,
    /// The buffer of the last tool result, emptied and kept for the next one.
    pub spare: Vec<u8>,
    /// The last tool call's (small) arguments, whose allocations the next call reuses (taken
    /// while a call uses them).
    pub arguments: Option<Value>,
}

impl Server {
    /// A server that introduces itself as `name` `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Server {
        Server {
            info: json!({ "name": name.into(), "version": version.into() }),
            instructions: None,
            tools: Vec::new(),
            tool_index: HashMap::default(),
            resources: Vec::new(),
            templates: Vec::new(),
            roots: Vec::new(),
            prompts: Vec::new(),
            page_size: None,
            ttl_ms: 0,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            state_key: OnceLock::new(),
            info_json: OnceLock::new(),
        }
    }

    /// A display name shown in `serverInfo`.
    pub fn title(mut self, title: impl Into<String>) -> Server {
        self.info["title"] = json!(title.into());
        self.info_json = OnceLock::new();
        self
    }

    /// A description shown in `serverInfo`.
    pub fn description(mut self, description: impl Into<String>) -> Server {
        self.info["description"] = json!(description.into());
        self.info_json = OnceLock::new();
        self
    }

    /// Guidance for the model, sent in `initialize` and `server/discover` results.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Server {
        self.instructions = Some(instructions.into());
        self
    }

    /// Splits lists into pages of `size` items (default: one page with everything).
    pub fn page_size(mut self, size: usize) -> Server {
        self.page_size = Some(size.max(1));
        self
    }

    /// Bounds one incoming line; longer lines are skipped and answered with -32600.
    pub fn max_message_bytes(mut self, max: usize) -> Server {
        self.max_message_bytes = max;
        self
    }

    /// The `ttlMs` caching hint on modern list and discover results (default 0: always stale).
    pub fn cache_ttl_ms(mut self, ttl_ms: u64) -> Server {
        self.ttl_ms = ttl_ms;
        self
    }

    /// The key that signs `requestState` (default: `BAREMCP_STATE_SECRET`, else random per
    /// process). Servers behind one endpoint that must accept each other's state share one.
    pub fn state_secret(mut self, secret: impl Into<Vec<u8>>) -> Server {
        self.state_key = OnceLock::from(secret.into());
        self
    }

    /// Registers a tool, compiling its schemas. Schema warnings (keywords that are known but
    /// not enforced) are logged on stderr with the tool name.
    pub fn add_tool(&mut self, tool: Tool) -> Result<&mut Server, Error> {
        if self.tool_index.contains_key(&tool.name) {
            return Err(Error(format!("duplicate tool name {:?}", tool.name)));
        }
        let compile = |what: &str, schema: &Value| {
            let compiled = Schema::compile(schema).map_err(|errors| {
                let list: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
                Error(format!("tool {:?}: {what} does not load: {}", tool.name, list.join("; ")))
            })?;
            for warning in compiled.warnings() {
                log::warn!("tool {:?}: {what}: {warning}", tool.name);
            }
            Ok::<Schema, Error>(compiled)
        };
        let input = compile("inputSchema", &tool.input_schema)?;
        if tool.input_schema.get("type") != Some(&json!("object")) {
            return Err(Error(format!(r#"tool {:?}: inputSchema must have "type": "object""#, tool.name)));
        }
        let output = tool.output_schema.as_ref().map(|s| compile("outputSchema", s)).transpose()?;
        self.tool_index.insert(tool.name.clone(), self.tools.len());
        let listing = tool.listing();
        self.tools.push(Registered { tool, input, output, listing });
        Ok(self)
    }

    /// Registers a resource with a fixed URI.
    pub fn add_resource(&mut self, resource: Resource) -> Result<&mut Server, Error> {
        if self.resources.iter().any(|r| r.uri == resource.uri) {
            return Err(Error(format!("duplicate resource uri {:?}", resource.uri)));
        }
        self.resources.push(resource);
        Ok(self)
    }

    /// Registers a resource template; a read whose URI matches no static resource tries the
    /// templates in registration order.
    pub fn add_template(&mut self, template: ResourceTemplate) -> Result<&mut Server, Error> {
        if template.template.variables().next().is_none() {
            return Err(Error(format!("resource template {} has no {{variable}}", template.meta["uriTemplate"])));
        }
        self.templates.push(template);
        Ok(self)
    }

    /// Serves every regular file under a directory (see `files.rs` for the safety rules).
    pub fn add_root(&mut self, root: FileRoot) -> &mut Server {
        self.roots.push(root);
        self
    }

    pub fn add_prompt(&mut self, prompt: Prompt) -> Result<&mut Server, Error> {
        if self.prompts.iter().any(|p| p.name == prompt.name) {
            return Err(Error(format!("duplicate prompt name {:?}", prompt.name)));
        }
        self.prompts.push(prompt);
        Ok(self)
    }

    pub(crate) fn has_resources(&self) -> bool {
        !(self.resources.is_empty() && self.templates.is_empty() && self.roots.is_empty())
    }

    pub(crate) fn has_prompts(&self) -> bool {
        !self.prompts.is_empty()
    }

    /// Completion needs something to complete: a prompt argument or a template variable.
    pub(crate) fn has_completions(&self) -> bool {
        self.has_prompts() || !self.templates.is_empty() || !self.roots.is_empty()
    }

    pub(crate) fn has_tools(&self) -> bool {
        !self.tools.is_empty()
    }

    pub(crate) fn info_json(&self) -> &str {
        self.info_json.get_or_init(|| self.info.to_string())
    }

    pub(crate) fn state_key(&self) -> &[u8] {
        self.state_key.get_or_init(crate::state::process_key)
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&Registered> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    /// What the server serves, declared in `initialize` and `server/discover`.
    pub(crate) fn capabilities(&self) -> Value {
        let mut caps = Map::new();
        // Every handler can log through its Context, so logging is always served.
        caps.insert("logging".into(), json!({}));
        if !self.tools.is_empty() {
            caps.insert("tools".into(), json!({}));
        }
        if self.has_resources() {
            caps.insert("resources".into(), json!({ "subscribe": true }));
        }
        if self.has_prompts() {
            caps.insert("prompts".into(), json!({}));
        }
        if self.has_completions() {
            caps.insert("completions".into(), json!({}));
        }
        Value::Object(caps)
    }

    /// Serves MCP over newline-delimited JSON-RPC until `reader` ends.
    ///
    /// Returns `Ok` at end of input and an error only when reading or writing fails (a
    /// closed output shows up as `ErrorKind::BrokenPipe`). Subscribed files (`--root` files,
    /// [`Resource::watch_file`]) are looked at whenever the loop is about to wait for input;
    /// [`Server::serve_stdio`] also looks while it waits.
    pub fn serve(&self, reader: &mut dyn BufRead, writer: &mut dyn Write) -> io::Result<()> {
        self.run(reader, writer, None)
    }

    /// Serves on this process's stdin and stdout, as [`Server::serve`] does. While the client
    /// is quiet and a subscription names a file, the file is looked at every half second, so
    /// its change is notified without waiting for the client's next message. The input buffer
    /// is larger than std's 8 KiB so a burst of pipelined requests is read in few system calls.
    pub fn serve_stdio(&self) -> io::Result<()> {
        let mut input = BufReader::with_capacity(64 * 1024, io::stdin().lock());
        let mut output = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
        self.run(&mut input, &mut output, Some(0))
    }

    /// The loop; `input` is the reader's file descriptor when it can be polled.
    fn run(&self, reader: &mut dyn BufRead, writer: &mut dyn Write, input: Option<RawFd>) -> io::Result<()> {
        let mut session = Session::default();
        let mut conn = Conn::new(reader, Outbox::new(writer), self.max_message_bytes);
        let mut line = Vec::new();
        loop {
            match conn.next_line(&mut line)? {
                Line::Eof => return conn.out.flush(),
                Line::TooLong => {
                    log::warn!("discarded a line longer than {} bytes", self.max_message_bytes);
                    conn.out.response(None, &Err(ErrorObject::too_large()));
                }
                Line::Complete => match std::str::from_utf8(&line) {
                    Ok(text) if text.trim_ascii().is_empty() => continue,
                    Ok(text) => {
                        log::debug!("<- {text}");
                        self.handle_line(text, &mut session, &mut conn);
                    }
                    Err(_) => conn.out.response(None, &Err(ErrorObject::parse_error())),
                },
            }
            // Flush before the loop could wait for input, so no reply ever waits on the
            // client; replies to lines that already arrived share one write.
            if conn.input_waiting() {
                conn.out.check()?;
            } else {
                self.before_waiting(&mut session, &mut conn, input)?;
            }
        }
    }

    /// Flushes before the loop waits for input. While files are watched, it looks at
    /// them first and, when `input` can be polled, again every [`WATCH_INTERVAL`] until input
    /// arrives.
    fn before_waiting(&self, session: &mut Session, conn: &mut Conn, input: Option<RawFd>) -> io::Result<()> {
        loop {
            if !session.watched.is_empty() {
                self.look_at_files(session);
                notify_updates(session, &mut conn.out);
            }
            conn.out.flush()?;
            match input {
                Some(fd) if !session.watched.is_empty() && !transport::readable_within(fd, WATCH_INTERVAL) => {}
                _ => return Ok(()),
            }
        }
    }

    /// Starts watching `uri` if it names a file (a `--root` file, or a resource's watched
    /// file), from how it looks now. Called when a subscription names it.
    pub(crate) fn watch(&self, session: &mut Session, uri: &str) {
        if let Some(stamp) = self.file_stamp(uri) {
            session.watched.insert(uri.to_string(), Some(stamp));
        }
    }

    /// Queues an update for each watched file that changed (or went) since it was last seen,
    /// and forgets files that no subscription names any more.
    fn look_at_files(&self, session: &mut Session) {
        let Session { watched, subscribed, listening, updated, .. } = session;
        watched.retain(|uri, _| subscribed.contains(uri) || listening.iter().any(|(_, uris)| uris.contains(uri)));
        for (uri, seen) in watched.iter_mut() {
            let now = self.file_stamp(uri);
            if now != *seen {
                *seen = now;
                updated.push(uri.clone());
            }
        }
    }

    /// How the file behind `uri` looks now: a resource's watched file, or a `--root` file.
    fn file_stamp(&self, uri: &str) -> Option<Stamp> {
        match self.resources.iter().find(|r| r.uri == uri) {
            Some(resource) => resource.watched_file.as_deref().and_then(Stamp::of),
            None => self.roots.iter().find_map(|root| root.stamp(uri)),
        }
    }

    fn handle_line(&self, text: &str, session: &mut Session, conn: &mut Conn) {
        match jsonrpc::parse_line(text) {
            Frame::Single(message) => {
                if let Some((id, reply)) = self.handle_message(message, session, conn) {
                    conn.out.response(id.as_ref(), &reply);
                    // A small result buffer is reused, so a tool call allocates none.
                    if let Ok(Answer::Json(mut buf)) = reply
                        && buf.capacity() <= 64 * 1024
                    {
                        buf.clear();
                        session.spare = buf;
                    }
                }
            }
            Frame::Batch(items) => self.handle_batch(&items, session, conn),
        }
        if !session.updated.is_empty() {
            notify_updates(session, &mut conn.out);
        }
    }

    /// JSON-RPC batches exist only in MCP 2025-03-26; elsewhere a batch is one invalid request.
    fn handle_batch(&self, items: &[&str], session: &mut Session, conn: &mut Conn) {
        if items.is_empty() || session.legacy_version != Some("2025-03-26") {
            let why = if items.is_empty() { "empty batch" } else { "batches need protocol version 2025-03-26" };
            conn.out.response(None, &Err(ErrorObject::invalid_request().with_data(json!(why))));
            return;
        }
        let replies: Vec<(Option<Id>, Reply)> =
            items.iter().filter_map(|item| self.handle_message(jsonrpc::parse_message(item), session, conn)).collect();
        conn.out.batch(&replies);
    }

    fn handle_message<'a>(
        &self,
        message: Message<'a>,
        session: &mut Session,
        conn: &mut Conn,
    ) -> Option<(Option<Id<'a>>, Reply)> {
        match message {
            Message::Request { id, method, params } => {
                // Timing costs a clock read per request: only when the line will be logged.
                let started = log::log_enabled!(log::Level::Info).then(Instant::now);
                let mut request = match dispatch::request(&id, &method, &params) {
                    Ok(request) => request,
                    Err(error) => return Some((Some(id), Err(error))),
                };
                // Tool panics are caught closer to the tool; this net catches the rest, so no
                // request can take the process down.
                let dispatched =
                    panic::catch_unwind(AssertUnwindSafe(|| dispatch::dispatch(self, session, &mut request, conn)));
                let reply = dispatched.unwrap_or_else(|_| Some(Err(ErrorObject::internal())));
                // A request cancelled while its handler waited gets no response at all.
                session.in_flight = None;
                if std::mem::take(&mut session.cancelled) {
                    log::debug!("{method} id={id} cancelled: no response");
                    return None;
                }
                let reply = reply?;
                if let Some(started) = started {
                    request.log_completion(&reply, started.elapsed().as_micros());
                }
                drop(request);
                Some((Some(id), reply))
            }
            Message::Notification { method, params } => {
                dispatch::notification(session, &method, &params);
                None
            }
            Message::Response { id } => {
                log::debug!(
                    "ignored a response to {} (no request of ours is pending)",
                    id.map_or("null".into(), |i| i.to_string())
                );
                None
            }
            Message::BadNotification => {
                log::debug!("ignored a malformed notification");
                None
            }
            Message::Invalid { id, error } => Some((id, Err(error))),
        }
    }

    /// serverInfo for a modern result's `_meta`.
    pub(crate) fn result_meta(&self) -> Value {
        json!({ (era::SERVER_INFO_KEY): self.info })
    }
}

/// Sends `notifications/resources/updated` for each changed URI to the legacy subscription
/// and to every `subscriptions/listen` stream that watches it.
fn notify_updates(session: &mut Session, out: &mut Outbox) {
    for uri in std::mem::take(&mut session.updated) {
        if session.subscribed.contains(&uri) {
            out.notification("notifications/resources/updated", &json!({ "uri": uri }));
        }
        for (id, uris) in &session.listening {
            if uris.contains(&uri) {
                let meta = json!({ (era::SUBSCRIPTION_ID_KEY): id.to_value() });
                out.notification("notifications/resources/updated", &json!({ "_meta": meta, "uri": uri }));
            }
        }
    }
}
