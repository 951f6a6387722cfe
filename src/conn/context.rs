//! What a handler may do while it serves a request: log to the client, report progress,
//! notice cancellation, report changed resources, and ask the client for input (elicitation,
//! sampling, roots) in a way that works in both eras.
//!
//! One handler serves both eras. In the legacy era, `elicit`, `sample` and `roots` send a
//! request to the client and wait for its response on the same stream. In 2026-07-28 there
//! are no server requests: the first call that lacks its answer returns
//! [`ClientError::InputRequired`], the handler returns (usually through `?`), and the client
//! gets an `InputRequiredResult`; it retries with the answers, the handler runs again from
//! the start, and this time each call returns its answer. A handler must therefore ask in
//! the same order every time, and do nothing it cannot repeat before its last question.

use serde_json::{Map, Value, json};

pub use crate::conn::connection::ClientError;
use crate::conn::connection::Conn;
use crate::conn::principal::Principal;
use crate::conn::session::Session;
use crate::util::trace_context::TraceContext;
use crate::wire::era::Era;
use crate::wire::jsonrpc::Id;
pub use crate::wire::log_level::LogLevel;

/// What a handler may ask the client for.
#[derive(Clone, Copy)]
enum Question {
    Elicitation,
    Sampling,
    Roots,
}

impl Question {
    /// The capability the client must declare for it, and the method that asks it.
    fn capability_and_method(self) -> (&'static str, &'static str) {
        match self {
            Question::Elicitation => ("elicitation", "elicitation/create"),
            Question::Sampling => ("sampling", "sampling/createMessage"),
            Question::Roots => ("roots", "roots/list"),
        }
    }
}

/// What a handler may know and do about the request it serves: every tool, prompt and
/// resource handler gets one.
///
/// ```
/// use baremcp::{ClientError, LogLevel, Server, Tool, ToolOutput};
/// use serde_json::json;
///
/// let confirm = Tool::new("confirm", "Asks before it acts", json!({"type": "object"}), |_, cx| {
///     cx.log(LogLevel::Info, Some("confirm"), "asking the user");
///     cx.progress(1.0, Some(2.0), Some("waiting for the user"));
///     // Legacy: a request to the client and a wait. 2026-07-28: the first run returns here
///     // through `?` with `InputRequired`, and the client retries with the answer.
///     let answer = match cx.elicit("Go ahead?", json!({"type": "object", "properties": {}})) {
///         Err(ClientError::Unsupported(_)) => return Ok(ToolOutput::text("cannot ask: not done")),
///         other => other?,
///     };
///     Ok(ToolOutput::text(format!("the user said {}", answer["action"])))
/// });
/// let mut server = Server::new("asker", "1.0.0");
/// server.add_tool(confirm)?;
///
/// // This client declared no elicitation capability, so the tool cannot ask.
/// let input = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}
/// {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"confirm"}}
/// "#;
/// let mut output = Vec::new();
/// server.serve(&mut &input[..], &mut output)?;
/// let last = String::from_utf8(output)?.lines().last().unwrap_or_default().to_string();
/// assert_eq!(last, r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"cannot ask: not done"}]}}"#);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Context<'a, 'io> {
    pub(crate) id: &'a Id<'a>,
    pub(crate) era: Era,
    session: &'a mut Session,
    conn: &'a mut Conn<'io>,
    progress_token: Option<Value>,
    last_progress: Option<f64>,
    log_level: Option<LogLevel>,
    /// The request's `_meta` as raw JSON text: its trace context is read when a handler asks.
    raw_meta: Option<&'a str>,
    /// 2026-07-28: the request's `clientCapabilities` (legacy ones live in the session).
    client_capabilities: Option<&'a str>,
    /// 2026-07-28: answers from `inputResponses` and a verified `requestState` (`None`: no
    /// answers; an absent map costs nothing to drop, on every call).
    pub(crate) answers: Option<Map<String, Value>>,
    /// 2026-07-28: the answers this run asked for, copied from `answers`: all that the next
    /// `requestState` carries, so keys the server never asked for do not travel on.
    pub(crate) used: Option<Map<String, Value>>,
    /// 2026-07-28: what to ask for in an `InputRequiredResult`, once there is something.
    pub(crate) pending: Option<Map<String, Value>>,
    /// 2026-07-28: a capability the client must declare (-32021).
    pub(crate) missing: Option<&'static str>,
    /// How many questions of each kind this request asked so far.
    asked: [u32; 3],
    /// 2026-07-28: the key the next question goes under, when the handler named it.
    next_key: Option<String>,
}

/// The per-request facts a context is built from.
pub(crate) struct Setup<'a> {
    pub id: &'a Id<'a>,
    pub era: Era,
    pub progress_token: Option<Value>,
    pub log_level: Option<LogLevel>,
    /// The request's `_meta` as raw JSON text.
    pub raw_meta: Option<&'a str>,
    /// 2026-07-28: the request's `clientCapabilities` as sent, read only when a handler asks
    /// the client for something.
    pub client_capabilities: Option<&'a str>,
    pub answers: Option<Map<String, Value>>,
}

impl<'a, 'io> Context<'a, 'io> {
    pub(crate) fn new(
        setup: Setup<'a>,
        session: &'a mut Session,
        conn: &'a mut Conn<'io>,
    ) -> Context<'a, 'io> {
        // Legacy capabilities are read from the session when asked for, not copied per call.
        let (log_level, client_capabilities) = match setup.era {
            Era::Modern(_) => (setup.log_level, setup.client_capabilities),
            Era::Legacy => (session.log_level, None),
        };
        Context {
            id: setup.id,
            era: setup.era,
            session,
            conn,
            progress_token: setup.progress_token,
            last_progress: None,
            log_level,
            raw_meta: setup.raw_meta,
            client_capabilities,
            answers: setup.answers,
            used: None,
            pending: None,
            missing: None,
            asked: [0; 3],
            next_key: None,
        }
    }

    /// The JSON-RPC id of the request being served.
    pub fn request_id(&self) -> &Id<'_> {
        self.id
    }

    /// The protocol version this request speaks: its `_meta` version (2026-07-28) or the one
    /// negotiated by `initialize`.
    pub fn protocol_version(&self) -> &'static str {
        match self.era {
            Era::Modern(version) => version,
            Era::Legacy => {
                self.session.legacy_version.unwrap_or(crate::wire::era::LEGACY_VERSIONS[0])
            }
        }
    }

    /// Who made this request, when the transport authenticated the caller: over HTTP, the
    /// subject of a verified JWT, or the name of the static bearer token presented (the token
    /// file's `NAME TOKEN` lines). `None` on stdio and over HTTP without authentication.
    pub fn principal(&self) -> Option<&Principal> {
        self.conn.principal()
    }

    /// The request's `_meta.progressToken`, as sent (a string or an integer), if any.
    pub fn progress_token(&self) -> Option<&Value> {
        self.progress_token.as_ref()
    }

    /// The W3C trace context the request carried in `params._meta.traceparent` (and
    /// `tracestate`), when it was valid, else the one of its HTTP `traceparent` header: pass
    /// it on to what the handler calls, so that work joins the caller's trace. The request's
    /// log line names its trace id. Read from the request on each call.
    ///
    /// ```
    /// use baremcp::{Server, Tool, ToolOutput};
    /// use serde_json::json;
    ///
    /// let traced = Tool::new("traced", "Names its trace", json!({"type": "object"}), |_, cx| {
    ///     // Calling on, send `trace.traceparent(span)` with a span id of your own.
    ///     let said = match cx.trace() {
    ///         Some(trace) => format!("trace {} from span {:02x?}", trace.trace_id_hex(), trace.parent_id()),
    ///         None => "no trace".to_string(),
    ///     };
    ///     Ok(ToolOutput::text(said))
    /// });
    /// let mut server = Server::new("tracer", "1.0.0");
    /// server.add_tool(traced)?;
    ///
    /// let input = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}
    /// {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"traced","_meta":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}}
    /// {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"traced"}}
    /// "#;
    /// let mut output = Vec::new();
    /// server.serve(&mut &input[..], &mut output)?;
    /// let output = String::from_utf8(output)?;
    /// assert!(output.contains("trace 4bf92f3577b34da6a3ce929d0e0e4736 from span [00, f0, 67, aa, 0b, a9, 02, b7]"));
    /// assert!(output.lines().last().unwrap().contains("no trace"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn trace(&self) -> Option<TraceContext> {
        crate::wire::era::trace_context(self.raw_meta).or_else(|| self.conn.trace().cloned())
    }

    /// True once the client cancelled this request, or, over HTTP in 2026-07-28, closed the
    /// request's stream. A cancelled request gets no response, so the handler may stop early.
    ///
    /// It first reads what the client has sent meanwhile, without waiting for more (the
    /// loop reads nothing else while a handler runs): on stdio the lines whole in the input
    /// buffer (a line only begun, and what follows it, wait for the loop), over HTTP the
    /// messages a legacy session posted. A `notifications/cancelled` is taken in now;
    /// requests wait for their turn after this one, as while a handler waits on the client.
    pub fn is_cancelled(&mut self) -> bool {
        self.conn.read_ahead(self.session, self.id);
        self.cancelled()
    }

    /// Whether the request is known to be cancelled, without reading anything.
    fn cancelled(&self) -> bool {
        self.session.is_cancelled() || self.conn.closed()
    }

    /// Sends `notifications/message` if the client asked for logs at this level or below:
    /// with `logging/setLevel` (legacy) or `io.modelcontextprotocol/logLevel` in this
    /// request's `_meta` (2026-07-28). Otherwise nothing is sent.
    pub fn log(&mut self, level: LogLevel, logger: Option<&str>, data: impl Into<Value>) {
        if self.cancelled() || self.log_level.is_none_or(|min| level < min) {
            return;
        }
        let mut params = json!({ "level": level.name(), "data": data.into() });
        if let Some(logger) = logger {
            params["logger"] = json!(logger);
        }
        self.conn.out.notification("notifications/message", &params);
        self.flush();
    }

    /// Sends `notifications/progress` with the request's progress token. Nothing is sent
    /// without a token, after cancellation, for a value that does not increase, or for one
    /// that is not finite (NaN, an infinity: JSON has no such number, and MCP's `progress` is
    /// a number); a `total` that is not finite is left out, as if unknown.
    pub fn progress(&mut self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let Some(token) = &self.progress_token else { return };
        let stale = self.last_progress.is_some_and(|last| progress <= last);
        if self.cancelled() || stale || !progress.is_finite() {
            return;
        }
        self.last_progress = Some(progress);
        let mut params = json!({ "progressToken": token, "progress": progress });
        if let Some(total) = total.filter(|total| total.is_finite()) {
            params["total"] = json!(total);
        }
        if let Some(message) = message {
            params["message"] = json!(message);
        }
        self.conn.out.notification("notifications/progress", &params);
        self.flush();
    }

    /// Sends everything written so far (replies to earlier requests, notifications) to the
    /// client now. The server writes the replies to requests that arrived together in one
    /// go; a handler about to do slow work calls this so they do not wait for it.
    pub fn flush(&mut self) {
        self.conn.out.push();
    }

    /// Reports that a resource changed. Clients subscribed to it (`resources/subscribe`, or a
    /// `subscriptions/listen` stream naming it) get `notifications/resources/updated` after
    /// this request's response.
    pub fn resource_updated(&mut self, uri: impl Into<String>) {
        self.session.updated.push(uri.into());
    }

    /// Asks the user for input through the client (`elicitation/create`). Returns the
    /// client's `ElicitResult` (`{"action": "accept" | "decline" | "cancel", "content"?}`).
    pub fn elicit(&mut self, message: &str, requested_schema: Value) -> Result<Value, ClientError> {
        let params = json!({ "message": message, "requestedSchema": requested_schema });
        let answer = self.ask(Question::Elicitation, params)?;
        match answer["action"].as_str() {
            Some("accept" | "decline" | "cancel") => Ok(answer),
            _ => Err(ClientError::Invalid(
                "an elicitation result needs action accept, decline or cancel".into(),
            )),
        }
    }

    /// Asks the client's model for a completion (`sampling/createMessage` with `params`).
    /// Returns the client's `CreateMessageResult`.
    pub fn sample(&mut self, params: Value) -> Result<Value, ClientError> {
        let answer = self.ask(Question::Sampling, params)?;
        if answer.get("content").is_none() {
            return Err(ClientError::Invalid("a sampling result needs content".into()));
        }
        Ok(answer)
    }

    /// The client's roots (`roots/list`): its `ListRootsResult`.
    pub fn roots(&mut self) -> Result<Value, ClientError> {
        let answer = self.ask(Question::Roots, json!({}))?;
        if !answer["roots"].is_array() {
            return Err(ClientError::Invalid("a roots result needs a roots array".into()));
        }
        Ok(answer)
    }

    /// Names the next question (`elicit`, `sample` or `roots`) in a 2026-07-28
    /// `InputRequiredResult`: its `inputRequests` key, under which the client answers. Without
    /// a name the key is the kind and the order of the call (`elicitation-1`, `sampling-2`).
    /// A name must be the same on every retry. Legacy requests ignore it.
    pub fn key(&mut self, key: impl Into<String>) -> &mut Self {
        self.next_key = Some(key.into());
        self
    }

    /// Whether the client declared `capability` (`"elicitation"`, `"sampling"`, `"roots"`):
    /// in this request's `_meta` (2026-07-28), or in `initialize` (legacy). A handler that can
    /// do without an answer asks only when this is true; asking anyway fails the request with
    /// -32021 in 2026-07-28. A legacy session keeps the names of at most 32 declared
    /// capabilities, each at most 64 bytes long: a longer or later name reads as undeclared.
    /// Over HTTP a legacy request whose `Accept` rules out an event stream cannot be asked
    /// anything (the stream would carry the question): then this is `false`.
    pub fn client_supports(&self, capability: &str) -> bool {
        self.declares(capability) && (matches!(self.era, Era::Modern(_)) || self.conn.can_ask())
    }

    /// Whether the client declared `capability`: in this request's `_meta` (2026-07-28), or
    /// in `initialize` (legacy).
    fn declares(&self, capability: &str) -> bool {
        match self.client_capabilities {
            Some(raw) => crate::wire::capabilities::declares(raw, capability),
            None => self.session.client_capabilities.has(capability),
        }
    }

    /// One question to the client, by era. In 2026-07-28 each question has a key that is the
    /// same on every retry: the one [`Context::key`] named, else the kind and order of the call
    /// (`elicitation-1`, `sampling-2`, ...).
    fn ask(&mut self, question: Question, params: Value) -> Result<Value, ClientError> {
        if self.cancelled() {
            return Err(ClientError::Cancelled);
        }
        let (capability, method) = question.capability_and_method();
        let asked = &mut self.asked[question as usize];
        *asked += 1;
        let named = self.next_key.take();
        match self.era {
            Era::Modern(_) => {
                let key = named.unwrap_or_else(|| format!("{capability}-{asked}"));
                if let Some(answer) =
                    self.answers.as_ref().and_then(|answers| answers.get(&key)).cloned()
                {
                    self.used.get_or_insert_default().insert(key, answer.clone());
                    return Ok(answer);
                }
                if !self.declares(capability) {
                    self.missing = Some(capability);
                    return Err(ClientError::Unsupported(capability));
                }
                self.pending
                    .get_or_insert_default()
                    .insert(key, json!({ "method": method, "params": params }));
                Err(ClientError::InputRequired)
            }
            Era::Legacy => {
                if !self.declares(capability) {
                    return Err(ClientError::Unsupported(capability));
                }
                self.conn.ask(method, params, self.session, self.id)
            }
        }
    }
}
