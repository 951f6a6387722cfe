//! Randomness from the operating system: signing keys and unguessable ids.

use std::io::Read;
use std::path::Path;

use crate::util::sha256::hex;

/// A per-process signing key: from `BAREMCP_STATE_SECRET` when set (so several processes
/// can accept each other's state), else 32 bytes from `/dev/urandom`; `Err` says why there
/// is none.
pub fn process_key() -> Result<Vec<u8>, String> {
    if let Ok(secret) = std::env::var("BAREMCP_STATE_SECRET")
        && !secret.is_empty()
    {
        return Ok(secret.into_bytes());
    }
    random_key(Path::new("/dev/urandom"))
}

/// 32 bytes read from `source`. There is no fallback: a key that could be guessed would let a
/// client forge the answers a handler believes it got, so without randomness nothing is
/// signed (set `BAREMCP_STATE_SECRET` instead).
fn random_key(source: &Path) -> Result<Vec<u8>, String> {
    let mut key = vec![0u8; 32];
    std::fs::File::open(source)
        .and_then(|mut file| file.read_exact(&mut key))
        .map_err(|e| format!("cannot read {} for a signing key: {e}", source.display()))?;
    Ok(key)
}

/// `bytes` random bytes as lowercase hex, for ids that must be unguessable (HTTP session
/// ids, task ids): from `/dev/urandom`, else std's per-process random hash keys. Unlike a
/// signing key these only name something, so a weaker source is better than none.
pub(crate) fn random_hex(bytes: usize) -> String {
    let mut raw = vec![0u8; bytes];
    if std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut raw)).is_err() {
        use std::hash::{BuildHasher, Hasher};
        for chunk in raw.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u8(1);
            chunk.copy_from_slice(&hasher.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    hex(&raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_random_key_comes_from_its_source_or_not_at_all() {
        let key = random_key(Path::new("/dev/urandom")).unwrap();
        assert_eq!(key.len(), 32);
        assert_ne!(key, random_key(Path::new("/dev/urandom")).unwrap());
        let missing = random_key(Path::new("/nonexistent/urandom")).unwrap_err();
        assert!(
            missing.starts_with("cannot read /nonexistent/urandom for a signing key: "),
            "{missing}"
        );
        // A source that ends before 32 bytes gives no key either, not a short one.
        let short = std::env::temp_dir().join(format!("baremcp-short-key-{}", std::process::id()));
        std::fs::write(&short, [7u8; 31]).unwrap();
        let refused = random_key(&short);
        std::fs::remove_file(&short).unwrap();
        assert!(refused.unwrap_err().contains("for a signing key"));
    }

    #[test]
    fn ids_are_random_hex() {
        let (a, b) = (random_hex(16), random_hex(16));
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{a}");
        assert_ne!(a, b);
    }
}
