//! Checking a manifest: a walk over the document that collects every problem with its JSON
//! Pointer (unknown fields, wrong types, placeholders that name nothing, duplicate names,
//! schemas that do not load, missing files) and builds the declarations only when there are
//! none.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::{
    ArgvItem, DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT_MS, Manifest, Part, PromptDecl, ResourceDecl,
    RunDecl, Source, Template, TemplateDecl, ToolDecl, double_placeholders,
};
use baremcp::schema::{Problem, Schema, pointer_to};
use baremcp::{ReadError, ResourceTemplate, Role};

/// Reads and checks a manifest file.
pub(super) fn load(path: &Path) -> Result<Manifest, Vec<Problem>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| vec![Problem::new("", format!("cannot read {}: {e}", path.display()))])?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| vec![Problem::new("", format!("not JSON: {e}"))])?;
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let dir = if dir.as_os_str().is_empty() { PathBuf::from(".") } else { dir };
    check(&value, &dir)
}

/// Walks the document, collecting every problem with its pointer.
struct Checker<'d> {
    problems: Vec<Problem>,
    /// What loads but will likely not run as meant: a program not on PATH, a missing `cwd`,
    /// a placeholder that can pass for an option.
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
        for (i, value) in self.array(root, key, "").iter().enumerate() {
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

    /// An object whose keys are all in `allowed`.
    fn object<'v>(
        &mut self,
        value: &'v Value,
        here: &str,
        allowed: &[&str],
    ) -> Option<&'v Map<String, Value>> {
        let Some(map) = value.as_object() else {
            self.report(here, "must be an object");
            return None;
        };
        for key in map.keys().filter(|k| !allowed.contains(&k.as_str())) {
            self.report(
                &pointer_to(here, key),
                format!("unknown field (allowed: {})", allowed.join(", ")),
            );
        }
        Some(map)
    }

    fn string(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        here: &str,
        required: bool,
    ) -> Option<String> {
        match map.get(key) {
            None if required => {
                self.report(&pointer_to(here, key), "is required");
                None
            }
            None => None,
            Some(Value::String(s)) if !(required && s.is_empty()) => Some(s.clone()),
            Some(Value::String(_)) => {
                self.report(&pointer_to(here, key), "must not be empty");
                None
            }
            Some(_) => {
                self.report(&pointer_to(here, key), "must be a string");
                None
            }
        }
    }

    fn array<'v>(&mut self, map: &'v Map<String, Value>, key: &str, here: &str) -> &'v [Value] {
        match map.get(key) {
            None => &[],
            Some(Value::Array(items)) => items,
            Some(_) => {
                self.report(&pointer_to(here, key), "must be an array");
                &[]
            }
        }
    }

    fn count(&mut self, map: &Map<String, Value>, key: &str, here: &str, default: u64) -> u64 {
        match map.get(key) {
            None => default,
            Some(v) => match v.as_u64() {
                Some(n) if n > 0 => n,
                _ => {
                    self.report(&pointer_to(here, key), "must be a positive integer");
                    default
                }
            },
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
                    let name: String = chars.by_ref().take_while(|&c| c != '}').collect();
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
        self.string(map, key, here, false)
            .map(|text| self.template(&text, &pointer_to(here, key), known, what))
    }

    fn run(
        &mut self,
        value: Option<&Value>,
        here: &str,
        known: &BTreeSet<String>,
        what: &str,
        with_output: bool,
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
        let Some(value) = value else {
            self.report(here, "is required");
            return run;
        };
        let mut allowed =
            vec!["argv", "stdin", "cwd", "env", "timeoutMs", "maxOutputBytes", "okExitCodes"];
        if with_output {
            allowed.push("output");
        }
        let Some(map) = self.object(value, here, &allowed) else { return run };
        let argv_at = pointer_to(here, "argv");
        let argv = self.array(map, "argv", here);
        if argv.is_empty() {
            self.report(&argv_at, "must be a non-empty array (the program, then its arguments)");
        }
        for (i, item) in argv.iter().enumerate() {
            let item_at = format!("{argv_at}/{i}");
            match item {
                Value::String(text) => {
                    let template = self.template(text, &item_at, known, what);
                    if i == 0 && template.0.iter().any(|p| matches!(p, Part::Var(_))) {
                        self.report(
                            &item_at,
                            "the program must be fixed: no placeholder in argv[0]",
                        );
                    }
                    run.argv.push(ArgvItem::One(template));
                }
                Value::Array(group) if i > 0 && !group.is_empty() => {
                    let templates = group
                        .iter()
                        .enumerate()
                        .map(|(j, t)| match t {
                            Value::String(text) => {
                                self.template(text, &format!("{item_at}/{j}"), known, what)
                            }
                            _ => {
                                self.report(&format!("{item_at}/{j}"), "must be a string");
                                Template(Vec::new())
                            }
                        })
                        .collect();
                    run.argv.push(ArgvItem::Group(templates));
                }
                _ => self.report(
                    &item_at,
                    "must be a string, or (after the program) a non-empty array of strings",
                ),
            }
        }
        run.stdin = self.template_field(map, "stdin", here, known, what);
        run.cwd = self.template_field(map, "cwd", here, known, what);
        if let Some(env) = map.get("env") {
            let env_at = pointer_to(here, "env");
            match env.as_object() {
                Some(env) => {
                    for (name, value) in env {
                        match value {
                            Value::String(text) => {
                                let template =
                                    self.template(text, &pointer_to(&env_at, name), known, what);
                                run.env.insert(name.clone(), template);
                            }
                            Value::Bool(true) => run.pass.push(name.clone()),
                            _ => self.report(
                                &pointer_to(&env_at, name),
                                "must be a string (the value) or true (pass it through)",
                            ),
                        }
                    }
                }
                None => self.report(&env_at, "must be an object"),
            }
        }
        run.timeout = Duration::from_millis(self.count(map, "timeoutMs", here, DEFAULT_TIMEOUT_MS));
        run.max_output = self.count(map, "maxOutputBytes", here, DEFAULT_MAX_OUTPUT) as usize;
        if map.contains_key("okExitCodes") {
            let codes: Option<Vec<i32>> = map["okExitCodes"].as_array().and_then(|a| {
                a.iter().map(|c| c.as_i64().and_then(|c| i32::try_from(c).ok())).collect()
            });
            match codes {
                Some(codes) if !codes.is_empty() => run.ok_codes = codes,
                _ => self.report(
                    &pointer_to(here, "okExitCodes"),
                    "must be a non-empty array of exit codes",
                ),
            }
        }
        match map.get("output") {
            None => {}
            Some(Value::String(kind)) if kind == "text" => {}
            Some(Value::String(kind)) if kind == "json" => run.json_output = true,
            Some(_) => self.report(&pointer_to(here, "output"), "must be \"text\" or \"json\""),
        }
        run
    }

    fn schema(&mut self, value: &Value, here: &str) -> bool {
        match Schema::compile(value) {
            Ok(schema) => {
                // With the manifest's other warnings, so `check` prints them too (a log line
                // would go nowhere there: check sets up no logger).
                for warning in schema.warnings() {
                    let pointer = format!("{here}{}", warning.pointer);
                    self.schema_warnings.push(Problem::new(&pointer, warning.message.clone()));
                }
                true
            }
            Err(problems) => {
                for p in problems {
                    self.report(&format!("{here}{}", p.pointer), p.message);
                }
                false
            }
        }
    }

    fn warn(&mut self, pointer: &str, message: impl Into<String>) {
        self.warnings.push(Problem::new(pointer, message));
    }

    /// Warnings about a command that loads but will likely not run as meant. `safe` says
    /// whether a placeholder's value can never start with `-`.
    fn lint(&mut self, run: &RunDecl, here: &str, safe: impl Fn(&str) -> bool) {
        let argv_at = pointer_to(here, "argv");
        let cwd = match &run.cwd {
            Some(Template(parts)) => match parts.as_slice() {
                [] => Some(run.dir.clone()),
                [Part::Text(text)] => Some(run.dir.join(text)),
                _ => None, // filled in per call
            },
            None => None,
        };
        if let Some(dir) = &cwd
            && !dir.is_dir()
        {
            let message = format!(
                "cwd {} is not a directory (a relative cwd starts at the manifest's folder)",
                dir.display()
            );
            self.warn(&pointer_to(here, "cwd"), message);
        }
        if let Some(ArgvItem::One(Template(parts))) = run.argv.first()
            && let [Part::Text(program)] = parts.as_slice()
            && let Some(message) = missing_program(program, cwd.as_deref())
        {
            self.warn(&format!("{argv_at}/0"), message);
        }
        // Past a `--` element, a program reads no more options.
        let mut guarded = false;
        for (i, item) in run.argv.iter().enumerate().skip(1) {
            let templates = match item {
                ArgvItem::One(t) => std::slice::from_ref(t),
                ArgvItem::Group(ts) => ts.as_slice(),
            };
            for (j, Template(parts)) in templates.iter().enumerate() {
                if let [Part::Text(text)] = parts.as_slice()
                    && text == "--"
                {
                    guarded = true;
                }
                if let (false, Some(Part::Var(name))) = (guarded, parts.first())
                    && !safe(name)
                {
                    let at = match item {
                        ArgvItem::One(_) => format!("{argv_at}/{i}"),
                        ArgvItem::Group(_) => format!("{argv_at}/{i}/{j}"),
                    };
                    self.warn(
                        &at,
                        format!(
                            "{{{name}}} can start with \"-\" and then reads as an option: put \"--\" in argv before \
                             it, or constrain the property (e.g. \"pattern\": \"^[^-]\" or \"minimum\": 0)"
                        ),
                    );
                }
            }
        }
    }

    fn tool(&mut self, value: &Value, here: &str) -> Option<ToolDecl> {
        let allowed =
            ["name", "title", "description", "inputSchema", "outputSchema", "annotations", "run"];
        let map = self.object(value, here, &allowed)?;
        let name = self.string(map, "name", here, true);
        let title = self.string(map, "title", here, false);
        let description = self.string(map, "description", here, true);
        let input_schema = map
            .get("inputSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        let schema_at = pointer_to(here, "inputSchema");
        if self.schema(&input_schema, &schema_at)
            && input_schema.get("type") != Some(&json!("object"))
        {
            self.report(&schema_at, r#"must have "type": "object""#);
        }
        let output_schema = map.get("outputSchema").cloned();
        if let Some(schema) = &output_schema {
            self.schema(schema, &pointer_to(here, "outputSchema"));
        }
        let annotations = map.get("annotations").cloned();
        if let Some(a) = &annotations {
            let hints =
                ["title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"];
            self.object(a, &pointer_to(here, "annotations"), &hints);
        }
        let known: BTreeSet<String> = input_schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        let run = self.run(
            map.get("run"),
            &pointer_to(here, "run"),
            &known,
            "property of inputSchema",
            true,
        );
        let properties = input_schema.get("properties").and_then(Value::as_object);
        self.lint(&run, &pointer_to(here, "run"), |name| {
            properties.and_then(|p| p.get(name)).is_some_and(never_dashed)
        });
        if run.json_output && output_schema.is_none() {
            log::debug!("{here}: JSON output without an outputSchema is passed through unchecked");
        }
        Some(ToolDecl {
            name: name?,
            title,
            description: description?,
            input_schema,
            output_schema,
            annotations,
            run,
        })
    }

    fn resource(&mut self, value: &Value, here: &str) -> Option<ResourceDecl> {
        let allowed = ["uri", "name", "title", "description", "mimeType", "text", "path", "run"];
        let map = self.object(value, here, &allowed)?;
        let uri = self.string(map, "uri", here, true);
        let name = self.string(map, "name", here, true);
        let sources = ["text", "path", "run"].iter().filter(|k| map.contains_key(**k)).count();
        if sources != 1 {
            self.report(here, "needs exactly one of text, path or run");
        }
        let source = if let Some(text) = self.string(map, "text", here, false) {
            Source::Text(text)
        } else if let Some(path) = self.string(map, "path", here, false) {
            let full = self.dir.join(&path);
            if !full.is_file() {
                self.report(&pointer_to(here, "path"), format!("{} is not a file", full.display()));
            }
            Source::Path(full)
        } else {
            Source::Run(self.run(
                map.get("run"),
                &pointer_to(here, "run"),
                &BTreeSet::new(),
                "variable (a resource has none)",
                false,
            ))
        };
        Some(ResourceDecl {
            uri: uri?,
            name: name?,
            title: self.string(map, "title", here, false),
            description: self.string(map, "description", here, false),
            mime_type: self.string(map, "mimeType", here, false),
            source,
        })
    }

    fn resource_template(&mut self, value: &Value, here: &str) -> Option<TemplateDecl> {
        let allowed = ["uriTemplate", "name", "title", "description", "mimeType", "run"];
        let map = self.object(value, here, &allowed)?;
        let uri_template = self.string(map, "uriTemplate", here, true)?;
        // The library parses templates; one that reads nothing tells their variables.
        let parsed =
            ResourceTemplate::new(uri_template.as_str(), "", |_, _| Err(ReadError::NotFound));
        let known: BTreeSet<String> = parsed.variables().map(String::from).collect();
        if known.is_empty() {
            self.report(&pointer_to(here, "uriTemplate"), "needs at least one {variable}");
        }
        let run = self.run(
            map.get("run"),
            &pointer_to(here, "run"),
            &known,
            "variable of uriTemplate",
            false,
        );
        // A URI variable can hold anything a client writes, a leading `-` included.
        self.lint(&run, &pointer_to(here, "run"), |_| false);
        Some(TemplateDecl {
            uri_template,
            name: self.string(map, "name", here, true)?,
            title: self.string(map, "title", here, false),
            description: self.string(map, "description", here, false),
            mime_type: self.string(map, "mimeType", here, false),
            run,
        })
    }

    fn prompt(&mut self, value: &Value, here: &str) -> Option<PromptDecl> {
        let map =
            self.object(value, here, &["name", "title", "description", "arguments", "messages"])?;
        let name = self.string(map, "name", here, true);
        let mut arguments = Vec::new();
        for (i, arg) in self.array(map, "arguments", here).iter().enumerate() {
            let arg_at = format!("{}/{i}", pointer_to(here, "arguments"));
            let Some(arg_map) = self.object(arg, &arg_at, &["name", "description", "required"])
            else {
                continue;
            };
            let required = match arg_map.get("required") {
                None => false,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    self.report(&pointer_to(&arg_at, "required"), "must be a boolean");
                    false
                }
            };
            if let Some(arg_name) = self.string(arg_map, "name", &arg_at, true) {
                arguments.push((
                    arg_name,
                    self.string(arg_map, "description", &arg_at, false),
                    required,
                ));
            }
        }
        let known: BTreeSet<String> = arguments.iter().map(|(n, _, _)| n.clone()).collect();
        let mut messages = Vec::new();
        let list = self.array(map, "messages", here);
        if list.is_empty() {
            self.report(&pointer_to(here, "messages"), "must be a non-empty array");
        }
        for (i, message) in list.iter().enumerate() {
            let message_at = format!("{}/{i}", pointer_to(here, "messages"));
            let Some(message_map) = self.object(message, &message_at, &["role", "text"]) else {
                continue;
            };
            let role = match self.string(message_map, "role", &message_at, true).as_deref() {
                Some("user") | None => Role::User,
                Some("assistant") => Role::Assistant,
                Some(_) => {
                    self.report(
                        &pointer_to(&message_at, "role"),
                        "must be \"user\" or \"assistant\"",
                    );
                    Role::User
                }
            };
            if let Some(text) = self.string(message_map, "text", &message_at, true) {
                // Prompt texts use {{name}}: check each against the declared arguments.
                for name in double_placeholders(&text) {
                    if !known.contains(&name) {
                        self.report(
                            &pointer_to(&message_at, "text"),
                            format!("placeholder {{{{{name}}}}} names no argument"),
                        );
                    }
                }
                messages.push((role, text));
            }
        }
        Some(PromptDecl {
            name: name?,
            title: self.string(map, "title", here, false),
            description: self.string(map, "description", here, false),
            arguments,
            messages,
        })
    }
}

fn check(value: &Value, dir: &Path) -> Result<Manifest, Vec<Problem>> {
    let mut c =
        Checker { problems: Vec::new(), warnings: Vec::new(), schema_warnings: Vec::new(), dir };
    let keys = ["$schema", "server", "tools", "resources", "resourceTemplates", "prompts"];
    let Some(root) = c.object(value, "", &keys) else {
        return Err(c.problems);
    };
    // `$schema` only tells editors where the manifest's JSON Schema is.
    if root.get("$schema").is_some_and(|v| !v.is_string()) {
        c.report("/$schema", "must be a string");
    }
    let server = match root.get("server") {
        None => Map::new(),
        Some(s) => c
            .object(s, "/server", &["name", "version", "title", "description", "instructions"])
            .cloned()
            .unwrap_or_default(),
    };
    for (key, v) in &server {
        if !v.is_string() {
            c.report(&pointer_to("/server", key), "must be a string");
        }
    }
    let tools = c.list(root, "tools", Checker::tool, |t| Some(("name", "tool name", &t.name)));
    let resources =
        c.list(root, "resources", Checker::resource, |r| Some(("uri", "resource uri", &r.uri)));
    let templates = c.list(root, "resourceTemplates", Checker::resource_template, |_| None);
    let prompts =
        c.list(root, "prompts", Checker::prompt, |p| Some(("name", "prompt name", &p.name)));
    if !c.problems.is_empty() {
        return Err(c.problems);
    }
    let warnings = c.warnings;
    Ok(Manifest {
        server,
        tools,
        resources,
        templates,
        prompts,
        warnings,
        schema_warnings: c.schema_warnings,
    })
}

/// Why `program` will not start, when that can be told now: a bare name found nowhere on
/// `PATH`, or a path that is not a file (a relative one is looked for in a fixed `cwd` only,
/// since without one the command runs wherever baremcp was started).
fn missing_program(program: &str, cwd: Option<&Path>) -> Option<String> {
    if !program.contains('/') {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let found = std::env::split_paths(&path).any(|dir| dir.join(program).is_file());
        return (!found).then(|| format!("program {program:?} is not found on PATH"));
    }
    let full = match cwd {
        _ if Path::new(program).is_absolute() => PathBuf::from(program),
        Some(cwd) => cwd.join(program),
        None => return None,
    };
    (!full.is_file()).then(|| format!("program {} is not a file", full.display()))
}

/// Whether every value `schema` admits reads as an argument, never as an option: enums and
/// consts with no value starting with `-`, booleans, numbers of at least 0, strings whose
/// `pattern` pins a first character other than `-`, and arrays of such items.
fn never_dashed(schema: &Value) -> bool {
    let dashed = |v: &Value| {
        v.as_str().is_some_and(|s| s.starts_with('-')) || v.as_f64().is_some_and(|n| n < 0.0)
    };
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return !values.iter().any(dashed);
    }
    if let Some(value) = schema.get("const") {
        return !dashed(value);
    }
    let at_least_zero = |key| schema.get(key).and_then(Value::as_f64).is_some_and(|n| n >= 0.0);
    match schema.get("type").and_then(Value::as_str) {
        Some("boolean") => true,
        Some("integer" | "number") => at_least_zero("minimum") || at_least_zero("exclusiveMinimum"),
        Some("string") => {
            schema.get("pattern").and_then(Value::as_str).is_some_and(pins_first_character)
        }
        Some("array") => schema.get("items").is_some_and(never_dashed),
        _ => false,
    }
}

/// Whether a pattern anchors its first character to something that is not `-`: `^[^-…]`,
/// `^\w`, `^\d`, a class of letters and digits only, or a literal letter or digit.
fn pins_first_character(pattern: &str) -> bool {
    let Some(rest) = pattern.strip_prefix('^') else { return false };
    if rest.starts_with("[^-") || rest.starts_with("\\w") || rest.starts_with("\\d") {
        return true;
    }
    if let Some(class) = rest.strip_prefix('[') {
        let Some(end) = class.find(']') else { return false };
        let inside = &class[..end];
        // Ranges like a-z hold a `-` between two letters; a `-` first or last is literal.
        return !inside.is_empty()
            && !inside.starts_with(['^', '-'])
            && !inside.ends_with('-')
            && inside.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    }
    rest.starts_with(|c: char| c.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The warnings of a one-tool manifest whose `run` and argument schema are given.
    fn warnings(run: Value, properties: Value) -> Vec<String> {
        let doc = json!({"tools": [{
            "name": "t", "description": "d", "run": run,
            "inputSchema": {"type": "object", "properties": properties},
        }]});
        let manifest = check(&doc, Path::new(env!("CARGO_MANIFEST_DIR")))
            .map_err(|p| format!("{p:?}"))
            .unwrap();
        manifest.warnings.iter().map(|w| format!("{}: {}", w.pointer, w.message)).collect()
    }

    #[test]
    fn a_program_not_on_path_and_a_missing_cwd_are_warned_about() {
        let found = warnings(json!({"argv": ["sh", "-c", "true"]}), json!({}));
        assert!(found.is_empty(), "{found:?}");
        let w = warnings(json!({"argv": ["gti", "log"], "cwd": "no/such/folder"}), json!({}));
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(
            w[0].starts_with("/tools/0/run/cwd: cwd ") && w[0].contains("is not a directory"),
            "{w:?}"
        );
        assert_eq!(w[1], r#"/tools/0/run/argv/0: program "gti" is not found on PATH"#);
        let relative = warnings(json!({"argv": ["./nothing-here.sh"], "cwd": "."}), json!({}));
        assert!(relative[0].contains("nothing-here.sh is not a file"), "{relative:?}");
        // With a placeholder, the cwd is only known per call.
        let open =
            warnings(json!({"argv": ["sh"], "cwd": "{dir}"}), json!({"dir": {"type": "string"}}));
        assert!(open.is_empty(), "{open:?}");
    }

    #[test]
    fn a_placeholder_that_can_start_with_a_dash_is_warned_about_unless_guarded() {
        let props = json!({"dir": {"type": "string"}});
        let w = warnings(json!({"argv": ["ls", "-1", "{dir}"]}), props.clone());
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("/tools/0/run/argv/2: {dir} can start with \"-\""), "{w:?}");
        assert!(w[0].contains(r#"put "--" in argv before it"#), "the fix is in the message: {w:?}");
        assert!(warnings(json!({"argv": ["ls", "-1", "--", "{dir}"]}), props.clone()).is_empty());
        assert!(warnings(json!({"argv": ["ls", ["--", "{dir}"]]}), props.clone()).is_empty());
        // Inside an element, after a fixed prefix, a value cannot become an option.
        assert!(warnings(json!({"argv": ["ls", "--color={dir}"]}), props).is_empty());
        let group = warnings(
            json!({"argv": ["git", ["--max-count", "{n}"]]}),
            json!({"n": {"type": "integer"}}),
        );
        assert_eq!(group.len(), 1, "{group:?}");
        assert!(group[0].starts_with("/tools/0/run/argv/1/1: {n}"), "{group:?}");
    }

    #[test]
    fn schemas_that_rule_out_a_leading_dash_silence_the_warning() {
        for schema in [
            json!({"type": "integer", "minimum": 1}),
            json!({"type": "number", "exclusiveMinimum": 0}),
            json!({"type": "boolean"}),
            json!({"enum": ["short", "long"]}),
            json!({"const": "x"}),
            json!({"type": "string", "pattern": "^[^-]"}),
            json!({"type": "string", "pattern": "^[a-z0-9_]+$"}),
            json!({"type": "string", "pattern": "^\\w+$"}),
            json!({"type": "array", "items": {"enum": ["a", "b"]}}),
        ] {
            let w = warnings(json!({"argv": ["echo", "{v}"]}), json!({"v": schema}));
            assert!(w.is_empty(), "{schema}: {w:?}");
        }
        for schema in [
            json!({"type": "integer"}),
            json!({"type": "string", "pattern": "[a-z]"}),
            json!({"type": "string", "pattern": "^[-a-z]"}),
            json!({"type": "string", "pattern": "^[a-z0-9-]+$"}),
            json!({"enum": ["a", "-b"]}),
            json!({"type": "array", "items": {"type": "string"}}),
        ] {
            let w = warnings(json!({"argv": ["echo", "{v}"]}), json!({"v": schema}));
            assert_eq!(w.len(), 1, "{schema}: {w:?}");
        }
    }

    #[test]
    fn a_dollar_schema_member_is_accepted_and_must_be_a_string() {
        let dir = Path::new(".");
        assert!(check(&json!({"$schema": "./manifest.schema.json"}), dir).is_ok());
        let problems = check(&json!({"$schema": 1}), dir).err().unwrap();
        assert_eq!(problems[0].pointer, "/$schema");
    }
}
