//! Static bearer tokens from a file (`--auth-token-file`): each line a token and the
//! principal its holder is, compared in constant time, read again when the file changes or
//! on SIGHUP; a file that is gone holds no tokens.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::conn::principal::Principal;
use crate::util::sha256::{hex, same, sha256};
use crate::util::stamp::Stamp;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::guard";

/// Tokens, one a line as `NAME TOKEN` or `TOKEN` (`#` comments and blank lines skipped), read
/// again when the file's stamp changes (looked at most once a second; a rename over it
/// changes the inode, whatever its size and times) or after SIGHUP.
pub(crate) struct TokenFile {
    path: PathBuf,
    state: Mutex<Tokens>,
}

/// Each token with the principal its holder is.
type TokenList = Vec<(Vec<u8>, Arc<Principal>)>;

struct Tokens {
    list: TokenList,
    stamp: Option<Stamp>,
    looked: Instant,
}

impl TokenFile {
    pub(crate) fn open(path: PathBuf) -> io::Result<TokenFile> {
        let (list, stamp) = read_tokens(&path)?;
        if list.is_empty() {
            log::warn!(target: LOG, "{}: no tokens: every request will be refused", path.display());
        }
        Ok(TokenFile { path, state: Mutex::new(Tokens { list, stamp, looked: Instant::now() }) })
    }

    /// Reads the file again now, whatever its stamp (SIGHUP).
    pub(crate) fn reread(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.refresh(&mut state, true);
    }

    /// The principal of `token`, when the file lists it; `None` when the file is due to be read
    /// again (its stamp changed) and `may_read` is not set: the dispatching loop reads no file
    /// (a FIFO put in its place would hold every client), a connection's thread does.
    pub(crate) fn holder(&self, token: &str, may_read: bool) -> Option<Option<Arc<Principal>>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.looked.elapsed() >= Duration::from_secs(1) {
            if !may_read && Stamp::of(&self.path) != state.stamp {
                return None;
            }
            self.refresh(&mut state, false);
        }
        // Every token is compared and the match is picked without a branch, so timing does not
        // tell which (or whether one) matched.
        let mut found = usize::MAX;
        for (at, (listed, _)) in state.list.iter().enumerate() {
            let mask = usize::from(same(listed, token.as_bytes())).wrapping_neg();
            found ^= (found ^ at) & mask;
        }
        Some(state.list.get(found).map(|(_, principal)| principal.clone()))
    }

    /// Reads the file again when `force`d or when its stamp changed.
    fn refresh(&self, state: &mut Tokens, force: bool) {
        state.looked = Instant::now();
        if !force && Stamp::of(&self.path) == state.stamp {
            return;
        }
        match read_tokens(&self.path) {
            Ok((list, stamp)) => {
                log::info!(target: LOG, "{}: read {} token(s)", self.path.display(), list.len());
                state.list = list;
                state.stamp = stamp;
            }
            // A file deleted is every token revoked. Its stamp is now none, so this is said
            // once, until a file is there again.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                log::warn!(
                    target: LOG,
                    "{}: {e}; no tokens: every request will be refused",
                    self.path.display()
                );
                state.list = Vec::new();
                state.stamp = None;
            }
            // Keep the tokens we had: a half-written file must not lock everyone out.
            Err(e) => {
                log::warn!(target: LOG, "{}: {e}; keeping the previous tokens", self.path.display())
            }
        }
    }
}

/// The file's tokens and its stamp before reading (so a write during the read is seen at the
/// next look).
fn read_tokens(path: &Path) -> io::Result<(TokenList, Option<Stamp>)> {
    let stamp = Stamp::of(path);
    let text = std::fs::read_to_string(path)?;
    Ok((parse_tokens(&text)?, stamp))
}

/// The token file's lines: `NAME TOKEN` (whitespace between; a name is `[A-Za-z0-9._@-]+`),
/// or `TOKEN` alone, whose principal is `token-` and the first 8 hex digits of its SHA-256
/// (stable, and telling nothing of the token). Errors name the line, never the token.
fn parse_tokens(text: &str) -> io::Result<TokenList> {
    let mut list = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            let why = format!("line {}: {why}", at + 1);
            io::Error::new(io::ErrorKind::InvalidData, why)
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (name, token) = match fields[..] {
            [token] => (format!("token-{}", &hex(&sha256(token.as_bytes()))[..8]), token),
            [name, token] => {
                let valid = |b: u8| b.is_ascii_alphanumeric() || b"._@-".contains(&b);
                if !name.bytes().all(valid) {
                    return Err(bad("a token's name is letters, digits and ._@- only"));
                }
                (name.to_string(), token)
            }
            _ => return Err(bad("expected TOKEN, or NAME TOKEN")),
        };
        list.push((token.as_bytes().to_vec(), Arc::new(Principal::token(name))));
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_lines_name_their_principal() {
        let list = parse_tokens("# c\n\n  ann   s3cret \nbare-token\nbob@x.y\tother\n").unwrap();
        let names: Vec<&str> = list.iter().map(|(_, p)| p.subject()).collect();
        let bare = format!("token-{}", &hex(&sha256(b"bare-token"))[..8]);
        assert_eq!(names, ["ann", bare.as_str(), "bob@x.y"]);
        assert_eq!(list[0].0, b"s3cret");
        for bad in ["a b c", "ann! tok"] {
            let why = parse_tokens(&format!("ok\n{bad}\n")).unwrap_err().to_string();
            assert!(why.starts_with("line 2: ") && !why.contains("tok\n"), "{why}");
        }
    }
}
