//! The binary's command line: argv → [`Command`]. The transcript tests build their server
//! from the same flags the binary reads; the help texts and the hints for a mistyped or
//! misplaced flag are in `help.rs`.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use lexopt::prelude::*;

use super::help::{self, CHECK, HELP, Help, PROXY, REPLAY, SERVE, VALIDATE};
use super::http_flags::{self, Given};
use super::proxy::ProxyOptions;
use super::replay::ReplayOptions;
use baremcp::{DEFAULT_MAX_MESSAGE_BYTES, Server};
use baremcp::{FileRoot, HttpOptions};

const LOG: &str = "baremcp::manifest";

/// A command line that cannot be run: the message, and the command whose help to point at.
#[derive(Debug)]
pub struct UsageError {
    pub message: String,
    pub command: &'static str,
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let space = if self.command.is_empty() { "" } else { " " };
        write!(f, "{}\ntry 'baremcp{space}{} --help'", self.message, self.command)
    }
}

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    Serve(ServeOptions),
    Validate {
        schema: PathBuf,
        instances: Vec<PathBuf>,
        jsonl: bool,
    },
    Check(PathBuf),
    Replay(ReplayOptions),
    Proxy(ProxyOptions),
    /// Print this text and exit 0.
    Help(String),
    Version,
    /// `check --schema`: print the manifest JSON Schema.
    ManifestSchema,
}

/// Flags of the serving mode.
#[derive(Debug, Clone, PartialEq)]
pub struct ServeOptions {
    pub manifest: Option<PathBuf>,
    pub roots: Vec<PathBuf>,
    pub include_hidden: bool,
    pub max_resource_bytes: u64,
    pub max_message_bytes: usize,
    pub page_size: Option<usize>,
    pub log_level: Option<String>,
    pub log_file: Option<PathBuf>,
    /// `--http` and its company; no address: stdio.
    pub http: Box<HttpOptions>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            manifest: None,
            roots: Vec::new(),
            include_hidden: false,
            max_resource_bytes: 8 * 1024 * 1024,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            page_size: None,
            log_level: None,
            log_file: None,
            http: Box::default(),
        }
    }
}

impl ServeOptions {
    /// The server these options describe: the manifest's, or the built-in catalog, with the
    /// roots and limits applied. The error lists every problem of a manifest.
    pub fn build(&self) -> Result<Server, String> {
        let base = match &self.manifest {
            None => super::catalog::builtin(),
            Some(path) => {
                let manifest = super::manifest::load(path).map_err(|e| e.describe(path))?;
                for w in manifest.warnings() {
                    let line = format!("{}: {}: {}", path.display(), w.pointer, w.message);
                    log::warn!(target: LOG, "{}", super::manifest::printable(&line));
                }
                let printable = super::manifest::printable;
                manifest
                    .into_server()
                    .map_err(|e| printable(&format!("{}: {e}", path.display())))?
            }
        };
        self.apply(base)
    }

    /// Applies the roots and limits to a server. Fails when a root is not a readable directory.
    pub fn apply(&self, mut server: Server) -> Result<Server, String> {
        server = server.max_message_bytes(self.max_message_bytes);
        if let Some(size) = self.page_size {
            server = server.page_size(size);
        }
        for dir in &self.roots {
            let root = FileRoot::new(dir, self.include_hidden, self.max_resource_bytes)
                .map_err(|e| format!("--root {}: {e}", dir.display()))?;
            server.add_directory(root).map_err(|e| format!("--root {}: {e}", dir.display()))?;
        }
        Ok(server)
    }
}

/// Parses the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = impl Into<OsString>>) -> Result<Command, UsageError> {
    let mut parser = lexopt::Parser::from_args(args);
    let mut command = "";
    serve_or_command(&mut parser, &mut command)
        .map_err(|e| UsageError { message: e.to_string(), command })
}

/// Serving's flags, or a command's (which then names itself in `command`, for the error).
fn serve_or_command(
    parser: &mut lexopt::Parser,
    command: &mut &'static str,
) -> Result<Command, lexopt::Error> {
    let mut options = ServeOptions::default();
    let mut given = Given::default();
    // The first flag of HTTP's given: without `--http` it would do nothing.
    let mut http_only: Option<String> = None;
    // The first flag given: a command word after it says the flag is not the command's.
    let mut first: Option<String> = None;
    while let Some(arg) = parser.next()? {
        if first.is_none() {
            first = match &arg {
                Long(name) => Some(format!("--{name}")),
                Short(letter) => Some(format!("-{letter}")),
                Value(_) => None,
            };
        }
        match arg {
            Long(name) if http_flags::FLAGS.contains(&name) => {
                let name = name.to_string();
                http_only = http_only.or_else(|| (name != "http").then(|| format!("--{name}")));
                http_flags::once(&mut given, &name)?;
                http_flags::take(&mut options.http, &name, parser)?;
            }
            Long("manifest") => {
                given.once("--manifest", "the manifest")?;
                options.manifest = Some(PathBuf::from(parser.value()?))
            }
            Long("root") => options.roots.push(PathBuf::from(parser.value()?)),
            Long("include-hidden") => {
                given.once("--include-hidden", "hidden files")?;
                options.include_hidden = true
            }
            Long("max-resource-bytes") => {
                given.once("--max-resource-bytes", "the largest resource")?;
                options.max_resource_bytes =
                    http_flags::positive(parser, "--max-resource-bytes")? as u64
            }
            Long("max-message-bytes") => {
                given.once("--max-message-bytes", "the longest message")?;
                options.max_message_bytes = http_flags::positive(parser, "--max-message-bytes")?;
                options.http.max_body = options.max_message_bytes;
            }
            Long("page-size") => {
                given.once("--page-size", "the page size")?;
                options.page_size = Some(http_flags::positive(parser, "--page-size")?)
            }
            Long("log-level") => {
                given.once("--log-level", "the log level")?;
                let level: String = parser.value()?.string()?;
                if !["off", "error", "warn", "info", "debug", "trace"].contains(&level.as_str()) {
                    return Err(format!(
                        "--log-level must be off, error, warn, info, debug or trace, not {level:?}"
                    )
                    .into());
                }
                options.log_level = Some(level);
            }
            Long("log-file") => {
                given.once("--log-file", "the log file")?;
                options.log_file = Some(PathBuf::from(parser.value()?))
            }
            Short('q') => {
                given.once("-q", "the log level")?;
                options.log_level = Some("warn".into())
            }
            Long("quiet") => {
                given.once("--quiet", "the log level")?;
                options.log_level = Some("warn".into())
            }
            Short('h') | Long("help") => return Ok(Command::Help(help::full_help())),
            Short('V') | Long("version") => return Ok(Command::Version),
            Long(name) => return Err(help::unknown_option(name, &SERVE).into()),
            Value(word) => {
                let word = word.string()?;
                let Some(help) = help::command(&word) else {
                    return Err(help::unknown_command(&word).into());
                };
                // `help`'s mistakes point at the full help, which lists the commands.
                *command = if help.name == "help" { "" } else { help.name };
                if let Some(flag) = first {
                    return Err(misplaced(&flag, help).into());
                }
                return match help.name {
                    "validate" => validate(parser),
                    "check" => check(parser),
                    "replay" => replay(parser),
                    "proxy" => proxy(parser),
                    _ => help_topic(parser),
                };
            }
            Short(_) => return Err(arg.unexpected()),
        }
    }
    serving(options, http_only)
}

/// Serving with `options`; refused when a flag of HTTP's (`http_only`, the first) came
/// without `--http`, where it would do nothing.
fn serving(options: ServeOptions, http_only: Option<String>) -> Result<Command, lexopt::Error> {
    match http_only.filter(|_| options.http.listen.is_empty()) {
        Some(flag) => {
            Err(format!("{flag} is an option of serving HTTP: give --http ADDR too").into())
        }
        None => Ok(Command::Serve(options)),
    }
}

/// Why `flag`, given before the word naming `command`, is refused: it is serving's, or it
/// belongs after the command word.
fn misplaced(flag: &str, command: &Help) -> String {
    let name = command.name;
    if command.takes(flag.trim_start_matches('-')) {
        return format!("{flag} goes after the command: baremcp {name} {flag} ...");
    }
    format!("{flag} is an option of serving, not of {name} (serving takes no command)")
}

/// `baremcp help [COMMAND]`.
fn help_topic(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut topic = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help(HELP.text())),
            Long(name) => return Err(help::unknown_option(name, &HELP).into()),
            Value(word) if topic.is_none() => topic = Some(word.string()?),
            _ => return Err(arg.unexpected()),
        }
    }
    match topic {
        None => Ok(Command::Help(help::full_help())),
        Some(word) => match help::command(&word) {
            Some(command) => Ok(Command::Help(command.text())),
            None => Err(help::unknown_command(&word).into()),
        },
    }
}

fn check(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let (mut path, mut schema) = (None, false);
    let mut given = Given::default();
    // Read to the end even after --schema, so that nothing given with it goes unread.
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help(CHECK.text())),
            Long("schema") => {
                given.once("--schema", "the schema")?;
                schema = true
            }
            Long(name) => return Err(help::unknown_option(name, &CHECK).into()),
            Value(file) if path.is_none() => path = Some(PathBuf::from(file)),
            Value(file) => {
                return Err(format!("unexpected argument {file:?} (check takes one file)").into());
            }
            _ => return Err(arg.unexpected()),
        }
    }
    match (path, schema) {
        (None, true) => Ok(Command::ManifestSchema),
        (Some(_), true) => Err("--schema takes no MANIFEST.json".into()),
        (path, false) => {
            path.map(Command::Check).ok_or_else(|| "check needs a MANIFEST.json".into())
        }
    }
}

fn validate(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut jsonl = false;
    let mut paths = Vec::new();
    let mut given = Given::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("jsonl") => {
                given.once("--jsonl", "--jsonl")?;
                jsonl = true
            }
            Short('h') | Long("help") => return Ok(Command::Help(VALIDATE.text())),
            Long(name) => return Err(help::unknown_option(name, &VALIDATE).into()),
            Value(path) => paths.push(PathBuf::from(path)),
            _ => return Err(arg.unexpected()),
        }
    }
    if paths.is_empty() {
        return Err("validate needs a SCHEMA.json".into());
    }
    let schema = paths.remove(0);
    if jsonl && !paths.is_empty() {
        return Err("--jsonl reads instances from stdin: give no INSTANCE files".into());
    }
    Ok(Command::Validate { schema, instances: paths, jsonl })
}

/// Splits the rest of the command line at the first `--`: options before, a command after.
fn split_command(
    parser: &mut lexopt::Parser,
) -> Result<(lexopt::Parser, Vec<OsString>), lexopt::Error> {
    let rest: Vec<OsString> = parser.raw_args()?.collect();
    let split = rest.iter().position(|a| a == "--");
    let (before, after) = match split {
        Some(i) => (rest[..i].to_vec(), rest[i + 1..].to_vec()),
        None => (rest, Vec::new()),
    };
    Ok((lexopt::Parser::from_args(before), after))
}

fn replay(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let (mut parser, command) = split_command(parser)?;
    let mut options = ReplayOptions {
        files: Vec::new(),
        command,
        timeout: Duration::from_millis(5000),
        update: false,
        stderr: None,
        max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
    };
    let mut given = Given::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("timeout-ms") => {
                given.once("--timeout-ms", "the timeout")?;
                options.timeout =
                    Duration::from_millis(http_flags::positive(&mut parser, "--timeout-ms")? as u64)
            }
            Long("stderr") => {
                given.once("--stderr", "the server's stderr")?;
                options.stderr = Some(PathBuf::from(parser.value()?))
            }
            Long("update") => {
                given.once("--update", "--update")?;
                options.update = true
            }
            Long("max-message-bytes") => {
                given.once("--max-message-bytes", "the longest message")?;
                options.max_message_bytes =
                    http_flags::positive(&mut parser, "--max-message-bytes")?
            }
            Short('h') | Long("help") => return Ok(Command::Help(REPLAY.text())),
            Long(name) => return Err(help::unknown_option(name, &REPLAY).into()),
            Value(file) => options.files.push(PathBuf::from(file)),
            _ => return Err(arg.unexpected()),
        }
    }
    if options.files.is_empty() {
        return Err("replay needs at least one transcript FILE".into());
    }
    Ok(Command::Replay(options))
}

fn proxy(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let (mut parser, command) = split_command(parser)?;
    let mut options = ProxyOptions {
        command,
        max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        ..ProxyOptions::default()
    };
    let list = |value: OsString| -> Result<Vec<String>, lexopt::Error> {
        Ok(value
            .string()?
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect())
    };
    let mut given = Given::default();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("record") => {
                given.once("--record", "the recording")?;
                options.record = Some(PathBuf::from(parser.value()?))
            }
            Long("allow-tools") => {
                options.allow.get_or_insert_with(Vec::new).extend(list(parser.value()?)?)
            }
            Long("deny-tools") => options.deny.extend(list(parser.value()?)?),
            Long("max-message-bytes") => {
                given.once("--max-message-bytes", "the longest message")?;
                options.max_message_bytes =
                    http_flags::positive(&mut parser, "--max-message-bytes")?
            }
            Short('h') | Long("help") => return Ok(Command::Help(PROXY.text())),
            Long(name) => return Err(help::unknown_option(name, &PROXY).into()),
            Value(word) => {
                // `proxy cat`: the server command was meant, without its `--`.
                let mut command = vec![word.to_string_lossy().into_owned()];
                command.extend(parser.raw_args()?.map(|a| a.to_string_lossy().into_owned()));
                return Err(format!(
                    "unexpected argument {:?}: put -- before the server command \
                     (baremcp proxy [OPTIONS] -- {})",
                    command[0],
                    command.join(" ")
                )
                .into());
            }
            _ => return Err(arg.unexpected()),
        }
    }
    if options.command.is_empty() {
        return Err("proxy needs a server command after --".into());
    }
    Ok(Command::Proxy(options))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_flags() {
        assert_eq!(parse(Vec::<String>::new()).unwrap(), Command::Serve(ServeOptions::default()));
        let Command::Serve(options) =
            parse(["--page-size", "2", "--max-message-bytes=64", "--log-level", "debug"]).unwrap()
        else {
            panic!("not serve")
        };
        assert_eq!(options.page_size, Some(2));
        assert_eq!(options.max_message_bytes, 64);
        assert_eq!(options.log_level.as_deref(), Some("debug"));
        assert_eq!(parse(["--version"]).unwrap(), Command::Version);
        let Command::Serve(options) =
            parse(["--root", "a", "--root=b", "--include-hidden", "--max-resource-bytes", "9"])
                .unwrap()
        else {
            panic!("not serve")
        };
        assert_eq!(options.roots, [PathBuf::from("a"), PathBuf::from("b")]);
        assert!(options.include_hidden);
        assert_eq!(options.max_resource_bytes, 9);
        assert_eq!(
            parse(["validate", "--jsonl", "s.json"]).unwrap(),
            Command::Validate { schema: "s.json".into(), instances: vec![], jsonl: true }
        );
        let Command::Replay(replay) =
            parse(["replay", "--timeout-ms", "50", "a.txt", "b.txt", "--", "srv", "--flag"])
                .unwrap()
        else {
            panic!("not replay")
        };
        assert_eq!(replay.files, [PathBuf::from("a.txt"), PathBuf::from("b.txt")]);
        assert_eq!(replay.command, [OsString::from("srv"), OsString::from("--flag")]);
        assert_eq!(replay.timeout, Duration::from_millis(50));
        assert_eq!(replay.max_message_bytes, DEFAULT_MAX_MESSAGE_BYTES);
        let Command::Proxy(proxy) = parse([
            "proxy",
            "--deny-tools",
            "a, b",
            "--allow-tools=c",
            "--max-message-bytes",
            "9",
            "--",
            "srv",
        ])
        .unwrap() else {
            panic!("not proxy")
        };
        assert_eq!(
            (proxy.deny, proxy.allow),
            (vec!["a".to_string(), "b".to_string()], Some(vec!["c".to_string()]))
        );
        assert_eq!(proxy.max_message_bytes, 9);
        for bad in [&["replay"][..], &["proxy", "--record", "x"], &["replay", "--bogus", "f"]] {
            assert!(parse(bad.iter().copied()).is_err(), "{bad:?}");
        }
        for bad in [
            &["--bogus"][..],
            &["--page-size"],
            &["--page-size", "0"],
            &["--page-size", "x"],
            &["--log-level", "loud"],
            &["extra"],
            &["validate"],
        ] {
            assert!(parse(bad.iter().copied()).is_err(), "{bad:?}");
        }
        // The error names the option and what it takes, and which help to read.
        let message = |args: &[&str]| parse(args.iter().copied()).err().unwrap().to_string();
        assert_eq!(
            message(&["--page-size", "0"]),
            "--page-size needs a whole number of at least 1, not \"0\"\ntry 'baremcp --help'"
        );
        assert_eq!(
            message(&["replay", "--timeout-ms", "x", "f"]),
            "--timeout-ms needs a whole number of at least 1, not \"x\"\ntry 'baremcp replay --help'"
        );
        assert_eq!(
            message(&["--log-level", "loud"]),
            "--log-level must be off, error, warn, info, debug or trace, not \"loud\"\ntry 'baremcp --help'"
        );
        assert_eq!(message(&["check"]), "check needs a MANIFEST.json\ntry 'baremcp check --help'");
    }

    #[test]
    fn every_command_has_its_own_help() {
        let help = |args: &[&str]| match parse(args.iter().copied()) {
            Ok(Command::Help(text)) => text,
            other => panic!("{args:?}: {other:?}"),
        };
        let full = help(&["--help"]);
        assert_eq!(help(&["-h"]), full);
        assert_eq!(help(&["help"]), full);
        for command in help::COMMANDS {
            let name = command.name;
            assert_eq!(help(&[name, "--help"]), command.text());
            assert_eq!(help(&["help", name]), command.text());
            assert!(command.text().starts_with(&format!("usage: baremcp {name}")));
        }
        // Help wins even where the command's own arguments are missing or come later.
        assert_eq!(help(&["replay", "--help"]), REPLAY.text());
        assert_eq!(help(&["proxy", "-h", "--", "srv"]), PROXY.text());
        assert_eq!(parse(["check", "--schema"]).unwrap(), Command::ManifestSchema);
        // `replay --help` says what --stderr does, on the option's own line.
        let replay = REPLAY.text();
        let stderr = replay.lines().find(|l| l.trim_start().starts_with("--stderr FILE"));
        assert!(stderr.is_some_and(|l| l.contains("server's stderr")), "{replay}");
    }

    /// The help lists no option the parser would refuse, and the HTTP options it lists are
    /// the ones `http_flags` reads.
    #[test]
    fn every_option_the_help_lists_is_read() {
        for command in [&SERVE].into_iter().chain(help::COMMANDS) {
            for long in command.longs() {
                let value = match long {
                    "http" => "127.0.0.1:1",
                    "http-path" => "/x",
                    "log-level" => "info",
                    _ => "1",
                };
                let args = [command.name, &format!("--{long}"), value, "file"];
                let args = args.iter().filter(|a| !a.is_empty());
                if let Err(e) = parse(args) {
                    let message = e.to_string();
                    assert!(
                        !message.contains("invalid option") && !message.contains("is an option of"),
                        "{} --{long}: {message}",
                        command.called()
                    );
                }
            }
        }
        let listed: Vec<&str> = SERVE.groups[1].1.iter().map(|o| o.long).collect();
        assert_eq!(listed, http_flags::FLAGS, "the help's http options are http_flags::FLAGS");
    }

    #[test]
    fn mistakes_are_named_with_what_was_meant() {
        let message = |args: &[&str]| parse(args.iter().copied()).err().unwrap().to_string();
        let cases: [(&[&str], &str); 21] = [
            (&["--roots", "x"], "invalid option '--roots' (did you mean '--root'?)"),
            (
                &["check", "m.json", "--schma"],
                "invalid option '--schma' (did you mean '--schema'?)",
            ),
            (&["chekc", "m.json"], "unexpected argument \"chekc\" (did you mean 'check'?)"),
            (&["help", "prxy"], "unexpected argument \"prxy\" (did you mean 'proxy'?)"),
            (
                &["stray"],
                "unexpected argument \"stray\" (commands: validate, check, replay, proxy, help)",
            ),
            (&["--colour"], "invalid option '--colour'"),
            // A flag of another command is named as that command's, never ignored.
            (
                &["--root", "x", "check", "m.json"],
                "--root is an option of serving, not of check (serving takes no command)",
            ),
            (
                &["-q", "validate", "s.json"],
                "-q is an option of serving, not of validate (serving takes no command)",
            ),
            (&["check", "m.json", "--root", "x"], "--root is an option of serving, not of check"),
            (&["--record", "f"], "--record is an option of proxy, not of serving"),
            (
                &["replay", "--deny-tools", "x", "f"],
                "--deny-tools is an option of proxy, not of replay",
            ),
            (
                &["--max-message-bytes", "9", "replay", "f"],
                "--max-message-bytes goes after the command: baremcp replay --max-message-bytes ...",
            ),
            (
                &["proxy", "cat", "-n"],
                "unexpected argument \"cat\": put -- before the server command (baremcp proxy [OPTIONS] -- cat -n)",
            ),
            (
                &["check", "a.json", "b.json"],
                "unexpected argument \"b.json\" (check takes one file)",
            ),
            // One value each: a second would silently win over the first.
            (
                &["proxy", "--record", "a", "--record=b", "--", "cat"],
                "--record given twice: it is not repeatable",
            ),
            (
                &["--page-size", "1", "--page-size", "2"],
                "--page-size given twice: it is not repeatable",
            ),
            (
                &["-q", "--log-level", "debug"],
                "-q and --log-level both set the log level: give one",
            ),
            // --schema reads what follows it too.
            (&["check", "--schema", "--bogus"], "invalid option '--bogus'"),
            (&["check", "--schema", "m.json"], "--schema takes no MANIFEST.json"),
            (
                &["replay", "--update", "f", "--update"],
                "--update given twice: it is not repeatable",
            ),
            (
                &["--jwt-audience", "a", "--root", "."],
                "--jwt-audience is an option of serving HTTP: give --http ADDR too",
            ),
        ];
        for (args, says) in cases {
            let command = parse(args.iter().copied()).err().unwrap().command;
            let help =
                if command.is_empty() { "baremcp".into() } else { format!("baremcp {command}") };
            assert_eq!(message(args), format!("{says}\ntry '{help} --help'"), "{args:?}");
        }
        assert!(
            matches!(parse(["-q"]), Ok(Command::Serve(o)) if o.log_level.as_deref() == Some("warn"))
        );
    }
}
