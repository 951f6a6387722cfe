//! HTTP reproducers as text: a case written out step by step (each connection's start, its
//! writes with escapes, pauses, waits and closes, and what each planned request's own stage
//! must answer), and read back, so that `--replay FILE` runs exactly what was found.

use super::http_cases::{Case, Kind, Planned, Script, Step};
use super::report::push_escaped;

/// Runs of one byte at least this long are written `\*N*` and the byte.
const RUN: usize = 32;

/// `bytes` as a quoted string: printable ASCII as it is, `\r \n \t \\ \"`, `\xNN` for the
/// rest, and `\*N*c` for `N` times `c`.
pub fn quote(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        let run = bytes[i..].iter().take_while(|&&c| c == b).count();
        if run >= RUN {
            out.push_str(&format!("\\*{run}*"));
            i += run - 1;
        }
        push_escaped(&mut out, b, true);
        i += 1;
    }
    out.push('"');
    out
}

/// The bytes of a string [`quote`] wrote.
pub fn unquote(text: &str) -> Result<Vec<u8>, String> {
    let inner = text
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .ok_or_else(|| format!("not a quoted string: {text:.40}"))?;
    let s = inner.as_bytes();
    let (mut out, mut i, mut repeat) = (Vec::new(), 0, 1usize);
    while i < s.len() {
        let (byte, len) = match (s[i], s.get(i + 1)) {
            (b'\\', Some(b'r')) => (b'\r', 2),
            (b'\\', Some(b'n')) => (b'\n', 2),
            (b'\\', Some(b't')) => (b'\t', 2),
            (b'\\', Some(b'\\')) => (b'\\', 2),
            (b'\\', Some(b'"')) => (b'"', 2),
            (b'\\', Some(b'x')) => {
                let hex = inner.get(i + 2..i + 4).ok_or("a cut \\x escape")?;
                (u8::from_str_radix(hex, 16).map_err(|_| "a bad \\x escape")?, 4)
            }
            (b'\\', Some(b'*')) => {
                let rest = &inner[i + 2..];
                let end = rest.find('*').ok_or("a cut \\* escape")?;
                repeat = rest[..end].parse().map_err(|_| "a bad \\* count")?;
                i += 3 + end;
                continue;
            }
            (b'\\', _) => return Err(format!("an unknown escape at {i}")),
            (b, _) => (b, 1),
        };
        out.extend(std::iter::repeat_n(byte, repeat));
        repeat = 1;
        i += len;
    }
    Ok(out)
}

/// The case as a script: `kind`, `session`, `open-at-once`, `files`, then per connection `conn at MS`
/// and its lines (`plan START END STATUSES|-`, `write "…"`, `pause MS`, `await N`,
/// `halfclose`, `close`).
pub fn write_case(case: &Case) -> String {
    let mut out = format!("kind {}\n", case.kind.name());
    if let Some(version) = &case.session {
        out.push_str(&format!("session {version}\n"));
    }
    out.push_str(&format!("open-at-once {}\n", case.open_at_once));
    if let Some(files) = case.files {
        out.push_str(&format!("files {files}\n"));
    }
    for script in &case.scripts {
        out.push_str(&format!("conn at {}\n", script.at_ms));
        for p in &script.planned {
            let stage = p.stage.as_ref().map_or("-".to_string(), |s| {
                s.iter().map(u16::to_string).collect::<Vec<_>>().join(",")
            });
            out.push_str(&format!("  plan {} {} {stage}\n", p.start, p.end));
        }
        for step in &script.steps {
            let line = match step {
                Step::Write(bytes) => format!("write {}", quote(bytes)),
                Step::Pause(ms) => format!("pause {ms}"),
                Step::Await(n) => format!("await {n}"),
                Step::HalfClose => "halfclose".into(),
                Step::Close => "close".into(),
            };
            out.push_str(&format!("  {line}\n"));
        }
    }
    out
}

/// A case back from [`write_case`]'s text (`#` lines are comments).
pub fn read_case(text: &str) -> Result<Case, String> {
    let mut case = Case {
        kind: Kind::Pipelined,
        session: None,
        scripts: Vec::new(),
        open_at_once: 1,
        files: None,
    };
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let bad = |why: &str| format!("line {}: {why}: {line:.60}", n + 1);
        let number = |s: &str| s.trim().parse::<u64>().map_err(|_| bad("not a number"));
        let script = case.scripts.last_mut();
        match (word, script) {
            ("kind", _) => case.kind = Kind::from_name(rest).ok_or_else(|| bad("unknown kind"))?,
            ("session", _) => case.session = Some(rest.to_string()),
            ("open-at-once", _) => case.open_at_once = number(rest)? as usize,
            ("files", _) => case.files = Some(number(rest)? as u32),
            ("conn", _) => {
                let at = number(rest.strip_prefix("at ").ok_or_else(|| bad("conn at MS"))?)?;
                case.scripts.push(Script { at_ms: at, steps: Vec::new(), planned: Vec::new() });
            }
            ("plan", Some(script)) => {
                let parts: Vec<&str> = rest.split(' ').collect();
                let [start, end, stage] = parts[..] else {
                    return Err(bad("plan START END STAGE"));
                };
                let stage = (stage != "-")
                    .then(|| {
                        stage
                            .split(',')
                            .map(|s| s.parse().map_err(|_| bad("a bad status")))
                            .collect()
                    })
                    .transpose()?;
                let (start, end) = (number(start)? as usize, number(end)? as usize);
                script.planned.push(Planned { start, end, stage });
            }
            ("write", Some(script)) => {
                script.steps.push(Step::Write(unquote(rest).map_err(|e| bad(&e))?))
            }
            ("pause", Some(script)) => script.steps.push(Step::Pause(number(rest)?)),
            ("await", Some(script)) => script.steps.push(Step::Await(number(rest)? as usize)),
            ("halfclose", Some(script)) => script.steps.push(Step::HalfClose),
            ("close", Some(script)) => script.steps.push(Step::Close),
            _ => return Err(bad("not a reproducer line")),
        }
    }
    Ok(case)
}

#[cfg(test)]
mod tests {
    // Imported in the test itself: the soak compiles this module without the test harness.
    #[test]
    fn reproducers_read_back_as_written() {
        use super::*;
        let bytes =
            [b"GET / HTTP/1.1\r\n\"\\\x00\xff".to_vec(), vec![b'p'; 100], b"end".to_vec()].concat();
        assert_eq!(unquote(&quote(&bytes)), Ok(bytes.clone()));
        assert!(quote(&bytes).contains("\\*100*p"));
        let case = Case {
            kind: Kind::Session,
            session: Some("2025-11-25".into()),
            scripts: vec![Script {
                at_ms: 20,
                steps: vec![
                    Step::Write(bytes),
                    Step::Pause(5),
                    Step::Await(1),
                    Step::HalfClose,
                    Step::Close,
                ],
                planned: vec![
                    Planned { start: 0, end: 9, stage: Some(vec![200, 404]) },
                    Planned { start: 9, end: 12, stage: None },
                ],
            }],
            open_at_once: 1,
            files: Some(65),
        };
        assert_eq!(read_case(&write_case(&case)), Ok(case));
    }
}
