//! The `baremcp` binary: argv → command, a logger on stderr, locked stdio, exit code.

#![deny(clippy::print_stdout)]

use std::io::{self, IsTerminal, Write};
use std::process::ExitCode;

// `pub(crate)`: the integration tests include this file as a module and use these.
pub(crate) mod catalog;
pub(crate) mod channel;
pub(crate) mod cli;
pub(crate) mod command;
pub(crate) mod decimal;
pub(crate) mod help;
mod http_flags;
pub(crate) mod logging;
pub(crate) mod manifest;
pub(crate) mod process_group;
pub(crate) mod proxy;
pub(crate) mod recording;
pub(crate) mod replay;
pub(crate) mod rewrite;
pub(crate) mod transcript;
pub(crate) mod upstream;
pub(crate) mod upstream_feed;
pub(crate) mod validate;
pub(crate) mod wait;

use cli::Command;

const LOG: &str = "baremcp::stdio";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        // Whoever read our stdout is gone (a closed pipe, `| head`): so are we, quietly (a
        // verdict that could not all be written fails: see `verdict`).
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("baremcp: {e}");
            ExitCode::from(2)
        }
    }
}

/// The exit code of a command whose output is a verdict (`validate`, `replay`): one whose
/// report could not all be written (its reader gone, as `| head` leaves it) has not shown
/// that everything passed, so it fails, quietly.
fn verdict(code: io::Result<i32>) -> io::Result<i32> {
    match code {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(1),
        code => code,
    }
}

/// Runs the command argv names. Problems it can explain (bad flags, a bad manifest) are
/// reported here and end with exit code 2; an i/o error is left to `main`.
fn run() -> io::Result<ExitCode> {
    let command = match cli::parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(e) => return failed(format!("baremcp: {e}")),
    };
    let code = match command {
        Command::Help(text) => {
            writeln!(io::stdout().lock(), "{text}")?;
            0
        }
        Command::Version => {
            let versions: Vec<&str> =
                baremcp::MODERN_VERSIONS.into_iter().chain(baremcp::LEGACY_VERSIONS).collect();
            writeln!(
                io::stdout().lock(),
                "baremcp {}\nprotocol versions: {}",
                env!("CARGO_PKG_VERSION"),
                versions.join(", ")
            )?;
            0
        }
        Command::ManifestSchema => {
            writeln!(io::stdout().lock(), "{}", manifest::SCHEMA.trim_end())?;
            0
        }
        Command::Validate { schema, instances, jsonl } => {
            init_logger(None, None)?;
            let (out, err) = (&mut io::stdout().lock(), &mut io::stderr());
            verdict(validate::run(&schema, &instances, jsonl, out, err))?
        }
        Command::Check(path) => {
            let manifest = match manifest::load(&path) {
                Ok(manifest) => manifest,
                Err(e) => return failed(e.describe(&path)),
            };
            let printable = manifest::printable;
            for w in manifest.warnings().iter().chain(manifest.schema_warnings()) {
                let line = format!("{}: warning: {}: {}", path.display(), w.pointer, w.message);
                eprintln!("{}", printable(&line));
            }
            let summary = manifest.summary();
            if let Err(e) = manifest.into_server() {
                return failed(printable(&format!("{}: {e}", path.display())));
            }
            let ok = printable(&format!("{}: ok", path.display()));
            writeln!(io::stdout().lock(), "{ok}\n{summary}")?;
            0
        }
        Command::Replay(options) => {
            init_logger(None, None)?;
            verdict(replay::run(&options, &mut io::stdout().lock()))?
        }
        Command::Proxy(options) => {
            init_logger(None, None)?;
            proxy::run(options)?
        }
        Command::Serve(options) => {
            init_logger(options.log_level.as_deref(), options.log_file.as_deref())?;
            // An exit while a manifest's command runs ends its group too.
            process_group::end_commands_at_exit();
            match options.build() {
                // Until SIGTERM or SIGINT; a listener that cannot start is an error (exit 2).
                Ok(server) if !options.http.listen.is_empty() => {
                    server.serve_http(&options.http)?
                }
                Ok(server) => {
                    // Someone typing is not a client: say what the server waits for. A client
                    // that starts baremcp gives it a pipe, and hears nothing of this.
                    if io::stdin().is_terminal() {
                        log::info!(
                            target: LOG,
                            "waiting for JSON-RPC messages from an MCP client on stdin; \
                             Ctrl-D ends (see 'baremcp --help')"
                        );
                    }
                    // A stop signal while a manifest's command runs ends its group too.
                    process_group::end_commands_on_stop();
                    server.serve_stdio()?
                }
                Err(e) => return failed(format!("baremcp: {e}")),
            }
            0
        }
    };
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

/// An i/o error that names the file it happened to, so no message is only "No such file".
pub(crate) fn named(path: &std::path::Path, error: io::Error) -> io::Error {
    io::Error::new(error.kind(), format!("{}: {error}", path.display()))
}

/// Exit code 2, after saying why on stderr.
fn failed(why: String) -> io::Result<ExitCode> {
    eprintln!("{why}");
    Ok(ExitCode::from(2))
}

/// Logs go to stderr, or `--log-file`: `--log-level` if given, else `RUST_LOG`, else warnings,
/// errors and the start-up lines (`logging.rs`). A panic is logged as an error line rather
/// than printed by the default hook.
pub(crate) fn init_logger(level: Option<&str>, file: Option<&std::path::Path>) -> io::Result<()> {
    logging::init(level, file)?;
    logging::log_panics();
    Ok(())
}
