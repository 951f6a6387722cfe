//! The `baremcp` binary: argv → command, a logger on stderr, locked stdio, exit code.

#![deny(clippy::print_stdout)]

use std::io::{self, Write};
use std::process::ExitCode;

// `pub(crate)`: the integration tests include this file as a module and use these.
pub(crate) mod catalog;
pub(crate) mod cli;
pub(crate) mod command;
pub(crate) mod manifest;
pub(crate) mod proxy;
pub(crate) mod replay;
pub(crate) mod transcript;
pub(crate) mod validate;

use cli::{Command, USAGE};

fn main() -> ExitCode {
    let command = match cli::parse(std::env::args_os().skip(1)) {
        Ok(command) => command,
        Err(e) => {
            eprintln!("baremcp: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match command {
        Command::Help => {
            println_quiet(USAGE);
            ExitCode::SUCCESS
        }
        Command::Version => {
            println_quiet(&format!("baremcp {}", env!("CARGO_PKG_VERSION")));
            ExitCode::SUCCESS
        }
        Command::Validate { schema, instances, jsonl } => {
            init_logger(None);
            let code = validate::run(&schema, &instances, jsonl, &mut io::stdout().lock(), &mut io::stderr());
            match code {
                Ok(code) => ExitCode::from(code as u8),
                Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("baremcp: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Check(path) => match manifest::load(&path) {
            Ok(manifest) => {
                let summary = manifest.summary();
                match manifest.into_server() {
                    Ok(_) => {
                        println_quiet(&format!("{}: ok\n{}", path.display(), summary.trim_end()));
                        ExitCode::SUCCESS
                    }
                    Err(e) => {
                        eprintln!("{}: {e}", path.display());
                        ExitCode::from(2)
                    }
                }
            }
            Err(problems) => {
                eprintln!("{}", cli::manifest_problems(&path, &problems));
                ExitCode::from(2)
            }
        },
        Command::Replay(options) => {
            init_logger(None);
            exit_code(replay::run(&options, &mut io::stdout().lock()))
        }
        Command::Proxy(options) => {
            init_logger(None);
            exit_code(proxy::run(options))
        }
        Command::Serve(options) => {
            init_logger(options.log_level.as_deref());
            match options.build() {
                Ok(server) => serve(&server),
                Err(e) => {
                    eprintln!("baremcp: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}

/// A command's exit code, or 2 with a message when it could not run.
fn exit_code(result: io::Result<i32>) -> ExitCode {
    match result {
        Ok(code) => ExitCode::from(code.clamp(0, 255) as u8),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("baremcp: {e}");
            ExitCode::from(2)
        }
    }
}

/// Serves on stdio until the client closes its end.
fn serve(server: &baremcp::Server) -> ExitCode {
    match server.serve_stdio() {
        Ok(()) => ExitCode::SUCCESS,
        // The client closed our stdout: it is gone, and so are we, quietly.
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("i/o error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr: `--log-level` if given, else `RUST_LOG`, else warnings and errors. A panic is
/// logged as an error line rather than printed by the default hook.
fn init_logger(level: Option<&str>) {
    let mut builder = env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("warn"));
    if let Some(level) = level {
        builder.parse_filters(level);
    }
    builder.target(env_logger::Target::Stderr).init();
    std::panic::set_hook(Box::new(|info| log::error!("{info}")));
}

/// Prints help or version text; a closed stdout is not worth a panic.
fn println_quiet(text: &str) {
    let _ = writeln!(io::stdout().lock(), "{text}");
}
