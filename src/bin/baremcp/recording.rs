//! The file `baremcp proxy --record` writes: created, with its header, before the upstream
//! starts; then one transcript line at a time, each written whole. The header names the
//! command as a POSIX shell reads it back, and how to replay the recording. A write that
//! fails stops the recording, cut back to its last whole line, and says so naming the file.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The proxy's log target: the recording is part of it.
const LOG: &str = "baremcp::proxy";

/// An open recording; once a write has failed, it writes nothing more.
pub struct Recording {
    path: PathBuf,
    /// `None` once a write failed.
    file: Option<File>,
    /// The length of the whole lines written: a failed write is cut back to it.
    whole: u64,
}

impl Recording {
    /// Creates `path` and writes the header: the proxy's `flags` (those that change what the
    /// client sees) and the upstream `command`. An error names the file, as `PATH: why`.
    pub fn create(path: &Path, flags: &[OsString], command: &[OsString]) -> io::Result<Recording> {
        let file = File::create(path).map_err(|e| super::named(path, e))?;
        let mut recording = Recording { path: path.to_owned(), file: Some(file), whole: 0 };
        for line in header(path, flags, command) {
            recording.write(&line).map_err(|e| super::named(path, e))?;
        }
        Ok(recording)
    }

    /// Appends one transcript line. A failure is said once, and the recording stops there.
    pub fn line(&mut self, line: &str) {
        if let Err(e) = self.write(line) {
            log::error!(
                target: LOG,
                "cannot write the recording {}: {e}; recording stops",
                self.path.display()
            );
        }
    }

    /// Whether the recording stopped before the session ended.
    pub fn cut_short(&self) -> bool {
        self.file.is_none()
    }

    /// Writes `line` and its newline with one call, so each line reaches the file as it
    /// happens. On failure, the part of it that was written is cut off (a replay would send
    /// a cut-off message) and the file is closed.
    fn write(&mut self, line: &str) -> io::Result<()> {
        let Some(file) = &mut self.file else { return Ok(()) };
        let bytes = format!("{line}\n");
        match file.write_all(bytes.as_bytes()) {
            Ok(()) => {
                self.whole += bytes.len() as u64;
                Ok(())
            }
            Err(e) => {
                let _ = file.set_len(self.whole);
                self.file = None;
                Err(e)
            }
        }
    }
}

/// The header's comment lines. The `# Replay:` line is written only when the whole command
/// fits on one line in `'…'` quotes; the first line shows any argument with `$'…'` escapes.
fn header(path: &Path, flags: &[OsString], command: &[OsString]) -> Vec<String> {
    let shown = |args: &[OsString]| -> String {
        let words = args.iter().map(|a| shell_word(a).unwrap_or_else(|| escaped_word(a)));
        words.collect::<Vec<_>>().join(" ")
    };
    let proxy = if flags.is_empty() { String::new() } else { format!(" {}", shown(flags)) };
    let mut lines =
        vec![format!("# Recorded by baremcp proxy{proxy} in front of: {}", shown(command))];
    // A recording made through filters holds what the client saw through them: it replays
    // through the same proxy.
    let through: Vec<OsString> = match flags {
        [] => Vec::new(),
        _ => [OsString::from("baremcp"), "proxy".into()]
            .into_iter()
            .chain(flags.iter().cloned())
            .chain([OsString::from("--")])
            .collect(),
    };
    // A file named like an option would be read as one: `./-r.txt`.
    let path = match path.as_os_str().as_encoded_bytes().starts_with(b"-") {
        true => Path::new(".").join(path),
        false => path.to_owned(),
    };
    let replay: Option<Vec<String>> = [path.as_os_str()]
        .into_iter()
        .chain(["--".as_ref()])
        .chain(through.iter().map(OsString::as_os_str))
        .chain(command.iter().map(OsString::as_os_str))
        .map(shell_word)
        .collect();
    lines.push(match replay {
        Some(words) => format!("# Replay: baremcp replay {}", words.join(" ")),
        None => "# No replay command line: the command or the file name holds a control \
                 character or bytes that are not UTF-8, which '…' quotes cannot show on one line"
            .into(),
    });
    lines
}

/// `arg` as a POSIX shell reads it back: as it is when made of safe characters, else in
/// single quotes (a quote in it written `'\''`). `None` when it holds a control character
/// or bytes that are not UTF-8, which single quotes cannot show on one line.
fn shell_word(arg: &OsStr) -> Option<String> {
    let text = arg.to_str().filter(|text| !text.chars().any(char::is_control))?;
    let safe = |c: char| c.is_ascii_alphanumeric() || "_@%+=:,./-".contains(c);
    Some(match text {
        _ if !text.is_empty() && text.chars().all(safe) => text.to_owned(),
        _ => format!("'{}'", text.replace('\'', r"'\''")),
    })
}

/// `arg` in `$'…'` quotes (POSIX.1-2024, bash, zsh, ksh), every byte on one line: a control
/// character or a byte that is not UTF-8 as `\xHH`, a quote or backslash escaped.
fn escaped_word(arg: &OsStr) -> String {
    let mut word = String::from("$'");
    for chunk in arg.as_encoded_bytes().utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\'' | '\\' => word.extend(['\\', c]),
                c if c.is_control() => {
                    let mut utf8 = [0; 4];
                    for byte in c.encode_utf8(&mut utf8).bytes() {
                        word.push_str(&format!("\\x{byte:02x}"));
                    }
                }
                c => word.push(c),
            }
        }
        for byte in chunk.invalid() {
            word.push_str(&format!("\\x{byte:02x}"));
        }
    }
    word.push('\'');
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_named_like_an_option_is_replayed_as_a_file() {
        let lines = header(Path::new("-r.txt"), &[], &["cat".into()]);
        assert_eq!(lines[1], "# Replay: baremcp replay ./-r.txt -- cat");
    }
}
