//! The registry: what a server is and serves (identity, tools, resources, prompts,
//! limits), checked at registration. No I/O: the loop that serves it is `serve.rs`.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::registry::error::{DuplicateKind, Error, Warning};
use crate::registry::files::FileRoot;
use crate::registry::intercept::{Hooks, Intercepted};
use crate::registry::param_header::{ParamHeader, param_headers};
use crate::registry::prompt::Prompt;
use crate::registry::resource::{Resource, ResourceTemplate};
use crate::registry::task_tool::{TaskTool, Tasks};
use crate::registry::tool::Tool;
use crate::schema::{Problem, Schema};
use crate::util::encoding::uri_problem;
use crate::util::fnv::Fnv;
use crate::util::stamp::{Stamp, WatchedFile};
use crate::wire::era;
use crate::wire::jsonrpc::ErrorObject;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::server";

/// Default bound on one incoming line.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How long a `requestState` is good for unless [`Server::state_ttl`] says otherwise.
const DEFAULT_STATE_TTL_SECS: u64 = 600;

/// Where each registered item of a kind is in its `Vec`, by name or URI.
type Index = HashMap<String, usize, BuildHasherDefault<Fnv>>;

/// A tool with its schemas compiled and its listing prepared once.
pub(crate) struct Registered {
    pub tool: Tool,
    pub input: Schema,
    pub output: Option<Schema>,
    pub listing: Value,
    /// Its `x-mcp-header` annotations, found once: what Streamable HTTP checks each call's
    /// `Mcp-Param-{Name}` headers against.
    pub param_headers: Vec<ParamHeader>,
}

/// An MCP server: identity, registered tools and limits. Build it, then [`Server::serve`].
///
/// Configuration takes and returns the server by value; registration (`add_*`) takes it by
/// `&mut` and returns a `Result`, refusing with an [`Error`] that says what and where.
///
/// ```
/// use baremcp::{Error, Server, Tool, ToolOutput};
/// use serde_json::json;
///
/// let mut server = Server::new("notes", "1.0.0")
///     .title("Notes")
///     .instructions("Keeps short notes.")
///     .page_size(50);
/// let schema = json!({"type": "object", "unevaluatedProperties": false});
/// let warnings = server.add_tool(Tool::new("list", "Lists the notes", schema.clone(), |_, _| {
///     Ok(ToolOutput::text("none yet"))
/// }))?;
/// // Registered, but one keyword of the schema is not enforced: said here, and logged.
/// assert_eq!(warnings[0].problem.pointer, "/unevaluatedProperties");
///
/// let again = server.add_tool(Tool::new("list", "Lists them again", schema, |_, _| Ok(ToolOutput::text(""))));
/// assert!(matches!(again, Err(Error::Duplicate { name, .. }) if name == "list"));
/// # Ok::<(), Error>(())
/// ```
pub struct Server {
    pub(crate) info: Value,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: Vec<Registered>,
    tool_index: Index,
    pub(crate) resources: Vec<Resource>,
    /// Each resource's place in `resources` by URI, so that registering (and finding) one
    /// costs the same among 40 000 as among 10 (a scan made registering them quadratic).
    resource_index: Index,
    pub(crate) templates: Vec<ResourceTemplate>,
    /// Each template's place in `templates` by its text.
    template_index: Index,
    pub(crate) roots: Vec<FileRoot>,
    pub(crate) prompts: Vec<Prompt>,
    /// Each prompt's place in `prompts` by name.
    prompt_index: Index,
    pub(crate) page_size: Option<usize>,
    pub(crate) ttl_ms: u64,
    pub(crate) max_message_bytes: usize,
    /// Task tools and this process's tasks (`tasks.rs`).
    pub(crate) tasks: Tasks,
    /// Signs 2026-07-28 `requestState`; made on first use, so start-up reads no randomness.
    /// `Err` (no randomness to make one) refuses every request that needs it.
    state_key: OnceLock<Result<Vec<u8>, String>>,
    /// How long a `requestState` is good for, in seconds.
    pub(crate) state_ttl_secs: u64,
    /// `info` as JSON text, written into every 2026-07-28 tool result; made on first use.
    info_json: OnceLock<String>,
    /// The interceptor hooks, `on_request` and `on_reply`.
    pub(crate) hooks: Hooks,
}

impl Server {
    /// A server that introduces itself as `name` `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Server {
        Server {
            info: json!({ "name": name.into(), "version": version.into() }),
            instructions: None,
            tools: Vec::new(),
            tool_index: Index::default(),
            resources: Vec::new(),
            resource_index: Index::default(),
            templates: Vec::new(),
            template_index: Index::default(),
            roots: Vec::new(),
            prompts: Vec::new(),
            prompt_index: Index::default(),
            page_size: None,
            ttl_ms: 0,
            tasks: Default::default(),
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            state_key: OnceLock::new(),
            state_ttl_secs: DEFAULT_STATE_TTL_SECS,
            info_json: OnceLock::new(),
            hooks: Hooks::default(),
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

    /// Bounds one incoming line; longer lines are skipped and replied to with -32600.
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
        self.state_key = OnceLock::from(Ok(secret.into()));
        self
    }

    /// How long a `requestState` is good for once made (default 10 minutes): a retry that
    /// brings it later gets -32602 `invalid requestState: it has expired`, and the client
    /// starts the request again. Long enough for a person to answer an elicitation; short,
    /// so that a state that leaked cannot be replayed for long. `Duration::MAX`: never.
    pub fn state_ttl(mut self, ttl: Duration) -> Server {
        self.state_ttl_secs = ttl.as_secs();
        self
    }

    /// Sets the interceptor that sees every request before it is dispatched: its method, id,
    /// raw `params` and era ([`Intercepted`]). Returning `Err` refuses the request: the client
    /// gets that error and no handler runs. It runs on the serving thread, over stdio and
    /// HTTP alike, for each request of a batch too; a request whose envelope or `params` is
    /// malformed is answered with its error before any hook sees it. A panic in it becomes
    /// an internal error reply. One hook per server: setting another replaces it.
    ///
    /// ```
    /// use std::cell::Cell;
    /// use std::rc::Rc;
    ///
    /// use baremcp::{ErrorCode, ErrorObject, Server};
    ///
    /// let seen = Rc::new(Cell::new(0));
    /// let counted = seen.clone();
    /// let server = Server::new("guarded", "1.0.0")
    ///     .on_request(|request| match request.method {
    ///         "prompts/list" => Err(ErrorObject::new(ErrorCode::INVALID_REQUEST, "not today")),
    ///         _ => Ok(()),
    ///     })
    ///     .on_reply(move |request, reply, _took| {
    ///         counted.set(counted.get() + 1);
    ///         assert_eq!(request.method == "prompts/list", reply.is_err());
    ///     });
    ///
    /// let input = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}
    /// {"jsonrpc":"2.0","id":2,"method":"prompts/list"}
    /// "#;
    /// let mut output = Vec::new();
    /// server.serve(&mut &input[..], &mut output)?;
    /// let last = String::from_utf8(output)?.lines().last().unwrap().to_string();
    /// assert_eq!(last, r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"not today"}}"#);
    /// assert_eq!(seen.get(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn on_request(
        mut self,
        hook: impl Fn(&Intercepted) -> Result<(), ErrorObject> + 'static,
    ) -> Server {
        self.hooks.on_request = Some(Box::new(hook));
        self
    }

    /// Sets the interceptor that sees every reply: the request ([`Intercepted`]), the JSON
    /// text of its `result` or its error, and how long dispatching it took (the `on_request`
    /// hook included). It runs on the serving thread before the reply is written; a request
    /// that gets no response (cancelled) is not shown. A `subscriptions/listen` stream is
    /// shown once, when it ends, over stdio and HTTP alike: with the result the server ended
    /// it with, or an empty text when its client ended it (cancelled it, closed its stream or
    /// its input), `params` `None` (not kept while it was open), and how long it was open.
    /// Setting it costs each reply held as a value one serialization, done here instead of
    /// when the reply is written. One hook per server: setting another replaces it. See
    /// [`Server::on_request`] for an example.
    pub fn on_reply(
        mut self,
        hook: impl Fn(&Intercepted, Result<&str, &ErrorObject>, std::time::Duration) + 'static,
    ) -> Server {
        self.hooks.on_reply = Some(Box::new(hook));
        self
    }

    /// Registers a tool, compiling its schemas. Refused: a duplicate name, a schema that does
    /// not load, an input schema without `"type": "object"` or with an invalid `x-mcp-header`
    /// ([`Error::ParamHeader`]), for [`Tool::typed`] a schema whose names differ from those
    /// the argument type reads ([`Error::Mismatch`]), and for typed tools an entry of the
    /// input schema's `examples` that does not decode into the argument type
    /// ([`Error::Example`]) or that the schema refuses ([`Error::InvalidExample`]).
    ///
    /// Returns the schemas' warnings: keywords that are known but not enforced, which are
    /// also logged (warn level) with the tool name.
    pub fn add_tool(&mut self, tool: Tool) -> Result<Vec<Warning>, Error> {
        if self.tool_index.contains_key(&tool.name) {
            return Err(Error::Duplicate { kind: DuplicateKind::Tool, name: tool.name });
        }
        let mut warnings = Vec::new();
        let mut compile = |schema_name: &'static str, schema: &Value| {
            let compiled = Schema::compile(schema).map_err(|problems| Error::Schema {
                tool: tool.name.clone(),
                schema: schema_name,
                problems,
            })?;
            for problem in compiled.warnings() {
                let warning = Warning {
                    tool: tool.name.clone(),
                    schema: schema_name,
                    problem: problem.clone(),
                };
                log::warn!(target: LOG, "{warning}");
                warnings.push(warning);
            }
            Ok::<Schema, Error>(compiled)
        };
        let input = compile("inputSchema", &tool.input_schema)?;
        if tool.input_schema.get("type") != Some(&json!("object")) {
            return Err(Error::NotAnObject { tool: tool.name });
        }
        let param_headers = param_headers(&tool.input_schema)
            .map_err(|problems| Error::ParamHeader { tool: tool.name.clone(), problems })?;
        // A boolean is a JSON Schema, but MCP's `Tool.outputSchema` is an object in every era.
        if let Some(schema) = tool.output_schema.as_ref().filter(|s| !s.is_object()) {
            let problem = Problem::new("", format!("must be a JSON object, not {schema}"));
            let problems = vec![problem];
            return Err(Error::Schema { tool: tool.name, schema: "outputSchema", problems });
        }
        let output = tool.output_schema.as_ref().map(|s| compile("outputSchema", s)).transpose()?;
        if let Some(agrees) = tool.agrees {
            let mut problems = Vec::new();
            agrees(&mut problems);
            // A nested type's own example is the field's too, found by both checks: said once.
            let mut said = Vec::new();
            problems.retain(|problem| {
                let new = !said.contains(problem);
                said.extend(new.then(|| problem.clone()));
                new
            });
            if !problems.is_empty() {
                return Err(Error::Mismatch { tool: tool.name, problems });
            }
        }
        if let Some(decodes) = tool.decodes {
            let examples =
                tool.input_schema.get("examples").and_then(Value::as_array).into_iter().flatten();
            for (i, example) in examples.enumerate() {
                if let Err(e) = decodes(example) {
                    let pointer = format!("/examples/{i}{}", e.pointer);
                    return Err(Error::Example { tool: tool.name, pointer, why: e.why });
                }
                // A model shown an example the schema refuses would send arguments that fail
                // it. The first error says enough; its pointer "/" is the whole example.
                if let Err(errors) = input.validate(example) {
                    let (inside, why) = errors.first_inside();
                    let (pointer, why) = (format!("/examples/{i}{inside}"), why.to_string());
                    return Err(Error::InvalidExample { tool: tool.name, pointer, why });
                }
            }
        }
        self.tool_index.insert(tool.name.clone(), self.tools.len());
        let listing = tool.listing();
        self.tools.push(Registered { tool, input, output, listing, param_headers });
        Ok(warnings)
    }

    /// Registers a task tool: called as a task by clients that declare the tasks extension
    /// (which `server/discover` then announces), as a plain tool by others (see `tasks.rs`),
    /// and listed to each with the `execution.taskSupport` that says which. Refused and warned
    /// about as [`Server::add_tool`] is.
    pub fn add_task_tool(&mut self, tool: TaskTool) -> Result<Vec<Warning>, Error> {
        let (plain, spec) = tool.split();
        let name = plain.name.clone();
        let warnings = self.add_tool(plain)?;
        self.tasks.specs.insert(name, spec);
        Ok(warnings)
    }

    /// Registers a resource with a fixed URI. Refused: a URI already registered, and one that
    /// is not a URI as RFC 3986 spells it ([`Error::Uri`]: no scheme, a raw space, ...).
    pub fn add_resource(&mut self, resource: Resource) -> Result<(), Error> {
        if let Some(why) = uri_problem(&resource.uri) {
            return Err(Error::Uri { uri: resource.uri, why });
        }
        if self.resource_index.contains_key(&resource.uri) {
            return Err(Error::Duplicate { kind: DuplicateKind::Resource, name: resource.uri });
        }
        self.resource_index.insert(resource.uri.clone(), self.resources.len());
        self.resources.push(resource);
        Ok(())
    }

    /// Registers a resource template; a read whose URI matches no static resource tries the
    /// templates in registration order. Refused: a template without a `{variable}`, one
    /// already registered (by its text, a directory's `file:///dir/{+path}` included), and one
    /// that is not served as written ([`Error::Template`]: not RFC 6570 level 1, or a
    /// completer for no variable of it).
    pub fn add_template(&mut self, template: ResourceTemplate) -> Result<(), Error> {
        let text = || template.text().to_string();
        if let Some(why) = template.problem() {
            return Err(Error::Template { template: text(), why });
        }
        if template.template.variables().next().is_none() {
            return Err(Error::NoVariable { template: text() });
        }
        // A directory's template (`file:///dir/{+path}`) is listed and completed beside
        // these, looked up by its text as they are: the same text twice is one too many.
        if self.template_index.contains_key(template.text())
            || self.roots.iter().any(|root| root.template() == template.text())
        {
            return Err(Error::Duplicate { kind: DuplicateKind::Template, name: text() });
        }
        self.template_index.insert(text(), self.templates.len());
        self.templates.push(template);
        Ok(())
    }

    /// Serves every regular file under a directory as resources (see [`FileRoot`] for the
    /// safety rules; the binary's `--root`). Not to be confused with the client's roots,
    /// which a handler asks for with [`crate::Context::roots`]. Refused: a directory already
    /// served, or one inside or around a directory served (its files would be listed twice),
    /// by their canonical paths, and one whose template (`file:///dir/{+path}`) is the text
    /// of a template registered ([`DuplicateKind::Template`]).
    pub fn add_directory(&mut self, root: FileRoot) -> Result<(), Error> {
        if self.roots.iter().any(|r| r.base_uri() == root.base_uri()) {
            return Err(Error::Duplicate { kind: DuplicateKind::Directory, name: root.base_uri() });
        }
        if self.template_index.contains_key(&root.template()) {
            return Err(Error::Duplicate { kind: DuplicateKind::Template, name: root.template() });
        }
        let nested = |inner: &FileRoot, outer: &FileRoot| {
            inner.path().starts_with(outer.path()).then(|| Error::NestedDirectory {
                inner: inner.path().to_path_buf(),
                outer: outer.path().to_path_buf(),
            })
        };
        if let Some(error) =
            self.roots.iter().find_map(|r| nested(&root, r).or_else(|| nested(r, &root)))
        {
            return Err(error);
        }
        self.roots.push(root);
        Ok(())
    }

    /// Registers a prompt. Refused: a duplicate name.
    pub fn add_prompt(&mut self, prompt: Prompt) -> Result<(), Error> {
        if self.prompt_index.contains_key(&prompt.name) {
            return Err(Error::Duplicate { kind: DuplicateKind::Prompt, name: prompt.name });
        }
        self.prompt_index.insert(prompt.name.clone(), self.prompts.len());
        self.prompts.push(prompt);
        Ok(())
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

    /// The key that signs `requestState`; `Err` says why there is none.
    pub(crate) fn state_key(&self) -> Result<&[u8], &str> {
        self.state_key
            .get_or_init(crate::util::random::process_key)
            .as_deref()
            .map_err(String::as_str)
    }

    /// The file behind `uri`, resolved now to be watched: a resource's watched file (which
    /// may be missing now, and appear later), or a `--root` file; `None` when there is none.
    pub(crate) fn watched_file(&self, uri: &str) -> Option<WatchedFile> {
        match self.static_resource(uri) {
            Some(resource) => {
                let path = resource.watched_file.as_ref()?;
                Some(WatchedFile::new(path.clone(), Stamp::of(path)))
            }
            None => self.roots.iter().find_map(|root| root.watched(uri)),
        }
    }

    pub(crate) fn tool(&self, name: &str) -> Option<&Registered> {
        self.tool_index.get(name).map(|&i| &self.tools[i])
    }

    /// The static resource at `uri`.
    pub(crate) fn static_resource(&self, uri: &str) -> Option<&Resource> {
        self.resource_index.get(uri).map(|&i| &self.resources[i])
    }

    /// The template whose text is `text`.
    pub(crate) fn template(&self, text: &str) -> Option<&ResourceTemplate> {
        self.template_index.get(text).map(|&i| &self.templates[i])
    }

    /// The prompt named `name`.
    pub(crate) fn prompt(&self, name: &str) -> Option<&Prompt> {
        self.prompt_index.get(name).map(|&i| &self.prompts[i])
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

    /// serverInfo for a modern result's `_meta`.
    pub(crate) fn result_meta(&self) -> Value {
        json!({ (era::SERVER_INFO_KEY): self.info })
    }
}
