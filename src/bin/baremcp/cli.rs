//! The binary's command line: argv → [`Command`], with the usage text. Parsing lives in the
//! library so the transcript tests build their server from the same flags the binary reads.

use std::ffi::OsString;
use std::path::PathBuf;

use lexopt::prelude::*;

use std::time::Duration;

use super::http_flags;
use super::proxy::ProxyOptions;
use super::replay::ReplayOptions;
use baremcp::{DEFAULT_MAX_MESSAGE_BYTES, Server};
use baremcp::{FileRoot, HttpOptions};

/// One command's help: its usage lines and what it does. `baremcp --help` prints them all;
/// `baremcp COMMAND --help` only its own.
pub struct Help {
    pub name: &'static str,
    pub usage: &'static str,
    pub about: &'static str,
}

pub const SERVE: Help = Help {
    name: "",
    usage: "\
usage: baremcp [--manifest FILE] [--root DIR]... [--include-hidden] [--max-resource-bytes N]
               [--max-message-bytes N] [--page-size N] [--log-level LEVEL] [--log-file FILE]
               [--http ADDR ...]",
    about: "\
Serves MCP over stdio (newline-delimited JSON-RPC on stdin/stdout; logs on stderr), or
over Streamable HTTP with --http.

options:
  --manifest FILE        serve the tools, resources and prompts FILE declares (instead of
                         the built-in catalog)
  --root DIR             serve every regular file under DIR as a resource (repeatable)
  --include-hidden       also serve dot-files and files in dot-directories
  --max-resource-bytes N largest file a resources/read returns (default 8388608)
  --max-message-bytes N  longest accepted input line in bytes (default 16777216)
  --page-size N          items per page of a list result (default: all in one page)
  --log-level LEVEL      off, error, warn, info, debug or trace (default: RUST_LOG, else warn)
  --log-file FILE        append log lines to FILE instead of stderr
  -h, --help             print this help (COMMAND --help: that command's)
  -V, --version          print the version and the MCP protocol versions spoken

http (serve Streamable HTTP instead of stdio):
  --http ADDR                listen on ADDR, e.g. 127.0.0.1:8080, [::1]:8080 or
                             unix:/run/mcp.sock (repeatable)
  --http-path PATH           the endpoint's path (default /mcp)
  --auth-token-file FILE     require a bearer token listed in FILE (one a line; re-read
                             when it changes, or on SIGHUP)
  --jwt-secret-file FILE     also accept HS256 JWTs signed with FILE's contents
  --jwt-audience AUD         ... whose aud includes AUD;  --jwt-issuer ISS: whose iss is ISS
  --allow-unauthenticated    allow a non-loopback ADDR without authentication
  --allow-origin ORIGIN      allow browser pages from ORIGIN (and its host) (repeatable)
  --allow-host HOST          allow Host: HOST[:PORT] besides loopback names; * for any
  --resource-metadata-url URL  serve RFC 9728 metadata at URL's path, name it in 401s
  --authorization-server URL   listed in that metadata (repeatable)
  --session-idle-secs N      legacy sessions end after N idle seconds (default 1800)
  --max-sessions N           legacy sessions kept at most (default 1000)
  --max-connections N        open connections at most; more get 503 (default 128)
  --max-connections-per-peer N  ... from one address (IPv6: one /64); more get 429
                             (default 32; loopback and unix-socket peers are not counted)
  --max-streams-per-peer N   long-lived streams from one address; more get 429 (default 8)
  --ask-timeout-secs N       a legacy handler waits N s at most for its client's answer to
                             sampling, elicitation or roots (default 300)
  --sse-keepalive-secs N     comment on a quiet event stream every N seconds (default 15)
  --request-timeout-secs N   a request's head and body must arrive within N s (default 30)
  --idle-timeout-secs N      close a keep-alive connection after N idle seconds (default 15)",
};

pub const VALIDATE: Help = Help {
    name: "validate",
    usage: "usage: baremcp validate [--jsonl] SCHEMA.json [INSTANCE.json ...]",
    about: "\
checks each INSTANCE.json against SCHEMA.json; with --jsonl, reads one instance per
line from stdin and prints one {\"valid\", \"errors\"} line per instance.
exit 0: all valid, 1: some invalid, 2: a file unreadable or not JSON, or the schema malformed",
};

pub const CHECK: Help = Help {
    name: "check",
    usage: "usage: baremcp check MANIFEST.json | --schema",
    about: "\
checks a manifest completely, prints what it serves and warns about what will likely not
run as meant; exit 0 when it loads, 2 when not. --schema prints the manifest's JSON Schema
(for editors: \"$schema\" in a manifest is accepted)",
};

pub const REPLAY: Help = Help {
    name: "replay",
    usage: "\
usage: baremcp replay [--timeout-ms N] [--stderr FILE] [--update] [--max-message-bytes N]
                      FILE... [-- SERVER_CMD ARGS...]",
    about: "\
runs each transcript against a fresh server (the built-in one, or SERVER_CMD) and compares
what it writes, as JSON, with the <-- lines; --timeout-ms (default 5000) bounds each wait;
--update rewrites the <-- lines from what the server wrote; a server line longer than
--max-message-bytes (default 16777216) fails the file. exit 0: all passed",
};

pub const PROXY: Help = Help {
    name: "proxy",
    usage: "\
usage: baremcp proxy [--record FILE] [--allow-tools a,b] [--deny-tools c,d] [--max-message-bytes N]
                     -- SERVER_CMD ARGS...",
    about: "\
forwards a client (stdin/stdout) to SERVER_CMD line by line; --record writes the session
as a transcript; --allow-tools / --deny-tools hide tools and refuse calls to them; a line
longer than --max-message-bytes (default 16777216) is dropped as it streams in and the
client gets an error instead",
};

const COMMANDS: [&Help; 4] = [&VALIDATE, &CHECK, &REPLAY, &PROXY];

impl Help {
    /// This command's usage and description.
    pub fn text(&self) -> String {
        format!("{}\n\n{}", self.usage, self.about)
    }
}

/// `baremcp --help`: every usage line, then serving's options, then each command's text.
pub fn full_help() -> String {
    let mut out = SERVE.usage.to_string();
    for help in COMMANDS {
        // "usage: baremcp x" lines up under "usage: baremcp" as "       baremcp x".
        out.push_str(&format!("\n{}", help.usage.replacen("usage: ", "       ", 1)));
    }
    out.push_str("\n       baremcp --help | --version\n\n");
    out.push_str(SERVE.about);
    for help in COMMANDS {
        let about = help.about.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n");
        out.push_str(&format!("\n\n{}:\n{about}", help.name));
    }
    out
}

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
                let manifest = super::manifest::load(path)
                    .map_err(|problems| manifest_problems(path, &problems))?;
                for w in manifest.warnings() {
                    log::warn!("{}: {}: {}", path.display(), w.pointer, w.message);
                }
                manifest.into_server().map_err(|e| format!("{}: {e}", path.display()))?
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
            server.add_root(root).map_err(|e| format!("--root {}: {e}", dir.display()))?;
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
    while let Some(arg) = parser.next()? {
        match arg {
            Long(name) if http_flags::FLAGS.contains(&name) => {
                let name = name.to_string();
                http_flags::take(&mut options.http, &name, parser)?;
            }
            Long("manifest") => options.manifest = Some(PathBuf::from(parser.value()?)),
            Long("root") => options.roots.push(PathBuf::from(parser.value()?)),
            Long("include-hidden") => options.include_hidden = true,
            Long("max-resource-bytes") => {
                options.max_resource_bytes =
                    http_flags::positive(parser, "--max-resource-bytes")? as u64
            }
            Long("max-message-bytes") => {
                options.max_message_bytes = http_flags::positive(parser, "--max-message-bytes")?;
                options.http.max_body = options.max_message_bytes;
            }
            Long("page-size") => {
                options.page_size = Some(http_flags::positive(parser, "--page-size")?)
            }
            Long("log-level") => {
                let level: String = parser.value()?.string()?;
                if !["off", "error", "warn", "info", "debug", "trace"].contains(&level.as_str()) {
                    return Err(format!(
                        "--log-level must be off, error, warn, info, debug or trace, not {level:?}"
                    )
                    .into());
                }
                options.log_level = Some(level);
            }
            Long("log-file") => options.log_file = Some(PathBuf::from(parser.value()?)),
            Short('h') | Long("help") => return Ok(Command::Help(full_help())),
            Short('V') | Long("version") => return Ok(Command::Version),
            Value(word) => {
                let Some(help) = COMMANDS.into_iter().find(|h| word == h.name) else {
                    return Err(Value(word).unexpected());
                };
                *command = help.name;
                return match help.name {
                    "validate" => validate(parser),
                    "check" => check(parser),
                    "replay" => replay(parser),
                    _ => proxy(parser),
                };
            }
            _ => return Err(arg.unexpected()),
        }
    }
    Ok(Command::Serve(options))
}

fn check(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut path = None;
    while let Some(arg) = parser.next()? {
        match arg {
            Short('h') | Long("help") => return Ok(Command::Help(CHECK.text())),
            Long("schema") if path.is_none() => return Ok(Command::ManifestSchema),
            Value(file) if path.is_none() => path = Some(PathBuf::from(file)),
            _ => return Err(arg.unexpected()),
        }
    }
    path.map(Command::Check).ok_or_else(|| "check needs a MANIFEST.json".into())
}

fn validate(parser: &mut lexopt::Parser) -> Result<Command, lexopt::Error> {
    let mut jsonl = false;
    let mut paths = Vec::new();
    while let Some(arg) = parser.next()? {
        match arg {
            Long("jsonl") => jsonl = true,
            Short('h') | Long("help") => return Ok(Command::Help(VALIDATE.text())),
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

/// Every problem of a manifest, one per line, with its JSON Pointer.
pub fn manifest_problems(path: &std::path::Path, problems: &[baremcp::schema::Problem]) -> String {
    let lines: Vec<String> = problems.iter().map(|p| format!("{}: {p}", path.display())).collect();
    lines.join("\n")
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
    while let Some(arg) = parser.next()? {
        match arg {
            Long("timeout-ms") => {
                options.timeout =
                    Duration::from_millis(http_flags::positive(&mut parser, "--timeout-ms")? as u64)
            }
            Long("stderr") => options.stderr = Some(PathBuf::from(parser.value()?)),
            Long("update") => options.update = true,
            Long("max-message-bytes") => {
                options.max_message_bytes =
                    http_flags::positive(&mut parser, "--max-message-bytes")?
            }
            Short('h') | Long("help") => return Ok(Command::Help(REPLAY.text())),
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
    while let Some(arg) = parser.next()? {
        match arg {
            Long("record") => options.record = Some(PathBuf::from(parser.value()?)),
            Long("allow-tools") => {
                options.allow.get_or_insert_with(Vec::new).extend(list(parser.value()?)?)
            }
            Long("deny-tools") => options.deny.extend(list(parser.value()?)?),
            Long("max-message-bytes") => {
                options.max_message_bytes =
                    http_flags::positive(&mut parser, "--max-message-bytes")?
            }
            Short('h') | Long("help") => return Ok(Command::Help(PROXY.text())),
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
        assert_eq!(
            message(&["check", "a.json", "b.json"]),
            "unexpected argument \"b.json\"\ntry 'baremcp check --help'"
        );
    }

    #[test]
    fn every_command_has_its_own_help() {
        let help = |args: &[&str]| match parse(args.iter().copied()) {
            Ok(Command::Help(text)) => text,
            other => panic!("{args:?}: {other:?}"),
        };
        let full = help(&["--help"]);
        assert_eq!(help(&["-h"]), full);
        for (name, text) in [
            ("validate", VALIDATE.text()),
            ("check", CHECK.text()),
            ("replay", REPLAY.text()),
            ("proxy", PROXY.text()),
        ] {
            assert_eq!(help(&[name, "--help"]), text);
            assert!(text.starts_with(&format!("usage: baremcp {name} ")), "{text}");
            // The full help holds each command's usage line and description.
            assert!(
                full.contains(&format!("       baremcp {name} ")),
                "{name} missing from:\n{full}"
            );
            assert!(full.contains(&format!("\n\n{name}:\n  ")), "{name} missing from:\n{full}");
        }
        // Help wins even where the command's own arguments are missing or come later.
        assert_eq!(help(&["replay", "--help"]), REPLAY.text());
        assert_eq!(help(&["proxy", "-h", "--", "srv"]), PROXY.text());
        assert_eq!(parse(["check", "--schema"]).unwrap(), Command::ManifestSchema);
        assert!(full.lines().all(|l| l.len() <= 100), "{full}");
    }
}
