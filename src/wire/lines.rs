//! stdio framing: reading one bounded line at a time from a `BufRead`.
//!
//! A line longer than the limit is skipped as it streams in: its bytes are consumed from the
//! reader's buffer and dropped, so memory stays bounded by the limit whatever the client sends.
//!
//! Public because anything else that speaks MCP's stdio framing (a client, a proxy such as
//! `baremcp proxy`) needs the same bounded reading.

use std::io::{self, BufRead};

/// What one call to [`LineReader::read`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A complete line is in the buffer, without its `\n` (a `\r` before it stays: the proxy
    /// forwards lines byte for byte, and JSON reads it as whitespace).
    Complete,
    /// A line longer than the limit was read and discarded; only its first bytes (at most
    /// [`TOO_LONG_HEAD`]) are left in the buffer, where its id usually is.
    TooLong,
    /// End of input. A last line without a newline is read as `Complete` (or `TooLong`) first:
    /// a client that writes one message and closes its end still gets its reply.
    Eof,
}

/// How much of an over-long line is kept: enough for the envelope members that come first.
pub const TOO_LONG_HEAD: usize = 4096;

/// Reads lines of at most `max` bytes, not counting the line ending (`\n`, or `\r\n`: the
/// `\r` is left in the line, one byte past `max` at most). It looks one line ahead in the
/// reader's buffer, so the loop knows whether the next line is already here (then output may
/// wait for it) or reading on could wait for the client (then output is flushed first).
pub struct LineReader {
    max: usize,
    /// Where the next line ends in the reader's buffer, when it is already there. The next
    /// read starts from it, so no byte is searched twice.
    ahead: Option<usize>,
}

impl LineReader {
    /// A reader of lines of at most `max` bytes.
    pub fn new(max: usize) -> LineReader {
        LineReader { max, ahead: None }
    }

    /// True when the whole next line is in the reader's buffer.
    pub fn next_is_here(&self) -> bool {
        self.ahead.is_some()
    }

    /// Reads the next line into `buf` (cleared first).
    pub fn read(&mut self, reader: &mut dyn BufRead, buf: &mut Vec<u8>) -> io::Result<Line> {
        buf.clear();
        let mut too_long = false;
        let mut ahead = self.ahead.take();
        loop {
            let chunk = match reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if chunk.is_empty() {
                // A `\r` let past the limit ends no line here: it was the message's.
                if buf.len() > self.max {
                    too_long = true;
                    buf.truncate(TOO_LONG_HEAD);
                }
                return Ok(match (too_long, buf.is_empty()) {
                    (true, _) => Line::TooLong,
                    (false, false) => Line::Complete,
                    (false, true) => Line::Eof,
                });
            }
            // After `consume`, a `BufRead` hands back the rest of its buffer, where the look-
            // ahead found the newline; one that hands back less is searched afresh.
            let newline = match ahead.take() {
                Some(at) if chunk.get(at) == Some(&b'\n') => Some(at),
                _ => memchr::memchr(b'\n', chunk),
            };
            let take = newline.unwrap_or(chunk.len());
            if !too_long {
                let len = buf.len() + take;
                // A `\r` before the newline belongs to the line ending, not to the message, so
                // it may be the one byte past the limit (when a chunk ends on it, the next one
                // tells whether the newline follows). Looked at only past the limit.
                let crlf = || {
                    len == self.max + 1
                        && (if take > 0 { chunk[take - 1] } else { buf[buf.len() - 1] }) == b'\r'
                };
                if len > self.max && !crlf() {
                    too_long = true;
                    let room = TOO_LONG_HEAD.saturating_sub(buf.len());
                    buf.extend_from_slice(&chunk[..take.min(room)]);
                    buf.truncate(TOO_LONG_HEAD);
                    buf.shrink_to(self.max.min(64 * 1024));
                } else {
                    buf.extend_from_slice(&chunk[..take]);
                }
            }
            let Some(end) = newline else {
                reader.consume(take);
                continue;
            };
            self.ahead = memchr::memchr(b'\n', &chunk[end + 1..]);
            reader.consume(end + 1);
            return Ok(if too_long { Line::TooLong } else { Line::Complete });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn lines(input: &[u8], max: usize, capacity: usize) -> Vec<String> {
        let mut reader = BufReader::with_capacity(capacity, input);
        let mut lines = LineReader::new(max);
        let mut buf = Vec::new();
        let mut out = Vec::new();
        loop {
            match lines.read(&mut reader, &mut buf).unwrap() {
                Line::Complete => out.push(String::from_utf8_lossy(&buf).into_owned()),
                Line::TooLong => out.push("<too long>".into()),
                Line::Eof => return out,
            }
        }
    }

    #[test]
    fn splits_and_bounds_lines() {
        let input = b"ab\r\ncdef\n\n0123456789\nxy\nlast";
        for capacity in [1, 3, 64] {
            assert_eq!(lines(input, 5, capacity), ["ab\r", "cdef", "", "<too long>", "xy", "last"]);
        }
        // A last line without its newline is a line all the same, bounded like any other.
        assert_eq!(lines(b"a\n0123456789", 5, 4), ["a", "<too long>"]);
        assert_eq!(lines(b"12345\n123456\n", 5, 2), ["12345", "<too long>"]);
    }

    #[test]
    fn the_limit_leaves_out_a_crlf_line_ending() {
        for capacity in [1, 2, 3, 6, 64] {
            let input = b"12345\r\n123456\r\n1234\r\r\n12345\rx\n12345\r";
            // `1234\r` is a message of 5 bytes, a `\r` that no `\n` follows is the message's.
            let expected = ["12345\r", "<too long>", "1234\r\r", "<too long>", "<too long>"];
            assert_eq!(lines(input, 5, capacity), expected, "{capacity}");
        }
    }

    #[test]
    fn knows_whether_the_next_line_is_here() {
        let seen = |input: &'static [u8], capacity: usize| {
            let mut reader = BufReader::with_capacity(capacity, input);
            let mut lines = LineReader::new(5);
            let mut buf = Vec::new();
            let mut seen = Vec::new();
            loop {
                let line = lines.read(&mut reader, &mut buf).unwrap();
                if line == Line::Eof {
                    return seen;
                }
                seen.push((line, lines.next_is_here()));
            }
        };
        assert_eq!(
            seen(b"a\n0123456789\nb\n", 64),
            [(Line::Complete, true), (Line::TooLong, true), (Line::Complete, false)]
        );
        // Only part of the next line, or none of it, is in the buffer: reading on may wait.
        assert_eq!(seen(b"a\nbc", 64), [(Line::Complete, false), (Line::Complete, false)]);
        assert_eq!(seen(b"a\nb\n", 2), [(Line::Complete, false), (Line::Complete, false)]);
    }
}
