//! The binary's logger: `env_logger` filters (`RUST_LOG`, or `--log-level`), one line per
//! record with an RFC 3339 UTC timestamp, written to stderr or to `--log-file`.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;
use std::time::SystemTime;

use baremcp::__private::rfc3339;

/// The target a panic is logged under (docs/cli.md, Logging): a filter can name it alone, as
/// it names every other line the server writes.
const LOG: &str = "baremcp::panic";

/// Log targets whose lines say what the server is doing as it starts: where HTTP is served
/// (`baremcp::http`, the library's; not its sub-targets, which log every request) and that
/// stdio waits for a client (`baremcp::stdio`).
const STARTING: &str = "baremcp::http=info,baremcp::http::=warn,baremcp::stdio=info";

/// Starts logging: `level` (a `--log-level` value) wins over `RUST_LOG`; warnings, errors
/// and the start-up lines otherwise. Records go to `file` (appended to) when given, else to
/// stderr.
pub fn init(level: Option<&str>, file: Option<&Path>) -> io::Result<()> {
    let mut builder = env_logger::Builder::new();
    match (level, std::env::var("RUST_LOG")) {
        (Some(level), _) => builder.parse_filters(level),
        (None, Ok(filters)) => builder.parse_filters(&filters),
        (None, Err(_)) => builder.parse_filters(&format!("warn,{STARTING}")),
    };
    if let Some(path) = file {
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(|e| super::named(path, e))?;
        builder.target(env_logger::Target::Pipe(Box::new(log)));
    }
    builder.format(|out, record| {
        writeln!(
            out,
            "{} {:<5} {}: {}",
            rfc3339(SystemTime::now()),
            record.level(),
            record.target(),
            record.args()
        )
    });
    // A second init (tests, an embedding program) keeps the first logger.
    let _ = builder.try_init();
    Ok(())
}

/// Logs a panic (a handler's: the server catches it and serves on) as an error line under
/// [`LOG`], rather than letting the default hook print it past the logger and its filters.
/// One line, escaped: a handler's message may hold a client's text, which must not write a
/// log line of its own.
pub fn log_panics() {
    let hook = |info: &std::panic::PanicHookInfo| {
        log::error!(target: LOG, "{}", super::manifest::printable(&info.to_string()));
    };
    std::panic::set_hook(Box::new(hook));
}
