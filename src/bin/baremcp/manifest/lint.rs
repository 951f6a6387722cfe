//! Warnings about a manifest's command that loads but will likely not run as meant: a
//! program found nowhere, a fixed `cwd` that is not a directory, a placeholder whose value
//! can pass for an option, a flag left without its value when an optional argument is absent,
//! and a boolean passed as the word true or false. `check` prints them; serving logs them.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::{ArgvItem, Part, RunDecl, Template};
use baremcp::__private::pointer_to;
use baremcp::schema::Problem;

/// What is known of the values a command's placeholders stand for.
pub(super) enum Values<'s> {
    /// A tool's arguments: the `properties` and `required` of its input schema.
    Arguments { properties: Option<&'s Map<String, Value>>, required: Vec<&'s str> },
    /// A URI template's variables: always there, and anything a client writes (a leading
    /// `-` included).
    UriVariables,
}

impl Values<'_> {
    /// Whether `name`'s value can start with `-`.
    fn can_start_with_dash(&self, name: &str) -> bool {
        match self {
            Values::Arguments { properties, .. } => {
                !properties.and_then(|p| p.get(name)).is_some_and(never_dashed)
            }
            Values::UriVariables => true,
        }
    }

    /// The schema of argument `name`, when it has one.
    fn schema(&self, name: &str) -> Option<&Value> {
        match self {
            Values::Arguments { properties, .. } => properties.and_then(|p| p.get(name)),
            Values::UriVariables => None,
        }
    }

    /// Whether every value `name` may take is itself an option (an `enum` or `const` of words
    /// starting with `-`): then it is meant to read as one.
    fn is_option_choice(&self, name: &str) -> bool {
        let Some(schema) = self.schema(name) else { return false };
        let options = |values: &[Value]| {
            !values.is_empty() && values.iter().all(|v| v.as_str().is_some_and(is_option))
        };
        match (schema.get("enum").and_then(Value::as_array), schema.get("const")) {
            (Some(values), _) => options(values),
            (None, Some(value)) => options(std::slice::from_ref(value)),
            (None, None) => false,
        }
    }

    /// Whether argument `name` is a boolean.
    fn is_boolean(&self, name: &str) -> bool {
        self.schema(name).and_then(|s| s.get("type")).is_some_and(|t| t == "boolean")
    }

    /// Whether `name` can be absent from a call: optional, and with no `default` to stand in.
    fn can_be_absent(&self, name: &str) -> bool {
        match self {
            Values::Arguments { properties, required } => {
                let default = properties.and_then(|p| p.get(name)).and_then(|s| s.get("default"));
                !required.contains(&name) && default.is_none()
            }
            Values::UriVariables => false,
        }
    }
}

/// The warnings about the command `run` declared at `here`.
pub(super) fn lint(run: &RunDecl, here: &str, values: &Values) -> Vec<Problem> {
    let mut warnings = Vec::new();
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
        warnings.push(Problem::new(&pointer_to(here, "cwd"), message));
    }
    if let Some(ArgvItem::One(Template(parts))) = run.argv.first()
        && let [Part::Text(program)] = parts.as_slice()
        && let Some(message) = missing_program(program, cwd.as_deref())
    {
        warnings.push(Problem::new(&format!("{argv_at}/0"), message));
    }
    // Past a `--` element, a program reads no more options.
    let mut guarded = false;
    // The element before, when it is a fixed option that may take the next as its value.
    let mut flag: Option<&str> = None;
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
            let at = match item {
                ArgvItem::One(_) => format!("{argv_at}/{i}"),
                ArgvItem::Group(_) => format!("{argv_at}/{i}/{j}"),
            };
            if let (false, Some(Part::Var(name))) = (guarded, parts.first())
                && values.can_start_with_dash(name)
                && !values.is_option_choice(name)
            {
                let message = format!(
                    "{{{name}}} can start with \"-\" and then reads as an option: put \"--\" in \
                     argv before it, or constrain the property (e.g. \"pattern\": \"^[^-]\" or \
                     \"minimum\": 0)"
                );
                warnings.push(Problem::new(&at, message));
            }
            let absent = parts.iter().find_map(|p| match p {
                Part::Var(name) if values.can_be_absent(name) => Some(name),
                _ => None,
            });
            if let (ArgvItem::One(_), [Part::Var(name)]) = (item, parts.as_slice())
                && values.is_boolean(name)
            {
                let message = format!(
                    "{{{name}}} is a boolean: it is passed as the word true or false; to pass an \
                     option only when it is true, make it a switch in a group ([\"--{name}\", \
                     \"{{{name}}}\"])"
                );
                warnings.push(Problem::new(&at, message));
            }
            if let (Some(flag), Some(name), ArgvItem::One(_)) = (flag, absent, item)
                && !values.is_option_choice(name)
            {
                let message = format!(
                    "{{{name}}} is optional: without it this element is dropped and \"{flag}\" \
                     is left without its value; group them ([\"{flag}\", \"{{{name}}}\"]) to drop \
                     both, or give {name} a \"default\""
                );
                warnings.push(Problem::new(&at, message));
            }
        }
        flag = match item {
            ArgvItem::One(Template(parts)) if !guarded => match parts.as_slice() {
                [Part::Text(text)] if is_option(text) => Some(text),
                _ => None,
            },
            _ => None,
        };
    }
    warnings
}

/// Whether an argv element is an option that may take the next element as its value:
/// `-n`, `--max-count`; not `--`, `-` (stdin to many programs) or `--color=auto`.
fn is_option(text: &str) -> bool {
    text.starts_with('-') && text.len() > 1 && text != "--" && !text.contains('=')
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
/// `pattern` pins a first character other than `-`, and arrays whose every item is such
/// (`prefixItems` and `items` both, or no item past the prefix).
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
        Some("array") => {
            let prefix = schema.get("prefixItems").and_then(Value::as_array);
            let rest =
                schema.get("items").is_some_and(|i| *i == Value::Bool(false) || never_dashed(i));
            prefix.into_iter().flatten().all(never_dashed) && rest
        }
        _ => false,
    }
}

/// Whether a pattern anchors its first character to something that is not `-`, in each of
/// its alternatives (`^a|-` matches `-rf`): `^[^-…]`, `^\w`, `^\d`, a class of letters and
/// digits only, or a literal letter or digit, none of them then made optional (`^[a-z]*`
/// matches `-rf` too).
fn pins_first_character(pattern: &str) -> bool {
    alternatives(pattern).into_iter().all(|alternative| {
        let Some(rest) = alternative.strip_prefix('^') else { return false };
        let (pinned, after) = if let Some(escaped) = rest.strip_prefix('\\') {
            (escaped.starts_with(['w', 'd']), escaped.get(1..).unwrap_or(""))
        } else if let Some(class) = rest.strip_prefix('[') {
            let Some(end) = class.find(']') else { return false };
            let inside = &class[..end];
            // Ranges like a-z hold a `-` between two letters; a `-` first or last is literal.
            let letters = !inside.is_empty()
                && !inside.starts_with(['^', '-'])
                && !inside.ends_with('-')
                && inside.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            (inside.starts_with("^-") || letters, &class[end + 1..])
        } else {
            let first = rest.chars().next().filter(char::is_ascii_alphanumeric);
            (first.is_some(), rest.get(1..).unwrap_or(""))
        };
        pinned && !after.starts_with(['*', '?']) && !after.starts_with("{0")
    })
}

/// The top-level alternatives of a pattern: split at each `|` outside parentheses, classes
/// and escapes.
fn alternatives(pattern: &str) -> Vec<&str> {
    let (mut out, mut start, mut depth, mut in_class, mut escaped) =
        (Vec::new(), 0, 0, false, false);
    for (i, c) in pattern.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            ']' if in_class => in_class = false,
            _ if in_class => {}
            '[' => in_class = true,
            '(' => depth += 1,
            ')' => depth -= 1,
            '|' if depth == 0 => {
                out.push(&pattern[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&pattern[start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::super::check::check;
    use serde_json::json;

    use super::*;

    /// The warnings of a one-tool manifest whose `run` and argument schema are given (every
    /// argument required: see `optional` for the others).
    fn warnings(run: Value, properties: Value) -> Vec<String> {
        let required: Vec<&String> = properties.as_object().unwrap().keys().collect();
        let schema = json!({"type": "object", "properties": properties, "required": required});
        warnings_of(run, schema)
    }

    /// The warnings of a one-tool manifest with `run`, whose arguments are all optional.
    fn optional(run: Value, properties: Value) -> Vec<String> {
        warnings_of(run, json!({"type": "object", "properties": properties}))
    }

    fn warnings_of(run: Value, input_schema: Value) -> Vec<String> {
        let doc = json!({"tools": [{
            "name": "t", "description": "d", "run": run, "inputSchema": input_schema,
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
            json!({"type": "string", "pattern": "^[a-z0-9]+(-[a-z0-9]+)*$"}),
            json!({"type": "string", "pattern": "^a|^b(x|-)"}),
            json!({"type": "string", "pattern": "^[^-|]x|^\\d"}),
            json!({"type": "array", "prefixItems": [{"const": "a"}], "items": false}),
        ] {
            let w = warnings(json!({"argv": ["echo", "{v}"]}), json!({"v": schema}));
            let dashed: Vec<&String> = w.iter().filter(|w| w.contains("can start with")).collect();
            assert!(dashed.is_empty(), "{schema}: {w:?}");
        }
        for schema in [
            json!({"type": "integer"}),
            json!({"type": "string", "pattern": "[a-z]"}),
            json!({"type": "string", "pattern": "^[-a-z]"}),
            json!({"type": "string", "pattern": "^[a-z0-9-]+$"}),
            json!({"enum": ["a", "-b"]}),
            json!({"type": "array", "items": {"type": "string"}}),
            // Each matches `-rf`: the first character made optional, an alternative not
            // anchored, an item of the prefix not constrained.
            json!({"type": "string", "pattern": "^[a-z0-9]*(-[a-z0-9]+)*$"}),
            json!({"type": "string", "pattern": "^[^-]?"}),
            json!({"type": "string", "pattern": "^a{0,3}-"}),
            json!({"type": "string", "pattern": "^a|-"}),
            json!({"type": "array", "prefixItems": [{"type": "string"}], "items": {"enum": ["a"]}}),
        ] {
            let w = warnings(json!({"argv": ["echo", "{v}"]}), json!({"v": schema}));
            assert_eq!(w.len(), 1, "{schema}: {w:?}");
        }
    }

    #[test]
    fn a_flag_before_an_optional_placeholder_outside_a_group_is_warned_about() {
        let n = json!({"n": {"type": "integer", "minimum": 1}});
        let w = optional(json!({"argv": ["git", "log", "-n", "{n}"]}), n.clone());
        assert_eq!(
            w,
            [
                r#"/tools/0/run/argv/3: {n} is optional: without it this element is dropped and "-n" is left without its value; group them (["-n", "{n}"]) to drop both, or give n a "default""#
            ]
        );
        // Grouped, required, defaulted, self-contained or past `--`: nothing to say.
        assert!(optional(json!({"argv": ["git", "log", ["-n", "{n}"]]}), n.clone()).is_empty());
        assert!(warnings(json!({"argv": ["git", "log", "-n", "{n}"]}), n.clone()).is_empty());
        let defaulted = json!({"n": {"type": "integer", "minimum": 1, "default": 5}});
        assert!(optional(json!({"argv": ["git", "log", "-n", "{n}"]}), defaulted).is_empty());
        assert!(optional(json!({"argv": ["git", "log", "--max-count={n}"]}), n.clone()).is_empty());
        assert!(optional(json!({"argv": ["printf", "%s", "--", "-n", "{n}"]}), n).is_empty());
        // A URI template's variables are always there.
        let doc = json!({"resourceTemplates": [{"uriTemplate": "x://{id}", "name": "t",
            "run": {"argv": ["show", "--id", "--", "{id}"]}}]});
        let manifest = check(&doc, Path::new(env!("CARGO_MANIFEST_DIR"))).unwrap();
        assert!(manifest.warnings.iter().all(|w| !w.message.contains("optional")));
    }

    #[test]
    fn an_argument_whose_every_value_is_an_option_is_meant_to_read_as_one() {
        let flags = json!({"enum": ["-a", "-l", "-la"]});
        let run = json!({"argv": ["ls", "-1", "{flags}", "--", "{dir}"]});
        let dir = json!({"type": "string"});
        assert!(optional(run.clone(), json!({"flags": flags, "dir": dir})).is_empty());
        // A value that is not an option among them: the warnings stand.
        let mixed = json!({"enum": ["-a", "a"]});
        let w = optional(run, json!({"flags": mixed, "dir": dir}));
        assert_eq!(w.len(), 2, "{w:?}");
    }

    #[test]
    fn a_boolean_outside_a_group_is_warned_about() {
        let all = json!({"type": "boolean"});
        let w = warnings(json!({"argv": ["ls", "{all}"]}), json!({"all": all}));
        assert_eq!(
            w,
            [
                r#"/tools/0/run/argv/1: {all} is a boolean: it is passed as the word true or false; to pass an option only when it is true, make it a switch in a group (["--all", "{all}"])"#
            ]
        );
        assert!(warnings(json!({"argv": ["ls", ["-a", "{all}"]]}), json!({"all": all})).is_empty());
    }
}
