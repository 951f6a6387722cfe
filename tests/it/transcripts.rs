//! Golden transcripts: every `fixtures/transcripts/*.txt` is replayed through the in-process
//! loop (compared byte for byte, interleaving included) and through the built binary over
//! real pipes (its whole stdout compared, and a clean exit at end of input).
//!
//! Format: `#` lines are comments (`# args: FLAGS` sets the server's command line); `--> `
//! is a line the client sends, `<-- ` a line the server must write. `-->~ ` sends bytes with
//! escapes (`\\ \r \n \t \xHH`) and no implied newline, for CRLF, invalid UTF-8 and input
//! that ends mid-line; `-->| end of input` closes the server's input, and what the server
//! writes once it has read the end of its input follows it. `$FIXTURES` stands for the
//! absolute path of `fixtures/` (in args, in sent lines, and in place of that path, plain or
//! percent-encoded, in what the server writes), so transcripts do not depend on where the
//! repository is checked out. Rewrite expectations with `UPDATE_EXPECT=1 cargo test`.

use std::cell::RefCell;
use std::io::{self, BufRead, Read, Write};
use std::rc::Rc;
use std::sync::mpsc;
use std::time::Duration;

use crate::app::cli::{self, Command as Cli};
use crate::app::transcript::{self, Entry, Transcript, Vars};

/// `$FIXTURES`: the absolute path of the test copy of `fixtures/` (with its symbolic links).
fn vars() -> Vars {
    let real = crate::fixtures().to_string_lossy().trim_end_matches('/').to_string();
    vec![("FIXTURES".to_string(), real)]
}

fn parse(text: &str) -> Transcript {
    transcript::parse(text, &vars()).unwrap_or_else(|e| panic!("{e}"))
}

fn mask_paths(text: &str) -> String {
    transcript::mask(text, &vars())
}

/// Output written by the server so far, shared with the reader so it can note, each time the
/// server asks for more input, how much output the previous input produced.
#[derive(Clone, Default)]
struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Hands the server one client chunk at a time and records output boundaries.
struct Chunks {
    chunks: Vec<Vec<u8>>,
    index: usize,
    offset: usize,
    output: Shared,
    /// `marks[i]`: output length when the server had consumed chunk `i` and asked for more.
    marks: Vec<usize>,
}

impl Read for Chunks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Chunks {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.index < self.chunks.len() && self.offset == self.chunks[self.index].len() {
            self.marks.push(self.output.0.borrow().len());
            self.index += 1;
            self.offset = 0;
        }
        Ok(match self.chunks.get(self.index) {
            Some(chunk) => &chunk[self.offset..],
            None => &[],
        })
    }
    fn consume(&mut self, n: usize) {
        self.offset += n;
    }
}

/// The server a transcript's `# args:` describe: the built-in catalog, or a `--manifest`.
pub fn server_for(args: &[String]) -> baremcp::Server {
    match cli::parse(args) {
        Ok(Cli::Serve(options)) => options.build().unwrap_or_else(|e| panic!("{e}")),
        other => panic!("transcript args {args:?} do not describe a server: {other:?}"),
    }
}

/// Applies the serving flags of a transcript's `# args:` line to `server`.
pub fn apply_args(server: baremcp::Server, args: &[String]) -> baremcp::Server {
    match cli::parse(args) {
        Ok(Cli::Serve(options)) => options.apply(server).unwrap_or_else(|e| panic!("{e}")),
        other => panic!("transcript args {args:?} do not describe a server: {other:?}"),
    }
}

/// Replays in process and renders the transcript the server actually produced.
fn replay_in_process(transcript: &Transcript, server: &baremcp::Server) -> String {
    let chunks: Vec<Vec<u8>> = transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Send { bytes, .. } => Some(bytes.clone()),
            _ => None,
        })
        .collect();
    let output = Shared::default();
    let mut reader =
        Chunks { chunks, index: 0, offset: 0, output: output.clone(), marks: Vec::new() };
    let mut writer = output.clone();
    server.serve(&mut reader, &mut writer).expect("serve over buffers cannot fail");
    let all = output.0.borrow().clone();
    while reader.marks.len() < reader.chunks.len() {
        reader.marks.push(all.len());
    }
    // What the server wrote once it read end of input follows the end of input: the file's
    // own `-->| end of input`, or one put right after the last client line when that line
    // ends in a newline (`baremcp replay` would wait for those lines with the server's input
    // still open, and they come only once it closes). After a last line without one, which
    // only end of input can finish, they follow that line, as replay closes the input there.
    let marked = transcript.entries.contains(&Entry::EndOfInput);
    let after_the_end = reader.marks.last().map_or(0, |&last| all.len() - last);
    let cut_off = reader.chunks.last().is_some_and(|chunk| !chunk.ends_with(b"\n"));
    let end_here = !marked && after_the_end > 0 && !cut_off;
    if let Some(last) = reader.marks.last_mut()
        && !marked
        && !end_here
    {
        *last = all.len();
    }
    reader.marks.push(all.len());

    let mut rendered = String::new();
    let (mut sent, mut from) = (0, 0);
    let block = |rendered: &mut String, sent: &mut usize, from: &mut usize| {
        let to = reader.marks[*sent];
        for out in mask_paths(&String::from_utf8_lossy(&all[*from..to])).lines() {
            rendered.push_str(&format!("<-- {out}\n"));
        }
        (*sent, *from) = (*sent + 1, to);
    };
    for entry in &transcript.entries {
        match entry {
            Entry::Note(line) => rendered.push_str(&format!("{line}\n")),
            Entry::Expect(_) => {}
            Entry::Send { line, .. } => {
                rendered.push_str(&format!("{line}\n"));
                block(&mut rendered, &mut sent, &mut from);
                if end_here && sent == reader.chunks.len() {
                    rendered.push_str(&format!("{}\n", transcript::END_OF_INPUT));
                    block(&mut rendered, &mut sent, &mut from);
                }
            }
            Entry::EndOfInput => {
                rendered.push_str(&format!("{}\n", transcript::END_OF_INPUT));
                block(&mut rendered, &mut sent, &mut from);
            }
        }
    }
    rendered
}

/// Replays through the binary over pipes; returns its stdout, or why it failed.
fn replay_binary(transcript: &Transcript) -> Result<String, String> {
    let mut child = crate::serving(&transcript.args).map_err(|e| e.to_string())?;
    let input: Vec<u8> = transcript
        .entries
        .iter()
        .flat_map(|e| match e {
            Entry::Send { bytes, .. } => bytes.clone(),
            _ => Vec::new(),
        })
        .collect();
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let writer = std::thread::spawn(move || {
        // The server may exit before reading everything (it never should, but a broken pipe
        // here must not hide the real failure).
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let _ = stdout.read_to_end(&mut out);
        let _ = done.send(out);
    });
    let out = finished.recv_timeout(Duration::from_secs(20)).map_err(|_| {
        let _ = child.kill();
        "the server did not close stdout within 20 s of end of input".to_string()
    })?;
    writer.join().map_err(|_| "writer thread panicked")?;
    let status = child.wait().map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("the server exited with {status}"));
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

fn expected_output(transcript: &Transcript) -> String {
    transcript
        .entries
        .iter()
        .filter_map(|e| match e {
            Entry::Expect(line) => Some(format!("{line}\n")),
            _ => None,
        })
        .collect()
}

/// Checks every transcript in `dir` against servers made by `make`, updating on request.
pub fn check_dir(dir: &str, make: &dyn Fn(&[String]) -> baremcp::Server, binary: bool) {
    let dir = crate::fixture(dir);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "txt"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no transcripts in {}", dir.display());
    let mut failures = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(path).unwrap();
        let transcript = parse(&text);
        assert!(
            text.lines().any(|l| l.starts_with('#')),
            "{name}: needs a # header saying what it shows"
        );
        let actual = replay_in_process(&transcript, &make(&transcript.args));
        if actual != text {
            if crate::updating() {
                std::fs::write(path, &actual).unwrap();
                eprintln!("updated {name}");
                continue;
            }
            failures.push(format!("{name} (in process):\n{}", crate::diff(&text, &actual)));
            continue;
        }
        if binary {
            match replay_binary(&transcript) {
                Ok(out) if mask_paths(&out) == expected_output(&transcript) => {}
                Ok(out) => failures.push(format!(
                    "{name} (binary):\n{}",
                    crate::diff(&expected_output(&transcript), &mask_paths(&out))
                )),
                Err(why) => failures.push(format!("{name} (binary): {why}")),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} transcripts differ:\n\n{}\nIf the new output is right, run `UPDATE_EXPECT=1 cargo test` and review `git diff fixtures/`.",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
}

#[test]
fn builtin_catalog_transcripts() {
    check_dir("transcripts", &server_for, true);
}
