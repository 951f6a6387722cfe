//! The JWTs already verified, so that a client's next request with the same token costs a
//! look-up rather than a signature check (on the dispatching loop, for a parked connection:
//! an ES256 check is half a millisecond here, which every other client would wait out). A
//! token is taken from here only while its `exp` and `nbf` still allow it and while the key
//! set that verified it is the one in force; what is kept is bounded in tokens and bytes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::conn::principal::Principal;
use crate::transport::http::claims::Lifetime;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::guard";

/// At most this many tokens are kept, and at most this many bytes of them.
const MAX_TOKENS: usize = 1024;
const MAX_BYTES: usize = 1 << 20;

/// Verified tokens, by their exact text.
#[derive(Default)]
pub(crate) struct Verified {
    // The standard hasher, keyed at random: a caller cannot choose texts that land in one
    // bucket, nor learn a kept token from how long a look-up of its guess takes.
    tokens: Mutex<Kept>,
}

#[derive(Default)]
struct Kept {
    by_text: HashMap<Box<str>, Entry>,
    bytes: usize,
}

struct Entry {
    principal: Arc<Principal>,
    lifetime: Lifetime,
    /// The generation of the key set that verified it (see `JwksVerifier::generation`).
    keys: u64,
}

impl Verified {
    /// Who `token` names, when it was verified with the key set of generation `keys` and is
    /// still within its lifetime at `now` (seconds since 1970).
    pub(crate) fn get(&self, token: &str, now: u64, keys: u64) -> Option<Arc<Principal>> {
        let kept = self.lock();
        let entry = kept.by_text.get(token)?;
        let usable = entry.keys == keys && entry.lifetime.check(now).is_ok();
        usable.then(|| entry.principal.clone())
    }

    /// Keeps `token`, just verified with the key set of generation `keys`, for `principal`.
    /// When the bounds are reached, what can no longer be used goes first, then everything.
    pub(crate) fn keep(&self, token: &str, principal: &Arc<Principal>, now: u64, keys: u64) {
        // Verified, so its claims hold an `exp`.
        let Ok(lifetime) = Lifetime::of(principal.claims()) else { return };
        if token.len() > MAX_BYTES {
            return;
        }
        let mut kept = self.lock();
        let kept = &mut *kept;
        if kept.by_text.remove(token).is_some() {
            kept.bytes -= token.len();
        }
        if kept.by_text.len() >= MAX_TOKENS || kept.bytes + token.len() > MAX_BYTES {
            kept.by_text.retain(|_, e| e.keys == keys && e.lifetime.check(now).is_ok());
            kept.bytes = kept.by_text.keys().map(|text| text.len()).sum();
        }
        if kept.by_text.len() >= MAX_TOKENS || kept.bytes + token.len() > MAX_BYTES {
            let forgotten = kept.by_text.len();
            log::debug!(target: LOG, "{forgotten} verified tokens forgotten to make room");
            kept.by_text.clear();
            kept.bytes = 0;
        }
        kept.bytes += token.len();
        let entry = Entry { principal: principal.clone(), lifetime, keys };
        kept.by_text.insert(token.into(), entry);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.tokens.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::transport::http::claims::LEEWAY_SECS;

    fn principal(sub: &str, exp: u64, nbf: Option<u64>) -> Arc<Principal> {
        let mut claims = json!({"sub": sub, "exp": exp});
        if let Some(nbf) = nbf {
            claims["nbf"] = json!(nbf);
        }
        let serde_json::Value::Object(claims) = claims else { unreachable!() };
        Arc::new(Principal::from_claims(claims))
    }

    #[test]
    fn a_kept_token_is_found_only_by_its_text_in_its_lifetime_and_with_its_keys() {
        let verified = Verified::default();
        let ann = principal("ann", 2_000, Some(1_000));
        verified.keep("a.b.c", &ann, 1_500, 7);
        let found = verified.get("a.b.c", 1_500, 7).expect("kept");
        assert!(Arc::ptr_eq(&found, &ann));
        // Another text, even one that differs only at its end, is not it.
        assert!(verified.get("a.b.d", 1_500, 7).is_none());
        assert!(verified.get("a.b.c ", 1_500, 7).is_none());
        // A key set read since (another generation) did not verify it.
        assert!(verified.get("a.b.c", 1_500, 8).is_none());
        // Its lifetime holds, with the same leeway as a token checked afresh.
        assert!(verified.get("a.b.c", 2_000 + LEEWAY_SECS, 7).is_some());
        assert!(verified.get("a.b.c", 2_001 + LEEWAY_SECS, 7).is_none());
        assert!(verified.get("a.b.c", 999 - LEEWAY_SECS, 7).is_none());
        // Kept again, it is the new principal.
        let bob = principal("bob", 3_000, None);
        verified.keep("a.b.c", &bob, 1_500, 8);
        assert!(Arc::ptr_eq(&verified.get("a.b.c", 2_500, 8).unwrap(), &bob));
        assert_eq!(verified.lock().bytes, "a.b.c".len());
    }

    #[test]
    fn bounded_in_tokens_and_bytes_dropping_what_cannot_be_used_first() {
        let verified = Verified::default();
        let (live, dead) = (principal("live", 10_000, None), principal("dead", 100, None));
        // Half the room goes to tokens that will have expired, half to live ones.
        for i in 0..MAX_TOKENS {
            let holder = if i % 2 == 0 { &dead } else { &live };
            verified.keep(&format!("t.{i}.x"), holder, 50, 1);
        }
        assert_eq!(verified.lock().by_text.len(), MAX_TOKENS);
        // Full: the expired ones make room, and the live ones stay.
        verified.keep("new.one.x", &live, 5_000, 1);
        assert_eq!(verified.lock().by_text.len(), MAX_TOKENS / 2 + 1);
        assert!(verified.get("t.1.x", 5_000, 1).is_some());
        assert!(verified.get("new.one.x", 5_000, 1).is_some());
        // Full of live tokens: everything goes.
        for i in 0..MAX_TOKENS {
            verified.keep(&format!("u.{i}.x"), &live, 5_000, 1);
        }
        assert!(verified.lock().by_text.len() < MAX_TOKENS);
        // Bytes: two tokens of half the budget do not fit together.
        let half = "h".repeat(MAX_BYTES / 2 + 1);
        verified.keep(&format!("{half}1"), &live, 5_000, 1);
        verified.keep(&format!("{half}2"), &live, 5_000, 1);
        let kept = verified.lock();
        assert!(kept.bytes <= MAX_BYTES, "{}", kept.bytes);
        assert_eq!(kept.bytes, kept.by_text.keys().map(|t| t.len()).sum::<usize>());
        assert_eq!(kept.by_text.len(), 1);
        drop(kept);
        // A token over the whole budget is not kept.
        verified.keep(&"x".repeat(MAX_BYTES + 1), &live, 5_000, 1);
        assert!(verified.get(&"x".repeat(MAX_BYTES + 1), 5_000, 1).is_none());
    }
}
