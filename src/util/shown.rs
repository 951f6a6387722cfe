//! Text from outside (a client's, a file's) as a log line or an error message shows it: on one
//! line, with no terminal escapes, and in a log line cut to a bounded length.

use std::borrow::Cow;
use std::fmt;

/// `text` with each control character, the line and paragraph separators, the bidirectional
/// marks, embeddings, overrides and isolates, and the byte order mark as a JSON string escape
/// (`\n`, `\u001b`, `\u202e`), and with `backslash` each backslash doubled, as inside a JSON
/// string. So the text stays on one line (a client cannot write a log line of its own), sends
/// a terminal no escape sequence, shows in the order it is in, and with `backslash` each text
/// shown stands for one text. Borrowed when there is nothing to escape.
pub fn escaped(text: &str, backslash: bool) -> Cow<'_, str> {
    let escapes = |c: char| {
        c.is_control()
            || matches!(c, '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
            || matches!(c, '\u{200e}' | '\u{200f}' | '\u{061c}' | '\u{feff}')
    };
    if !text.chars().any(|c| escapes(c) || (backslash && c == '\\')) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\\' if backslash => out.push_str("\\\\"),
            c if escapes(c) => {
                use std::fmt::Write;
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// A client's text in a log line (a method name, an id): cut to 128 bytes (and marked `…`),
/// since it may be megabytes and the log is no place to copy them to at the client's pace,
/// and then escaped as `escaped` says, backslashes doubled.
pub struct Clipped<'t>(pub &'t str);

impl fmt::Display for Clipped<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const MAX_LOGGED: usize = 128;
        let mut end = self.0.len().min(MAX_LOGGED);
        while !self.0.is_char_boundary(end) {
            end -= 1;
        }
        f.write_str(&escaped(&self.0[..end], true))?;
        if end < self.0.len() { f.write_str("…") } else { Ok(()) }
    }
}

#[cfg(test)]
mod tests {
    use super::{Clipped, escaped};

    #[test]
    fn a_client_s_text_is_cut_in_log_lines_at_a_character() {
        assert_eq!(Clipped("tools/call").to_string(), "tools/call");
        let long = "é".repeat(1000);
        let logged = Clipped(&long).to_string();
        assert_eq!(logged, format!("{}…", "é".repeat(64)));
        let odd = format!("a{long}");
        assert_eq!(Clipped(&odd).to_string(), format!("a{}…", "é".repeat(63)));
    }

    #[test]
    fn a_client_s_text_stays_on_its_line_and_sends_no_terminal_escapes() {
        let forged =
            "x\n2026-11-28T00:00:00.000Z ERROR baremcp::http: forged\r\u{1b}[2J\u{9b}\u{2028}\\";
        assert_eq!(
            Clipped(forged).to_string(),
            "x\\n2026-11-28T00:00:00.000Z ERROR baremcp::http: forged\\r\\u001b[2J\\u009b\\u2028\\\\"
        );
        // Cut first, then escaped: what is shown of a long text is bounded all the same.
        let long = "\n".repeat(1000);
        assert_eq!(Clipped(&long).to_string(), format!("{}…", "\\n".repeat(128)));
        assert_eq!(escaped("a\\b\tc", false), "a\\b\\tc");
        // Nor is it shown reordered: the bidirectional overrides and isolates are escaped.
        assert_eq!(escaped("a\u{202e}b\u{2066}c\u{feff}", false), "a\\u202eb\\u2066c\\ufeff");
        assert!(matches!(escaped("plain é", true), std::borrow::Cow::Borrowed(_)));
    }
}
