//! Mutations of a whole session: lines mutated, dropped, repeated, reordered, batched (up to a
//! batch filling the line limit), two lines in one write or one cut in two, a 2025-03-26
//! `initialize` put in front, the last newline cut.

use super::mutate::mutate_line;
use super::rng::Rng;
use super::spans::body;

/// A 2025-03-26 `initialize`: after it, batches are answered.
pub const INIT_2025_03_26: &str = r#"{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{"elicitation":{},"sampling":{},"roots":{}}}}"#;

/// A batch of the given lines' messages, as one line.
fn batch_of(lines: &[&[u8]]) -> Vec<u8> {
    let mut out = b"[".to_vec();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(body(line).0);
    }
    out.extend_from_slice(b"]\n");
    out
}

/// A whole session mutated: lines mutated, dropped, repeated, reordered, batched, a
/// 2025-03-26 `initialize` put in front (so batches are answered), the last newline cut.
pub fn mutate_session(
    rng: &mut Rng,
    seed: &[Vec<u8>],
    pool: &[Vec<u8>],
    limit: usize,
) -> Vec<Vec<u8>> {
    let mut lines: Vec<Vec<u8>> = seed.to_vec();
    let rounds = 1 + rng.below(6);
    for _ in 0..rounds {
        if lines.is_empty() {
            lines.push(rng.pick(pool).clone());
        }
        let at = rng.below(lines.len());
        match rng.below(12) {
            0 => {
                lines.remove(at);
            }
            1 => {
                let copy = lines[at].clone();
                let n = 1 + rng.below(3);
                for _ in 0..n {
                    lines.insert(at, copy.clone());
                }
            }
            2 => {
                let other = rng.below(lines.len());
                lines.swap(at, other);
            }
            3 => lines.insert(at, rng.pick(pool).clone()),
            4 => {
                // A batch of a few neighbours.
                let n = 1 + rng.below(4.min(lines.len() - at));
                let parts: Vec<&[u8]> = lines[at..at + n].iter().map(Vec::as_slice).collect();
                let joined = batch_of(&parts);
                lines.splice(at..at + n, [joined]);
            }
            5 => {
                // A batch bomb: one request repeated up to the line limit.
                let (item, _) = body(&lines[at]);
                if !item.is_empty() && item.len() < limit {
                    let count = (limit / (item.len() + 1)).clamp(1, 100_000);
                    let count = if rng.one_in(2) { count } else { 1 + rng.below(count) };
                    let parts: Vec<&[u8]> = std::iter::repeat_n(item, count).collect();
                    lines[at] = batch_of(&parts);
                }
            }
            6 => lines.insert(0, format!("{INIT_2025_03_26}\n").into_bytes()),
            7 => {
                // Two lines in one write, or one line cut in two.
                if at + 1 < lines.len() && rng.one_in(2) {
                    let next = lines.remove(at + 1);
                    let (a, _) = body(&lines[at]);
                    lines[at] = [a, b"\n", &next].concat();
                } else {
                    let cut = rng.below(lines[at].len() + 1);
                    let rest = lines[at].split_off(cut);
                    lines.insert(at + 1, rest);
                }
            }
            _ => {
                let mutated = mutate_line(rng, &lines[at], pool, limit);
                lines[at] = mutated;
            }
        }
    }
    // Mutations compound; past twice the limit a line only costs time.
    for line in &mut lines {
        line.truncate(2 * limit + 4096);
    }
    if rng.one_in(8)
        && let Some(last) = lines.last_mut()
        && last.ends_with(b"\n")
    {
        last.pop();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_are_deterministic() {
        let seed = vec![
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hello","arguments":{"name":"W"}}}"#
                .to_vec(),
        ];
        let run = |s| {
            let mut rng = Rng::new(s);
            (0..50)
                .map(|_| mutate_session(&mut rng, &seed, &seed, 4096).concat())
                .collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }
}
