//! Checking a manifest: first against its JSON Schema (`schema.json`, which says what each
//! member must be), then by hand for what a schema cannot say (placeholders that name
//! nothing, a program that is not fixed, duplicate names, schemas that do not load, missing
//! files). Every problem comes with its JSON Pointer, all of them at once; the declarations
//! are built only when there are none.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::lint::{Values, lint};
use super::{
    ArgvItem, DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT_MS, LoadError, MAX_OUTPUT_CAP, Manifest, Part,
    PromptDecl, ResourceDecl, RunDecl, Source, Template, TemplateDecl, ToolDecl,
    double_placeholders,
};
use baremcp::__private::{StrictError, param_header_problems, pointer_to, read_strict, sort_by};
use baremcp::schema::{Problem, Schema};
use baremcp::{ReadError, Resource, ResourceTemplate, Role, Server};

/// Reads and checks a manifest file.
pub(super) fn load(path: &Path) -> Result<Manifest, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|e| LoadError::File(e.to_string()))?;
    // A member named twice is refused: the file would mean one thing to a reader that keeps
    // the first (an editor, a reviewer) and another to one that keeps the last.
    let value = read_strict(text.as_bytes()).map_err(|e| match e {
        StrictError::Invalid(why) => LoadError::File(format!("not JSON: {why}")),
        twice => LoadError::File(twice.to_string()),
    })?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
    check(&value, &dir).map_err(LoadError::Problems)
}

/// Clearer words than the validator's for the keywords of `schema.json` (by their pointer
/// there) whose failure it can only tell in general terms (an alternative not matched, an
/// array too short, a pattern): these say what the manifest means by them.
const CLEARER: [(&str, &str); 6] = [
    (
        "/$defs/run/properties/argv/minItems",
        "must be a non-empty array (the program, then its arguments)",
    ),
    (
        "/$defs/run/properties/argv/items/anyOf",
        "must be a string, or (after the program) a non-empty array of strings",
    ),
    (
        "/$defs/run/properties/env/additionalProperties/anyOf",
        "must be a string (the value) or true (pass it through)",
    ),
    ("/$defs/resource/oneOf", "needs exactly one of text, path or run"),
    ("/$defs/resourceTemplate/properties/uriTemplate/pattern", "needs at least one {variable}"),
    (
        "/$defs/plainRun/not",
        "\"output\" is for tools only (a resource's content is stdout as it is)",
    ),
];

/// What the manifest's JSON Schema finds wrong with `value`, each problem at its pointer, and
/// how many more it found than it keeps.
fn against_schema(value: &Value) -> (Vec<Problem>, usize) {
    let schema = serde_json::from_str(super::SCHEMA).expect("schema.json is JSON");
    let schema = Schema::compile(&schema).expect("schema.json compiles");
    let Err(errors) = schema.validate(value) else { return (Vec::new(), 0) };
    let problems = errors
        .errors
        .iter()
        .map(|e| {
            let pointer = if e.instance_path == "/" { "" } else { &e.instance_path };
            let clearer = CLEARER.iter().find(|(keyword, _)| *keyword == e.keyword_path);
            Problem::new(pointer, clearer.map_or(e.message.as_str(), |(_, says)| says).to_owned())
        })
        .collect();
    (problems, errors.total - errors.errors.len())
}

/// A member's text, when it is a string: a value of another shape is the schema's to report.
fn string(map: &Map<String, Value>, key: &str) -> Option<String> {
    map.get(key).and_then(Value::as_str).map(String::from)
}

/// A member's items, when it is an array.
fn items<'v>(map: &'v Map<String, Value>, key: &str) -> &'v [Value] {
    map.get(key).and_then(Value::as_array).map_or(&[], Vec::as_slice)
}

/// A number the schema takes for an integer (`1.0` and `1e3` are, to JSON Schema).
fn whole(value: &Value) -> bool {
    value.as_f64().is_some_and(|n| n.fract() == 0.0)
}

/// Walks the document for what its schema cannot say, building the declarations as it goes.
/// It reads leniently: a value of the wrong shape is the schema's to report, and is passed
/// over here.
struct Checker<'d> {
    problems: Vec<Problem>,
    /// What loads but will likely not run as meant (`lint.rs`).
    warnings: Vec<Problem>,
    /// Keywords a schema uses that the validator does not enforce.
    schema_warnings: Vec<Problem>,
    dir: &'d Path,
}

/// What makes an entry unique in its list: the member, how to name it, its value.
type Key<'t> = Option<(&'static str, &'static str, &'t String)>;

impl Checker<'_> {
    /// Each entry of the array `key` checked by `item`, with duplicates (by `unique`) reported.
    fn list<T>(
        &mut self,
        root: &Map<String, Value>,
        key: &str,
        item: fn(&mut Self, &Value, &str) -> Option<T>,
        unique: fn(&T) -> Key<'_>,
    ) -> Vec<T> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for (i, value) in items(root, key).iter().enumerate() {
            let here = format!("/{key}/{i}");
            let Some(entry) = item(self, value, &here) else { continue };
            if let Some((member, what, id)) = unique(&entry)
                && !seen.insert(id.clone())
            {
                self.report(&pointer_to(&here, member), format!("duplicate {what} {id:?}"));
            }
            out.push(entry);
        }
        out
    }

    fn report(&mut self, pointer: &str, message: impl Into<String>) {
        self.problems.push(Problem::new(pointer, message));
    }

    /// A command's argv, cwd and environment are C strings: text with a NUL byte could never
    /// be given to the command.
    fn no_nul(&mut self, text: &str, here: &str) {
        if text.contains('\0') {
            self.report(here, "holds a NUL byte, which no command can be given");
        }
    }

    /// A positive count; the schema checks its type and bound, but not that it fits a `u64`
    /// written in digits, as it is read.
    fn count(&mut self, map: &Map<String, Value>, key: &str, here: &str, default: u64) -> u64 {
        let Some(value) = map.get(key) else { return default };
        match value.as_u64() {
            Some(n) if n > 0 => n,
            _ => {
                if whole(value) && value.as_f64().is_some_and(|n| n >= 1.0) {
                    let why = "must be a whole number written in digits (not 1e3 or 1.0)";
                    self.report(&pointer_to(here, key), why);
                }
                default
            }
        }
    }

    /// Parses a `{name}` template; each name must be in `known`.
    fn template(
        &mut self,
        text: &str,
        here: &str,
        known: &BTreeSet<String>,
        what: &str,
    ) -> Template {
        let mut parts = Vec::new();
        let mut literal = String::new();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '{' if chars.peek() == Some(&'{') => {
                    chars.next();
                    literal.push('{');
                }
                '}' if chars.peek() == Some(&'}') => {
                    chars.next();
                    literal.push('}');
                }
                '{' => {
                    let mut name = String::new();
                    let closed = loop {
                        match chars.next() {
                            Some('}') => break true,
                            Some(c) => name.push(c),
                            None => break false,
                        }
                    };
                    // Else a `{` never closed would pass for a placeholder, and be filled in.
                    if !closed {
                        let why = format!(
                            "unclosed placeholder {{{}: no }} after it (use {{{{ for a literal \
                             brace)",
                            opening(&name)
                        );
                        self.report(here, why);
                        continue;
                    }
                    let valid = !name.is_empty()
                        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                    if !valid {
                        self.report(
                            here,
                            format!(
                                "malformed placeholder {{{name}}} (use {{{{ for a literal brace)"
                            ),
                        );
                    } else if !known.contains(&name) {
                        let list: Vec<&str> = known.iter().map(String::as_str).collect();
                        self.report(
                            here,
                            format!(
                                "placeholder {{{name}}} names no {what} (declared: {})",
                                list.join(", ")
                            ),
                        );
                    }
                    if !literal.is_empty() {
                        parts.push(Part::Text(std::mem::take(&mut literal)));
                    }
                    parts.push(Part::Var(name));
                }
                '}' => {
                    self.report(here, "unmatched } (use }} for a literal brace)");
                }
                c => literal.push(c),
            }
        }
        if !literal.is_empty() {
            parts.push(Part::Text(literal));
        }
        Template(parts)
    }

    fn template_field(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        here: &str,
        known: &BTreeSet<String>,
        what: &str,
    ) -> Option<Template> {
        string(map, key).map(|text| self.template(&text, &pointer_to(here, key), known, what))
    }

    /// A command's declaration; its placeholders must be in `known` (`what` names them).
    fn run(
        &mut self,
        value: Option<&Value>,
        here: &str,
        known: &BTreeSet<String>,
        what: &str,
    ) -> RunDecl {
        let mut run = RunDecl {
            argv: Vec::new(),
            stdin: None,
            cwd: None,
            env: BTreeMap::new(),
            pass: Vec::new(),
            timeout: Duration::from_millis(DEFAULT_TIMEOUT_MS),
            max_output: DEFAULT_MAX_OUTPUT as usize,
            ok_codes: vec![0],
            json_output: false,
            dir: self.dir.to_path_buf(),
        };
        let Some(map) = value.and_then(Value::as_object) else { return run };
        let argv_at = pointer_to(here, "argv");
        for (i, item) in items(map, "argv").iter().enumerate() {
            let item_at = format!("{argv_at}/{i}");
            match item {
                Value::String(text) => {
                    let template = self.template(text, &item_at, known, what);
                    self.no_nul(text, &item_at);
                    if i == 0 && template.0.iter().any(|p| matches!(p, Part::Var(_))) {
                        let why = "the program must be fixed: no placeholder in argv[0]";
                        self.report(&item_at, why);
                    }
                    run.argv.push(ArgvItem::One(template));
                }
                Value::Array(group) => {
                    let templates = group.iter().enumerate().filter_map(|(j, text)| {
                        let (text, at) = (text.as_str()?, format!("{item_at}/{j}"));
                        self.no_nul(text, &at);
                        Some(self.template(text, &at, known, what))
                    });
                    run.argv.push(ArgvItem::Group(templates.collect()));
                }
                _ => {}
            }
        }
        run.stdin = self.template_field(map, "stdin", here, known, what);
        run.cwd = self.template_field(map, "cwd", here, known, what);
        if let Some(cwd) = string(map, "cwd") {
            self.no_nul(&cwd, &pointer_to(here, "cwd"));
        }
        let env_at = pointer_to(here, "env");
        for (name, value) in map.get("env").and_then(Value::as_object).into_iter().flatten() {
            let at = pointer_to(&env_at, name);
            if name.is_empty() || name.contains(['=', '\0']) {
                self.report(&at, "is not a variable name: it is empty, or holds = or a NUL byte");
            }
            match value {
                Value::String(text) => {
                    self.no_nul(text, &at);
                    let template = self.template(text, &at, known, what);
                    run.env.insert(name.clone(), template);
                }
                Value::Bool(true) => run.pass.push(name.clone()),
                _ => {}
            }
        }
        run.timeout = Duration::from_millis(self.count(map, "timeoutMs", here, DEFAULT_TIMEOUT_MS));
        // The schema's `maximum` refuses a larger cap; this only keeps the two in step.
        let max_output = self.count(map, "maxOutputBytes", here, DEFAULT_MAX_OUTPUT);
        run.max_output = max_output.min(MAX_OUTPUT_CAP) as usize;
        let codes_at = pointer_to(here, "okExitCodes");
        let codes = items(map, "okExitCodes").iter().enumerate().filter_map(|(i, code)| {
            let fits = code.as_i64().and_then(|code| i32::try_from(code).ok());
            if fits.is_none() && whole(code) {
                self.report(&format!("{codes_at}/{i}"), "must be an exit code (a 32-bit integer)");
            }
            fits
        });
        let codes: Vec<i32> = codes.collect();
        if !codes.is_empty() {
            run.ok_codes = codes;
        }
        run.json_output = map.get("output").and_then(Value::as_str) == Some("json");
        run
    }

    /// Compiles a tool's schema (the manifest's schema says it is an object), reporting what
    /// does not load and keeping its warnings.
    fn schema(&mut self, value: &Value, here: &str) {
        match Schema::compile(value) {
            Ok(schema) => {
                // With the manifest's other warnings, so `check` prints them too (a log line
                // would go nowhere there: check sets up no logger).
                for warning in schema.warnings() {
                    let pointer = format!("{here}{}", warning.pointer);
                    self.schema_warnings.push(Problem::new(&pointer, warning.message.clone()));
                }
            }
            Err(problems) => {
                for p in problems {
                    self.report(&format!("{here}{}", p.pointer), p.message);
                }
            }
        }
    }

    /// What registration refuses of an input schema's `x-mcp-header` annotations (the
    /// library's rules), so `check` says what serving would.
    fn param_headers(&mut self, schema: &Value, here: &str) {
        for p in param_header_problems(schema) {
            self.report(&format!("{here}{}", p.pointer), p.message);
        }
    }

    fn tool(&mut self, value: &Value, here: &str) -> Option<ToolDecl> {
        let map = value.as_object()?;
        let input_schema = map
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        if input_schema.is_object() {
            self.schema(&input_schema, &pointer_to(here, "inputSchema"));
            self.param_headers(&input_schema, &pointer_to(here, "inputSchema"));
        }
        let output_schema = map.get("outputSchema").cloned();
        if let Some(schema) = output_schema.as_ref().filter(|s| s.is_object()) {
            self.schema(schema, &pointer_to(here, "outputSchema"));
        }
        let properties = input_schema.get("properties").and_then(Value::as_object);
        let known = set_of(properties.into_iter().flat_map(|p| p.keys().cloned()));
        let run =
            self.run(map.get("run"), &pointer_to(here, "run"), &known, "property of inputSchema");
        let required = input_schema.get("required").and_then(Value::as_array);
        let required = required.into_iter().flatten().filter_map(Value::as_str).collect();
        let values = Values::Arguments { properties, required };
        self.warnings.extend(lint(&run, &pointer_to(here, "run"), &values));
        if run.json_output && output_schema.is_none() {
            log::debug!("{here}: JSON output without an outputSchema is passed through unchecked");
        }
        // A property's `default` stands in for its absent argument (see `ToolDecl`).
        let mut defaults = Map::new();
        for (name, schema) in properties.into_iter().flatten() {
            if let Some(default) = schema.get("default") {
                defaults.insert(name.clone(), default.clone());
            }
        }
        Some(ToolDecl {
            defaults,
            name: string(map, "name")?,
            title: string(map, "title"),
            description: string(map, "description")?,
            input_schema,
            output_schema,
            annotations: map.get("annotations").cloned(),
            run,
        })
    }

    fn resource(&mut self, value: &Value, here: &str) -> Option<ResourceDecl> {
        let map = value.as_object()?;
        let source = if let Some(text) = string(map, "text") {
            Source::Text(text)
        } else if let Some(path) = string(map, "path") {
            let full = self.dir.join(&path);
            if !full.is_file() {
                self.report(&pointer_to(here, "path"), format!("{} is not a file", full.display()));
            }
            Source::Path(full)
        } else {
            let none = BTreeSet::new();
            let what = "variable (a resource has none)";
            Source::Run(self.run(map.get("run"), &pointer_to(here, "run"), &none, what))
        };
        let uri = string(map, "uri")?;
        // What the server's registration refuses (no scheme, a raw space, ...) is said here.
        let probe = Resource::new(uri.as_str(), "", |_| Err(ReadError::NotFound));
        if let Err(baremcp::Error::Uri { why, .. }) = Server::new("check", "0").add_resource(probe)
        {
            self.report(&pointer_to(here, "uri"), format!("not a valid uri: {why}"));
        }
        Some(ResourceDecl {
            uri,
            name: string(map, "name")?,
            title: string(map, "title"),
            description: string(map, "description"),
            mime_type: string(map, "mimeType"),
            source,
        })
    }

    fn resource_template(&mut self, value: &Value, here: &str) -> Option<TemplateDecl> {
        let map = value.as_object()?;
        let uri_template = string(map, "uriTemplate")?;
        // The library parses templates; one that reads nothing tells their variables.
        let parsed =
            ResourceTemplate::new(uri_template.as_str(), "", |_, _| Err(ReadError::NotFound));
        let known = set_of(parsed.variables().map(String::from));
        // Without a brace the schema has said so; with one, only the parse tells a variable.
        // What the library would refuse at start (`{?q}`, `{a,b}`, a name twice) is said here,
        // as the server's registration says it.
        if known.is_empty() && uri_template.contains('{') {
            self.report(&pointer_to(here, "uriTemplate"), "needs at least one {variable}");
        } else if let Err(baremcp::Error::Template { why, .. }) =
            Server::new("check", "0").add_template(parsed)
        {
            self.report(&pointer_to(here, "uriTemplate"), why);
        }
        let what = "variable of uriTemplate";
        let run = self.run(map.get("run"), &pointer_to(here, "run"), &known, what);
        self.warnings.extend(lint(&run, &pointer_to(here, "run"), &Values::UriVariables));
        Some(TemplateDecl {
            uri_template,
            name: string(map, "name")?,
            title: string(map, "title"),
            description: string(map, "description"),
            mime_type: string(map, "mimeType"),
            run,
        })
    }

    fn prompt(&mut self, value: &Value, here: &str) -> Option<PromptDecl> {
        let map = value.as_object()?;
        let mut arguments: Vec<(String, Option<String>, bool)> = Vec::new();
        for (i, arg) in items(map, "arguments").iter().enumerate() {
            let Some(arg) = arg.as_object() else { continue };
            let Some(name) = string(arg, "name") else { continue };
            if arguments.iter().any(|(known, _, _)| *known == name) {
                let at = format!("{}/{i}/name", pointer_to(here, "arguments"));
                self.report(&at, format!("duplicate argument {name:?}"));
            }
            let required = arg.get("required") == Some(&Value::Bool(true));
            arguments.push((name, string(arg, "description"), required));
        }
        let known = set_of(arguments.iter().map(|(name, _, _)| name.as_str()));
        let mut messages = Vec::new();
        for (i, message) in items(map, "messages").iter().enumerate() {
            let Some(message) = message.as_object() else { continue };
            let role = match message.get("role").and_then(Value::as_str) {
                Some("assistant") => Role::Assistant,
                _ => Role::User,
            };
            let Some(text) = string(message, "text") else { continue };
            // Prompt texts use {{name}}: check each against the declared arguments.
            let text_at = format!("{}/{i}/text", pointer_to(here, "messages"));
            for name in double_placeholders(&text) {
                if !known.contains(name.as_str()) {
                    self.report(&text_at, format!("placeholder {{{{{name}}}}} names no argument"));
                }
            }
            // A `{{` left open is kept as text, and most likely a placeholder mistyped.
            if let Some(open) = text.split("{{").skip(1).find(|piece| !piece.contains("}}")) {
                let why = format!("unclosed placeholder {{{{{}: no }}}} after it", opening(open));
                self.report(&text_at, why);
            }
            messages.push((role, text));
        }
        Some(PromptDecl {
            name: string(map, "name")?,
            title: string(map, "title"),
            description: string(map, "description"),
            arguments,
            messages,
        })
    }
}

/// Checks a manifest document; relative paths in it start at `dir`.
pub(super) fn check(value: &Value, dir: &Path) -> Result<Manifest, Vec<Problem>> {
    let (problems, more) = against_schema(value);
    let mut c = Checker { problems, warnings: Vec::new(), schema_warnings: Vec::new(), dir };
    let empty = Map::new();
    let root = value.as_object().unwrap_or(&empty);
    let server = root.get("server").and_then(Value::as_object).cloned().unwrap_or_default();
    let tools = c.list(root, "tools", Checker::tool, |t| Some(("name", "tool name", &t.name)));
    let resources =
        c.list(root, "resources", Checker::resource, |r| Some(("uri", "resource uri", &r.uri)));
    let templates = c.list(root, "resourceTemplates", Checker::resource_template, |_| None);
    let prompts =
        c.list(root, "prompts", Checker::prompt, |p| Some(("name", "prompt name", &p.name)));
    if !c.problems.is_empty() {
        // In the document's order (`/tools/2` before `/tools/10`), whichever check found them;
        // those at one place in the order they were found.
        let key = |p: &Problem| {
            let tokens = p.pointer.split('/');
            tokens.map(|t| (t.parse::<usize>().ok(), t.to_owned())).collect::<Vec<_>>()
        };
        let mut keyed: Vec<_> =
            c.problems.drain(..).enumerate().map(|(n, p)| (key(&p), n, p)).collect();
        sort_by(&mut keyed, |a, b| (&a.0, a.1) < (&b.0, b.1));
        c.problems = keyed.into_iter().map(|(.., p)| p).collect();
        if more > 0 {
            let why = format!("and {more} more problems the schema finds past these");
            c.report("", why);
        }
        return Err(c.problems);
    }
    Ok(Manifest {
        server,
        tools,
        resources,
        templates,
        prompts,
        warnings: c.warnings,
        schema_warnings: c.schema_warnings,
    })
}

/// The start of what follows an unclosed `{`, to name it in a message: up to 20 characters.
fn opening(rest: &str) -> String {
    match rest.char_indices().nth(20) {
        Some((end, _)) => format!("{}…", &rest[..end]),
        None => rest.to_string(),
    }
}

/// A set of `items`, inserted one by one: a set collected from an iterator sorts it first,
/// which takes the static binary 4 to 6 KB per item type (docs/development/performance.md,
/// Binary size).
fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    set.extend(items);
    set
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clearer message stands for a keyword `schema.json` has: editing the schema cannot
    /// leave one behind unnoticed.
    #[test]
    fn the_clearer_words_name_keywords_of_the_schema() {
        let schema: Value = serde_json::from_str(super::super::SCHEMA).unwrap();
        for (keyword, _) in CLEARER {
            assert!(schema.pointer(keyword).is_some(), "{keyword} is not in schema.json");
        }
        let cap = schema.pointer("/$defs/run/properties/maxOutputBytes/maximum");
        assert_eq!(cap, Some(&json!(MAX_OUTPUT_CAP)));
        // What the schema keeps past its cap is counted, last.
        let tools: Vec<Value> = (0..25).map(|i| json!({"name": i})).collect();
        let problems = check(&json!({"tools": tools}), Path::new(".")).err().unwrap();
        assert_eq!(problems.len(), 21, "{problems:?}");
        assert_eq!(problems[20].message, "and 55 more problems the schema finds past these");
    }

    #[test]
    fn problems_come_in_the_documents_order_whichever_check_found_them() {
        let tool = |i: usize| json!({"name": format!("t{i}"), "description": "d", "run": {"argv": ["echo"]}});
        let mut tools: Vec<Value> = (0..11).map(tool).collect();
        tools[10]["name"] = json!(5);
        tools[2]["run"]["argv"] = json!(["echo", "{nope}"]);
        let problems = check(&json!({"tools": tools}), Path::new(".")).err().unwrap();
        let pointers: Vec<&str> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/tools/2/run/argv/1", "/tools/10/name"]);
        // Two at one place, in the order they were found.
        tools.truncate(1);
        tools[0]["run"]["argv"] = json!(["{nope}x"]);
        let problems = check(&json!({"tools": tools}), Path::new(".")).err().unwrap();
        let messages: Vec<&str> = problems.iter().map(|p| p.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "placeholder {nope} names no property of inputSchema (declared: )",
                "the program must be fixed: no placeholder in argv[0]"
            ]
        );
    }

    #[test]
    fn an_unclosed_placeholder_is_refused_where_it_is() {
        let properties = json!({"q": {"type": "string"}});
        let run =
            json!({"argv": ["grep", "--q={q"], "stdin": "{q", "cwd": "x{q", "env": {"Q": "{"}});
        let tool = json!({"name": "t", "description": "d", "run": run,
            "inputSchema": {"type": "object", "properties": properties}});
        let prompt = json!({"name": "p", "arguments": [{"name": "a"}],
            "messages": [{"role": "user", "text": "{{a}} then {{a"}]});
        let problems =
            check(&json!({"tools": [tool], "prompts": [prompt]}), Path::new(".")).err().unwrap();
        let found: Vec<String> =
            problems.iter().map(|p| format!("{}: {}", p.pointer, p.message)).collect();
        let use_two = "(use {{ for a literal brace)";
        assert_eq!(
            found,
            [
                "/prompts/0/messages/0/text: unclosed placeholder {{a: no }} after it".to_string(),
                format!("/tools/0/run/argv/1: unclosed placeholder {{q: no }} after it {use_two}"),
                format!("/tools/0/run/cwd: unclosed placeholder {{q: no }} after it {use_two}"),
                format!("/tools/0/run/env/Q: unclosed placeholder {{: no }} after it {use_two}"),
                format!("/tools/0/run/stdin: unclosed placeholder {{q: no }} after it {use_two}"),
            ]
        );
    }

    #[test]
    fn a_dollar_schema_member_is_accepted_and_must_be_a_string() {
        let dir = Path::new(".");
        assert!(check(&json!({"$schema": "./manifest.schema.json"}), dir).is_ok());
        let problems = check(&json!({"$schema": 1}), dir).err().unwrap();
        assert_eq!(problems[0].pointer, "/$schema");
    }
}
