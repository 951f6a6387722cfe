//! Manifests: one JSON document that declares command-backed tools, resources, resource
//! templates and prompts. A manifest is checked completely before anything is served; every
//! problem is reported at once with the JSON Pointer of where it is.
//!
//! `{name}` in a command's argv, stdin, cwd or env is replaced by an argument value; one
//! placeholder never becomes more than the one argv element it is in (arrays expand to
//! several elements only when the element is exactly `{name}`), and nothing goes through a
//! shell. An absent argument takes its property's `default`; without one, an element naming
//! it is dropped, and a nested array of elements (`["--limit", "{limit}"]`) is dropped whole
//! (so is one where an array argument is empty).
//! `{{` and `}}` are literal braces.
//! Prompt message texts use `{{name}}`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::command::{self, Invocation, Running};
use baremcp::schema::Problem;
use baremcp::{
    Content, Contents, Context, Prompt, PromptMessage, ReadError, Resource, ResourceTemplate, Role,
    Server, Tool, ToolOutput,
};

mod check;
mod lint;

/// The manifest format as a JSON Schema, for editors (`baremcp check --schema`); `check` says
/// more than it can (placeholders, schemas, files), and a test holds the two to agreeing on the
/// example manifests.
pub const SCHEMA: &str = include_str!("schema.json");

pub(crate) const DEFAULT_TIMEOUT_MS: u64 = 30_000;
pub(crate) const DEFAULT_MAX_OUTPUT: u64 = 1024 * 1024;
/// The largest `maxOutputBytes` (its schema's `maximum`): a command's output is kept, then
/// copied into its result, several times this cap at once; a cap past memory would end the
/// server (an allocation that fails aborts), not the call.
pub(crate) const MAX_OUTPUT_CAP: u64 = 64 * 1024 * 1024;
/// The largest file a `path` resource serves.
const MAX_FILE: u64 = 8 * 1024 * 1024;

/// A checked manifest.
pub struct Manifest {
    pub(crate) server: Map<String, Value>,
    pub(crate) tools: Vec<ToolDecl>,
    pub(crate) resources: Vec<ResourceDecl>,
    pub(crate) templates: Vec<TemplateDecl>,
    pub(crate) prompts: Vec<PromptDecl>,
    pub(crate) warnings: Vec<Problem>,
    pub(crate) schema_warnings: Vec<Problem>,
}

/// Text with `{name}` placeholders.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Template(pub(crate) Vec<Part>);

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Part {
    Text(String),
    Var(String),
}

#[derive(Debug, Clone)]
pub(crate) enum ArgvItem {
    One(Template),
    /// Dropped whole when any of its placeholders is absent (or an empty array).
    Group(Vec<Template>),
}

#[derive(Debug, Clone)]
pub(crate) struct RunDecl {
    pub(crate) argv: Vec<ArgvItem>,
    pub(crate) stdin: Option<Template>,
    pub(crate) cwd: Option<Template>,
    pub(crate) env: BTreeMap<String, Template>,
    /// Names passed through from baremcp's own environment.
    pub(crate) pass: Vec<String>,
    pub(crate) timeout: Duration,
    pub(crate) max_output: usize,
    pub(crate) ok_codes: Vec<i32>,
    pub(crate) json_output: bool,
    /// The manifest's directory: relative `cwd`s start here.
    pub(crate) dir: PathBuf,
}

pub(crate) struct ToolDecl {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: String,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) annotations: Option<Value>,
    /// The `default` of each input property that has one: used when its argument is absent.
    /// JSON Schema calls `default` an annotation, but a command's author who writes one
    /// expects the command to get it (`-n {n}` with `"default": 5` runs `-n 5`).
    pub(crate) defaults: Map<String, Value>,
    pub(crate) run: RunDecl,
}

pub(crate) enum Source {
    Text(String),
    Path(PathBuf),
    Run(RunDecl),
}

pub(crate) struct ResourceDecl {
    pub(crate) uri: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) source: Source,
}

pub(crate) struct TemplateDecl {
    pub(crate) uri_template: String,
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) mime_type: Option<String>,
    pub(crate) run: RunDecl,
}

pub(crate) struct PromptDecl {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) arguments: Vec<(String, Option<String>, bool)>,
    pub(crate) messages: Vec<(Role, String)>,
}

/// Why a manifest does not load.
#[derive(Debug)]
pub enum LoadError {
    /// The file cannot be read, or is not JSON.
    File(String),
    /// What is wrong in the document, each problem at its JSON Pointer.
    Problems(Vec<Problem>),
}

impl LoadError {
    /// One line per problem, each naming the file once.
    pub fn describe(&self, path: &Path) -> String {
        let lines: Vec<String> = match self {
            LoadError::File(why) => vec![format!("{}: {why}", path.display())],
            LoadError::Problems(problems) => {
                problems.iter().map(|p| format!("{}: {p}", path.display())).collect()
            }
        };
        printable_lines(&lines)
    }
}

/// `lines`, each [`printable`], one under the other.
fn printable_lines(lines: &[String]) -> String {
    lines.iter().map(|line| printable(line)).collect::<Vec<_>>().join("\n")
}

/// `text`, one line, with its control characters escaped as JSON escapes them (`\n`,
/// `\u001b`), so that names and paths read like the JSON-quoted values beside them: a
/// manifest's names, paths and pointers can hold any, and a terminal should see where they
/// are, not act on them (a line break in a name would make a line of its own). DEL and the
/// C1 controls too, which JSON leaves raw, and the characters that break, reorder or hide
/// text on screen (U+2028, U+2029, the bidirectional marks and overrides, U+FEFF).
pub fn printable(text: &str) -> String {
    baremcp::__private::escaped(text, false).into_owned()
}

/// Reads and checks a manifest file.
pub fn load(path: &Path) -> Result<Manifest, LoadError> {
    check::load(path)
}

/// The `{{name}}` placeholders of a prompt text.
pub(crate) fn double_placeholders(text: &str) -> Vec<String> {
    text.split("{{")
        .skip(1)
        .filter_map(|rest| rest.split_once("}}").map(|(name, _)| name.trim().to_string()))
        .collect()
}

/// A prompt text with each `{{name}}` placeholder (as [`double_placeholders`] reads them)
/// replaced by `value(name)`, or by nothing. In one pass over the text: what an argument
/// brings is never read again, so a value holding `{{other}}` stays as written and the
/// result is the text plus one copy of a value per placeholder.
fn fill_placeholders<'v>(text: &str, value: impl Fn(&str) -> Option<&'v str>) -> String {
    let mut pieces = text.split("{{");
    let mut filled = String::from(pieces.next().unwrap_or(""));
    for piece in pieces {
        match piece.split_once("}}") {
            Some((name, rest)) => {
                filled.push_str(value(name.trim()).unwrap_or(""));
                filled.push_str(rest);
            }
            None => {
                filled.push_str("{{");
                filled.push_str(piece);
            }
        }
    }
    filled
}

/// A value as it appears in a command: strings as they are, numbers as [`number_text`]
/// says, everything else as JSON text.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => number_text(n),
        other => other.to_string(),
    }
}

/// A number as a command gets it. Arguments arrive parsed, their text gone: digits within 64
/// bits are kept exactly, and any other number is a double. A whole double within ±2^53
/// (where each is exact) is written as an integer, so that `1e2` and `100.0` pass `100` and
/// `-0` passes `0`: an `integer` with `"minimum": 0` must never bring a leading `-`, nor a
/// fraction a program reading an integer refuses. Other numbers are written in the shortest
/// form that reads back as the same double (`0.5`, `1e-7`, `1.2345678901234568e+22`).
fn number_text(n: &serde_json::Number) -> String {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
    if let Some(f) = n.as_f64().filter(|_| n.is_f64())
        && f.fract() == 0.0
        && f.abs() <= EXACT
    {
        // Exact: whole and within 2^53. `-0.0 as i64` is 0.
        return (f as i64).to_string();
    }
    n.to_string()
}

impl Template {
    /// In a group, an element that is one placeholder with a boolean value is a switch: the
    /// group is kept when it is true (the element itself adds no word) and dropped when it is
    /// false. `None` for any other element.
    fn switch(&self, values: &Map<String, Value>) -> Option<bool> {
        match self.0.as_slice() {
            [Part::Var(name)] => values.get(name).and_then(Value::as_bool),
            _ => None,
        }
    }

    /// The text with values filled in, or `None` when a placeholder's value is absent.
    fn render(&self, values: &Map<String, Value>) -> Option<String> {
        let mut out = String::new();
        for part in &self.0 {
            match part {
                Part::Text(text) => out.push_str(text),
                Part::Var(name) => match values.get(name) {
                    None | Some(Value::Null) => return None,
                    Some(value) => out.push_str(&text_of(value)),
                },
            }
        }
        Some(out)
    }

    /// Appends this element's argv words: several for an array value when the element is
    /// exactly one placeholder, else one. `false` when a value is absent, or is an empty
    /// array: a group holding it is then dropped whole, as for an absent argument, so that
    /// an option is never left without its value (`["-I", "{ignore}"]` would otherwise
    /// leave `-I` to take the next word, a `--` included).
    fn expand(&self, values: &Map<String, Value>, argv: &mut Vec<String>) -> bool {
        if let [Part::Var(name)] = self.0.as_slice()
            && let Some(Value::Array(items)) = values.get(name)
        {
            argv.extend(items.iter().map(text_of));
            return !items.is_empty();
        }
        match self.render(values) {
            Some(word) => {
                argv.push(word);
                true
            }
            None => false,
        }
    }
}

impl RunDecl {
    fn invocation(&self, values: &Map<String, Value>) -> Invocation {
        let mut argv = Vec::new();
        for item in &self.argv {
            match item {
                ArgvItem::One(template) => {
                    template.expand(values, &mut argv);
                }
                ArgvItem::Group(templates) => {
                    let mut words = Vec::new();
                    let kept = templates.iter().all(|t| match t.switch(values) {
                        Some(on) => on,
                        None => t.expand(values, &mut words),
                    });
                    if kept {
                        argv.extend(words);
                    }
                }
            }
        }
        // Maps are filled by `insert`, not collected (docs/development/performance.md, Binary
        // size).
        let mut env = BTreeMap::new();
        for (name, template) in &self.env {
            if let Some(value) = template.render(values) {
                env.insert(name.clone(), value);
            }
        }
        for name in &self.pass {
            if let Ok(value) = std::env::var(name) {
                env.insert(name.clone(), value);
            }
        }
        Invocation {
            argv,
            stdin: self.stdin.as_ref().and_then(|t| t.render(values)),
            cwd: self.cwd.as_ref().and_then(|t| t.render(values)).map(|cwd| self.dir.join(cwd)),
            env,
            timeout: self.timeout,
            max_output: self.max_output,
        }
    }

    /// Runs the command for a tool call and turns the outcome into a result; `caller` hears
    /// of its stderr lines and says whether to go on ([`command::run`]).
    fn call(&self, values: &Map<String, Value>, caller: impl FnMut(Running) -> bool) -> ToolOutput {
        let invocation = self.invocation(values);
        let outcome = match command::run(&invocation, caller) {
            Ok(outcome) => outcome,
            Err(e) => return ToolOutput::error(format!("cannot run {}: {e}", invocation.argv[0])),
        };
        if outcome.abandoned {
            // Not sent: a cancelled request gets no response.
            return ToolOutput::error("the request was cancelled: the command was stopped");
        }
        let Some(status) = outcome.status else {
            return ToolOutput::error(format!(
                "the command timed out after {} ms and was stopped",
                self.timeout.as_millis()
            ));
        };
        if !status.code().is_some_and(|code| self.ok_codes.contains(&code)) {
            let mut message = format!("the command failed with {}", outcome.describe_status());
            if !outcome.stderr.is_empty() {
                message.push_str(&format!("\nstderr:\n{}", outcome.stderr.trim_end()));
            }
            return ToolOutput::error(message);
        }
        let note = outcome.truncated.map(|total| {
            format!(
                "\n[output truncated: the command wrote {total} bytes; the first {} are shown]",
                self.max_output
            )
        });
        if self.json_output {
            if let Some(note) = note {
                return ToolOutput::error(format!("the command's JSON output was cut short{note}"));
            }
            return match serde_json::from_slice::<Value>(&outcome.stdout) {
                Ok(value) if value.is_object() => ToolOutput::structured(value),
                Ok(_) => ToolOutput::error(
                    "the command's JSON output must be an object (it becomes structuredContent)",
                ),
                Err(e) => ToolOutput::error(format!("the command's output is not JSON: {e}")),
            };
        }
        let mut text = String::from_utf8_lossy(&outcome.stdout).into_owned();
        text.push_str(&note.unwrap_or_default());
        ToolOutput::text(text)
    }

    /// Runs the command for a resource read: its stdout is the content. A cancelled read
    /// ends the command, as a cancelled call does.
    fn read(&self, values: &Map<String, Value>, cx: &mut Context) -> Result<Contents, ReadError> {
        let invocation = self.invocation(values);
        let go_on =
            |running: Running| matches!(running, Running::StderrLine(_)) || !cx.is_cancelled();
        let outcome = command::run(&invocation, go_on)
            .map_err(|e| ReadError::Refused(format!("cannot run {}: {e}", invocation.argv[0])))?;
        match outcome.status {
            Some(status) if status.code().is_some_and(|c| self.ok_codes.contains(&c)) => {}
            _ => {
                return Err(ReadError::Refused(format!(
                    "the command failed with {}",
                    outcome.describe_status()
                )));
            }
        }
        if outcome.truncated.is_some() {
            return Err(ReadError::Refused(format!(
                "the content is larger than {} bytes",
                self.max_output
            )));
        }
        Ok(Contents::from_bytes(outcome.stdout))
    }
}

impl Manifest {
    /// A server that serves what the manifest declares.
    pub fn into_server(self) -> Result<Server, baremcp::Error> {
        let get = |key: &str| self.server.get(key).and_then(Value::as_str).map(String::from);
        let mut server = Server::new(
            get("name").unwrap_or_else(|| "baremcp-manifest".into()),
            get("version").unwrap_or_else(|| env!("CARGO_PKG_VERSION").into()),
        );
        server = with(server, get("title"), Server::title);
        server = with(server, get("description"), Server::description);
        server = with(server, get("instructions"), Server::instructions);
        for decl in self.tools {
            let (run, defaults) = (Arc::new(decl.run), decl.defaults);
            let mut tool =
                Tool::new(decl.name, decl.description, decl.input_schema, move |args, cx| {
                    let mut values = args.as_object().cloned().unwrap_or_default();
                    for (name, default) in &defaults {
                        values.entry(name).or_insert_with(|| default.clone());
                    }
                    cx.flush();
                    // Each line the command writes to stderr is reported as progress; a
                    // cancelled request ends the command.
                    let mut lines = 0.0;
                    Ok(run.call(&values, |running| match running {
                        Running::StderrLine(line) => {
                            lines += 1.0;
                            cx.progress(lines, None, Some(line));
                            true
                        }
                        Running::Still => !cx.is_cancelled(),
                    }))
                });
            tool = with(tool, decl.title, Tool::title);
            tool = with(tool, decl.output_schema, Tool::output_schema);
            tool = with(tool, decl.annotations, Tool::annotations);
            server.add_tool(tool)?;
        }
        for decl in self.resources {
            let watched = match &decl.source {
                Source::Path(path) => Some(path.clone()),
                _ => None,
            };
            let source = Arc::new(decl.source);
            let mut resource =
                Resource::new(decl.uri, decl.name, move |cx| match source.as_ref() {
                    Source::Text(text) => Ok(Contents::Text(text.clone())),
                    Source::Path(path) => read_file(path),
                    Source::Run(run) => {
                        cx.flush();
                        run.read(&Map::new(), cx)
                    }
                });
            resource = with(resource, decl.title, Resource::title);
            resource = with(resource, decl.description, Resource::description);
            resource = with(resource, decl.mime_type, Resource::mime_type);
            resource = with(resource, watched, Resource::watch_file);
            server.add_resource(resource)?;
        }
        for decl in self.templates {
            let run = Arc::new(decl.run);
            let mut template =
                ResourceTemplate::new(decl.uri_template, decl.name, move |vars, cx| {
                    let mut values = Map::new();
                    for (name, value) in vars {
                        values.insert(name.clone(), json!(value));
                    }
                    cx.flush();
                    run.read(&values, cx)
                });
            template = with(template, decl.title, ResourceTemplate::title);
            template = with(template, decl.description, ResourceTemplate::description);
            template = with(template, decl.mime_type, ResourceTemplate::mime_type);
            server.add_template(template)?;
        }
        for decl in self.prompts {
            let messages = decl.messages;
            let mut prompt = Prompt::new(decl.name, move |args, _| {
                Ok(messages
                    .iter()
                    .map(|(role, text)| {
                        let filled = fill_placeholders(text, |name| args.get(name).map(|v| &**v));
                        PromptMessage { role: *role, content: Content::Text(filled) }
                    })
                    .collect())
            });
            prompt = with(prompt, decl.title, Prompt::title);
            prompt = with(prompt, decl.description, Prompt::description);
            for (name, description, required) in decl.arguments {
                prompt = prompt.argument(name, description.as_deref(), required);
            }
            server.add_prompt(prompt)?;
        }
        Ok(server)
    }

    /// What loads but will likely not run as meant (a program not on `PATH`, a `cwd` that
    /// does not exist, a placeholder that can pass for an option, an option left without its
    /// value), each with its pointer.
    pub fn warnings(&self) -> &[Problem] {
        &self.warnings
    }

    /// Keywords the tools' schemas use that are not enforced, each with its pointer in the
    /// manifest. For `check`: serving logs them already, as `Server::add_tool` does for
    /// any server.
    pub fn schema_warnings(&self) -> &[Problem] {
        &self.schema_warnings
    }

    /// What the manifest serves, one line per item (and one for each of a command's `cwd`,
    /// `stdin` and `env`), for `baremcp check`; each line [`printable`].
    pub fn summary(&self) -> String {
        let name = self.server.get("name").and_then(Value::as_str).unwrap_or("baremcp-manifest");
        let mut lines = vec![format!("server {name}")];
        for t in &self.tools {
            describe_run(&mut lines, format!("tool {}: ", t.name), &t.run);
        }
        for r in &self.resources {
            let head = format!("resource {} ({})", r.uri, r.name);
            match &r.source {
                Source::Run(run) => describe_run(&mut lines, format!("{head}: "), run),
                _ => lines.push(head),
            }
        }
        for t in &self.templates {
            let head = format!("resource template {} ({}): ", t.uri_template, t.name);
            describe_run(&mut lines, head, &t.run);
        }
        for p in &self.prompts {
            lines.push(format!("prompt {} ({} arguments)", p.name, p.arguments.len()));
        }
        printable_lines(&lines)
    }
}

/// A command as the manifest writes it: `head` and its argv on one line, then its `cwd`,
/// `stdin` and `env` when it has them, indented.
fn describe_run(lines: &mut Vec<String>, head: String, run: &RunDecl) {
    let argv: Vec<String> = run
        .argv
        .iter()
        .map(|item| match item {
            ArgvItem::One(t) => word(t),
            ArgvItem::Group(ts) => {
                format!("[{}]", ts.iter().map(word).collect::<Vec<_>>().join(" "))
            }
        })
        .collect();
    lines.push(head + &argv.join(" "));
    if let Some(cwd) = &run.cwd {
        let cwd = written(cwd);
        match Path::new(&cwd).is_absolute() {
            true => lines.push(format!("  cwd: {cwd}")),
            false => lines.push(format!("  cwd: {cwd} (relative to {})", run.dir.display())),
        }
    }
    if let Some(stdin) = &run.stdin {
        lines.push(format!("  stdin: {}", Value::String(written(stdin))));
    }
    let set = run.env.iter().map(|(name, t)| format!("{name}={}", Value::String(written(t))));
    let passed = run.pass.iter().map(|name| format!("{name} (passed through)"));
    let env: Vec<String> = set.chain(passed).collect();
    if !env.is_empty() {
        lines.push(format!("  env: {}", env.join(", ")));
    }
}

/// An argv element as written, in JSON quotes when it holds a space or a control character
/// or is empty, so that where one element ends is seen.
fn word(template: &Template) -> String {
    let text = written(template);
    match text.is_empty() || text.contains(|c: char| c.is_whitespace() || c.is_control()) {
        true => Value::String(text).to_string(),
        false => text,
    }
}

/// A template as written in the manifest: literal braces doubled, placeholders in braces.
fn written(template: &Template) -> String {
    template
        .0
        .iter()
        .map(|p| match p {
            Part::Text(text) => text.replace('{', "{{").replace('}', "}}"),
            Part::Var(name) => format!("{{{name}}}"),
        })
        .collect()
}

/// `builder` with `set` applied when the manifest gave a value: what it leaves out is left
/// out of the registration too (not listed as `""`).
fn with<B, V>(builder: B, value: Option<V>, set: impl FnOnce(B, V) -> B) -> B {
    match value {
        Some(value) => set(builder, value),
        None => builder,
    }
}

fn read_file(path: &Path) -> Result<Contents, ReadError> {
    // The file may have been replaced (by a FIFO, say) since the manifest was checked.
    baremcp::read_regular_file(path, MAX_FILE).map(Contents::from_bytes)
}
