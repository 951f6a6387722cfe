//! Floor A for the benchmark: the least a stdio server can do. Each line's `"id":` value is
//! spliced into a fixed reply, with no JSON parsing at all, flushed once per message. It is
//! not a server, only the cost of the pipes and system calls, so the bench can show how much
//! of each measure any server could save.

use std::io::{self, BufRead, BufWriter, Write};

fn main() -> io::Result<()> {
    let mut out = BufWriter::new(io::stdout().lock());
    let mut input = io::stdin().lock();
    let mut line = Vec::new();
    while input.read_until(b'\n', &mut line)? > 0 {
        let id =
            line.windows(5).position(|w| w == b"\"id\":").map(|at| &line[at + 5..]).map(|rest| {
                &rest[..rest.iter().position(|&b| b == b',' || b == b'}').unwrap_or(rest.len())]
            });
        if let Some(id) = id {
            let is_call = line.windows(12).any(|w| w == b"\"tools/call\"");
            out.write_all(br#"{"jsonrpc":"2.0","id":"#)?;
            out.write_all(id)?;
            out.write_all(if is_call {
                br#","result":{"content":[{"type":"text","text":"Hello, World!"}]}}"#.as_slice()
            } else {
                br#","result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"floor-a","version":"0"}}}"#
            })?;
            out.write_all(b"\n")?;
            out.flush()?;
        }
        line.clear();
    }
    Ok(())
}
