//! How `baremcp replay --update` writes a transcript back: a `<--` line whose answer changed
//! is replaced, lines are added or removed where the server now writes more or fewer, and
//! every other byte stays as it was (notes where they were, blank lines, each line's ending);
//! and how the new text takes the old one's place.

use std::ffi::OsString;
use std::fs::{self, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Path, PathBuf};

use super::transcript::{END_OF_INPUT, Entry, Json, first_difference};

/// A line the server wrote: how many client lines had been sent before it (the `-->` line it
/// follows, 0 before the first; the end of input counts as one), and its text, masked.
pub type Answer = (usize, String);

/// How many lines ahead a line added or removed among unchanged ones is looked for.
const AHEAD: usize = 16;

/// `text` (which parses as `entries`) with its `<--` lines brought in line with `answers`,
/// and the entries the new text must parse back as.
///
/// Old `<--` lines and answers are paired in order. An old line that still matches its
/// answer (as replay compares: placeholders and all) is kept as written, also below a later
/// client line than the one the answer follows, since replay reads it there all the same.
/// One that differs is replaced in place when it follows the same client line, unless a
/// few lines on show that the server dropped it (it is dropped) or wrote a line before it
/// (that line is added); one above that client line is dropped, as the server no longer
/// writes it there. An answer with no old line left to take goes right after the last
/// `<--` line kept below its client line (or right after the client line), so notes below
/// stay below, and answers stay in the order the server wrote them. Answers after one more
/// client line than the text has (written once replay closed the input of a text that does
/// not say where) go last, below an end of input written for them.
pub fn rewrite(text: &str, entries: &[Entry], answers: &[Answer]) -> (String, Vec<Entry>) {
    // The client lines sent before each line, the line after each client line (0 for none),
    // and the old `<--` lines.
    let (mut sent, mut starts, mut old) = (Vec::new(), vec![0], Vec::new());
    for (i, entry) in entries.iter().enumerate() {
        match entry {
            Entry::Send { .. } | Entry::EndOfInput => starts.push(i + 1),
            Entry::Expect(_) => old.push(i),
            Entry::Note(_) => {}
        }
        sent.push(starts.len() - 1);
    }
    let mut out = Out::new(text, entries);
    // Each line read as JSON once, however often it is compared.
    let olds: Vec<Line> = (entries.iter())
        .map(|entry| match entry {
            Entry::Expect(line) => Line::read(line),
            _ => Line { text: "", json: None },
        })
        .collect();
    let news: Vec<Line> = answers.iter().map(|(_, answer)| Line::read(answer)).collect();
    let matches = |i: usize, k: usize| olds[i].matches(&news[k]);
    let mut next = 0;
    for (k, (after, answer)) in answers.iter().enumerate() {
        while next < old.len() && sent[old[next]] < *after {
            next += 1;
        }
        let same = |j: usize| j < old.len() && sent[old[j]] == *after;
        if same(next) && !matches(old[next], k) {
            let mut gone = next + 1;
            while gone <= next + AHEAD && same(gone) && !matches(old[gone], k) {
                gone += 1;
            }
            if gone <= next + AHEAD && same(gone) {
                next = gone;
            }
        }
        let mut later = (k + 1..answers.len()).take(AHEAD).take_while(|&j| answers[j].0 == *after);
        match old.get(next) {
            Some(&i) if matches(i, k) => out.old(i, None),
            Some(&i) if sent[i] == *after && !later.any(|j| matches(i, j)) => {
                out.old(i, Some(answer))
            }
            _ => {
                match starts.get(*after) {
                    Some(&start) => out.copy_to(start),
                    None if !out.again.contains(&Entry::EndOfInput) => {
                        out.copy_to(entries.len());
                        out.line("", END_OF_INPUT, out.ending, Entry::EndOfInput);
                    }
                    None => {}
                }
                out.line("<-- ", answer, out.ending, Entry::Expect(answer.clone()));
                continue;
            }
        }
        next += 1;
    }
    out.copy_to(entries.len());
    // The file ends with a line ending only when it did.
    if !text.is_empty() && !text.ends_with('\n') {
        let body =
            (out.text.strip_suffix('\n')).map_or(&*out.text, |b| b.strip_suffix('\r').unwrap_or(b));
        out.text.truncate(body.len());
    }
    (out.text, out.again)
}

/// The new text, written line by line.
struct Out<'a> {
    text: String,
    again: Vec<Entry>,
    /// The old lines, each with its ending.
    lines: Vec<(&'a str, &'a str)>,
    entries: &'a [Entry],
    /// The old lines before this one are written (or dropped).
    done: usize,
    /// A new line's ending: the first line's.
    ending: &'a str,
}

impl<'a> Out<'a> {
    fn new(text: &'a str, entries: &'a [Entry]) -> Out<'a> {
        let lines: Vec<(&str, &str)> = (text.split_inclusive('\n'))
            .map(|l| {
                let body = l.strip_suffix('\n').map_or(l, |b| b.strip_suffix('\r').unwrap_or(b));
                (body, &l[body.len()..])
            })
            .collect();
        let ending = lines.first().map_or("", |l| l.1);
        let ending = if ending.is_empty() { "\n" } else { ending };
        let text = String::with_capacity(text.len());
        Out { text, again: Vec::new(), lines, entries, done: 0, ending }
    }

    fn line(&mut self, head: &str, body: &str, ending: &str, entry: Entry) {
        // A line that was last and had no ending gets one when a line follows it now.
        if !self.text.is_empty() && !self.text.ends_with('\n') {
            self.text.push_str(self.ending);
        }
        self.text.push_str(head);
        self.text.push_str(body);
        self.text.push_str(ending);
        self.again.push(entry);
    }

    /// Writes the old lines up to `end` as they were, but for the `<--` lines among them:
    /// each was either written already or is dropped.
    fn copy_to(&mut self, end: usize) {
        while self.done < end {
            let (i, (body, ending)) = (self.done, self.lines[self.done]);
            if !matches!(self.entries[i], Entry::Expect(_)) {
                self.line("", body, ending, self.entries[i].clone());
            }
            self.done += 1;
        }
    }

    /// Writes the old `<--` line `i` as it was, or with `answer` in its place.
    fn old(&mut self, i: usize, answer: Option<&str>) {
        self.copy_to(i);
        let (body, ending) = self.lines[i];
        match answer {
            Some(answer) => self.line("<-- ", answer, ending, Entry::Expect(answer.into())),
            None => self.line("", body, ending, self.entries[i].clone()),
        }
        self.done = i + 1;
    }
}

/// A line as written, and as JSON when it is.
struct Line<'a> {
    text: &'a str,
    json: Option<Json>,
}

impl Line<'_> {
    fn read(text: &str) -> Line<'_> {
        Line { text, json: Json::parse(text).ok() }
    }

    /// Whether replay would take `answer` for this expected line: as JSON values when both
    /// are JSON, else as text.
    fn matches(&self, answer: &Line) -> bool {
        match (&self.json, &answer.json) {
            (Some(old), Some(answer)) => first_difference(old, answer).is_none(),
            _ => self.text == answer.text,
        }
    }
}

/// Puts `bytes` in place of `file`'s contents in one step: written to a new file beside it
/// (beside its target, for a symbolic link), synced, then renamed over it, so that a crash, a
/// full disk or a stop signal midway leaves the old transcript or the new one, never a part of
/// it. The new file takes the old one's permissions and, where it may, its owner; other hard
/// links to the old file keep the old text. A read-only file is refused, as a write to it
/// would be. Where its directory takes no new file (or no longer name), the file is written
/// over in place, as the only way left.
pub fn replace(file: &Path, bytes: &[u8]) -> io::Result<()> {
    let target = fs::canonicalize(file)?;
    let old = fs::metadata(&target)?;
    if old.permissions().readonly() {
        return Err(io::Error::new(ErrorKind::PermissionDenied, "the file is read-only"));
    }
    let (mut new, temporary) = match beside(&target) {
        Ok(made) => made,
        Err(e) if matches!(e.kind(), ErrorKind::PermissionDenied | ErrorKind::InvalidFilename) => {
            return fs::write(&target, bytes);
        }
        Err(e) => return Err(e),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // Only root may give a file away: anyone else's new file stays theirs.
        let _ = std::os::unix::fs::fchown(&new, Some(old.uid()), Some(old.gid()));
    }
    // Permissions first: a private transcript is never readable by others on the way.
    let done = new
        .set_permissions(old.permissions())
        .and_then(|()| new.write_all(bytes))
        .and_then(|()| new.sync_all())
        .and_then(|()| fs::rename(&temporary, &target));
    if done.is_err() {
        let _ = fs::remove_file(&temporary);
    }
    done.map_err(|e| io::Error::new(e.kind(), format!("{e} (by way of {})", temporary.display())))
}

/// A new file beside `target`, named after it (`.NAME.update-PID`, then `-1`, `-2`, ... past
/// ones a crash left), and its path.
fn beside(target: &Path) -> io::Result<(fs::File, PathBuf)> {
    let mut n = 0;
    loop {
        let mut name = OsString::from(".");
        name.push(target.file_name().unwrap_or_default());
        name.push(format!(".update-{}", std::process::id()));
        if n > 0 {
            name.push(format!("-{n}"));
        }
        let path = target.with_file_name(name);
        match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists && n < 100 => n += 1,
            Err(e) => return Err(io::Error::new(e.kind(), format!("{}: {e}", path.display()))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::transcript::parse;
    use super::*;

    #[test]
    fn a_file_is_replaced_whole_keeping_its_permissions_and_links() {
        let dir = std::env::temp_dir().join(format!("baremcp-replace-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir(&dir).unwrap();
        let file = dir.join("t.jsonl");
        fs::write(&file, "old\n").unwrap();
        // A reader that opened the old file reads the old file to its end: it was not cut
        // and written over, as an interrupted write would leave it.
        let mut reader = fs::File::open(&file).unwrap();
        replace(&file, b"new, and longer\n").unwrap();
        assert_eq!(io::read_to_string(&mut reader).unwrap(), "old\n");
        assert_eq!(fs::read_to_string(&file).unwrap(), "new, and longer\n");
        let names = |dir: &Path| fs::read_dir(dir).unwrap().count();
        assert_eq!(names(&dir), 1, "nothing is left beside it");
        // What a crash left under this process's name is passed over, and left alone.
        let stale = dir.join(format!(".t.jsonl.update-{}", std::process::id()));
        fs::write(&stale, "stale").unwrap();
        replace(&file, b"past a stale one\n").unwrap();
        assert_eq!(fs::read_to_string(&file).unwrap(), "past a stale one\n");
        assert_eq!(fs::read_to_string(&stale).unwrap(), "stale");
        fs::remove_file(&stale).unwrap();
        // A read-only file is refused, as writing to it would be, and stays as it was.
        let mut read_only = fs::metadata(&file).unwrap().permissions();
        read_only.set_readonly(true);
        fs::set_permissions(&file, read_only.clone()).unwrap();
        let refused = replace(&file, b"no").unwrap_err();
        assert_eq!(refused.kind(), ErrorKind::PermissionDenied, "{refused}");
        assert_eq!(fs::read_to_string(&file).unwrap(), "past a stale one\n");
        #[allow(clippy::permissions_set_readonly_false)]
        read_only.set_readonly(false);
        fs::set_permissions(&file, read_only).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::{PermissionsExt, symlink};
            fs::set_permissions(&file, fs::Permissions::from_mode(0o640)).unwrap();
            let link = dir.join("link.jsonl");
            symlink(&file, &link).unwrap();
            replace(&link, b"through the link\n").unwrap();
            assert!(fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
            assert_eq!(fs::read_to_string(&file).unwrap(), "through the link\n");
            assert_eq!(fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o640);
            assert_eq!(names(&dir), 2);
        }
        fs::remove_dir_all(&dir).unwrap();
    }

    /// `text` rewritten for `answers`; the new text must parse back as `rewrite` says.
    fn update(text: &str, answers: &[(usize, &str)]) -> String {
        let entries = parse(text, &Vec::new()).unwrap().entries;
        let answers: Vec<Answer> = answers.iter().map(|(n, a)| (*n, a.to_string())).collect();
        let (out, again) = rewrite(text, &entries, &answers);
        assert_eq!(parse(&out, &Vec::new()).unwrap().entries, again, "{out:?}");
        out
    }

    const A: &str = r#"{"id":1,"result":{}}"#;
    const B: &str = r#"{"id":2,"result":{}}"#;
    const N: &str = r#"{"method":"n"}"#;

    /// Answers that still match leave every byte as it was: notes between a request and its
    /// answer, blank lines, CRLF and mixed endings, no final newline, placeholders, spacing,
    /// and answers written below a later request (a pipelining client's recording).
    #[test]
    fn unchanged_answers_leave_the_file_as_it_was() {
        let (a, b) = (&format!("<-- {A}"), &format!("<-- {B}"));
        for text in [
            format!("# crlf\r\n--> 1\r\n# the answer:\r\n{a}\r\n\r\n--> 2\r\n{b}\r\n"),
            format!("# mixed\n--> 1\r\n{a}\n--> 2\r\n# no final newline\n{b}"),
            "--> 1\n<-- {\"id\": 1, \"result\": \"<object>\"}\n--> 2\n<-- {\"result\":{},\"id\":2}\n"
                .to_string(),
            format!("--> 1\n--> 2\n{a}\n# both answers come late\n{b}\n"),
        ] {
            assert_eq!(update(&text, &[(1, A), (2, B)]), text);
        }
    }

    /// A changed answer replaces its line in place, with that line's own ending.
    #[test]
    fn a_changed_answer_is_replaced_in_place() {
        let text =
            "# x\r\n--> 1\n# the answer:\r\n<-- {\"id\":1,\"result\":{\"old\":1}}\r\n# end\n";
        assert_eq!(
            update(text, &[(1, A)]),
            format!("# x\r\n--> 1\n# the answer:\r\n<-- {A}\r\n# end\n")
        );
    }

    /// A new line goes after the last `<--` line kept below its client line (or right after
    /// the client line), above the notes that follow, with the first line's ending; a line
    /// the server no longer writes goes, and the notes around it stay.
    #[test]
    fn lines_are_added_and_removed_around_the_notes() {
        let text = format!("# crlf\r\n--> 1\r\n# a:\r\n<-- {A}\r\n# next\r\n--> 2\n# b\n");
        assert_eq!(
            update(&text, &[(1, A), (1, N), (2, B)]),
            format!(
                "# crlf\r\n--> 1\r\n# a:\r\n<-- {A}\r\n<-- {N}\r\n# next\r\n--> 2\n<-- {B}\r\n# b\n"
            )
        );
        let text = format!("--> 1\n<-- {N}\n# n\n<-- {A}\n--> 2\n<-- {N}\n<-- {B}\n# end");
        assert_eq!(
            update(&text, &[(1, A), (2, B)]),
            format!("--> 1\n# n\n<-- {A}\n--> 2\n<-- {B}\n# end")
        );
        // A line the server now writes first goes above the note on the line that follows.
        assert_eq!(
            update(&format!("--> 1\n# a:\n<-- {A}\n"), &[(1, N), (1, A)]),
            format!("--> 1\n<-- {N}\n# a:\n<-- {A}\n")
        );
        // Past a last line without an ending: it gets one, the new last line none.
        assert_eq!(
            update(&format!("--> 1\n<-- {A}"), &[(1, A), (1, N)]),
            format!("--> 1\n<-- {A}\n<-- {N}")
        );
    }

    /// Answers stay in the order the server wrote them, and none goes above the client line
    /// it follows: one that still matches a line further down is kept there, and what
    /// follows it is added below it; one written later than before moves down.
    #[test]
    fn answers_keep_their_order_and_never_move_up() {
        let text = format!("--> 1\n<-- {A}\n--> 2\n<-- {N}\n");
        assert_eq!(
            update(&text, &[(1, A), (1, N), (1, B)]),
            format!("--> 1\n<-- {A}\n--> 2\n<-- {N}\n<-- {B}\n")
        );
        let text = format!("--> 1\n<-- {A}\n<-- {N}\n--> 2\n");
        assert_eq!(update(&text, &[(1, A), (2, N)]), format!("--> 1\n<-- {A}\n--> 2\n<-- {N}\n"));
    }
}
