//! `requestState` for 2026-07-28 multi round-trip requests: the answers a handler already got,
//! bound to the request they belong to and to the caller who made it, with an expiry, signed
//! with HMAC-SHA-256 so a client can carry them but not change them (the measures against
//! replay that the spec's multi round-trip pattern asks for).

use serde_json::{Map, Value, json};

use crate::conn::principal::Principal;
use crate::util::encoding::{base64, base64_decode};
use crate::util::sha256::{hex, hmac, same, sha256};

/// Signs `answers` for the request identified by `method` and `subject` (its salient
/// parameters), made by `principal` (when the transport authenticated one), good until
/// `expires` (seconds since 1970).
pub fn seal(
    key: &[u8],
    method: &str,
    subject: &str,
    principal: Option<&Principal>,
    answers: &Map<String, Value>,
    expires: u64,
) -> String {
    let digest = hex(&sha256(subject.as_bytes()));
    let mut payload = json!({ "v": 2, "m": method, "d": digest, "e": expires, "a": answers });
    if let Some(caller) = caller(principal) {
        payload["p"] = json!(caller);
    }
    let payload = payload.to_string();
    let body = base64(payload.as_bytes());
    let mac = hex(&hmac(key, body.as_bytes()));
    format!("{body}.{mac}")
}

/// The digest of who a state is bound to; `None` when no one was authenticated.
fn caller(principal: Option<&Principal>) -> Option<String> {
    principal.map(|p| hex(&sha256(p.binding().as_bytes())))
}

/// Checks a `requestState` presented by `principal` at `now` and returns the answers it
/// carries; `Err` says why it was refused.
pub fn open(
    key: &[u8],
    method: &str,
    subject: &str,
    principal: Option<&Principal>,
    state: &str,
    now: u64,
) -> Result<Map<String, Value>, &'static str> {
    let (body, mac) = state.rsplit_once('.').ok_or("malformed")?;
    let expected = hex(&hmac(key, body.as_bytes()));
    if !same(expected.as_bytes(), mac.as_bytes()) {
        return Err("its signature does not verify (was it changed, or made by another server?)");
    }
    let mut payload: Value =
        base64_decode(body).and_then(|b| serde_json::from_slice(&b).ok()).ok_or("malformed")?;
    if payload.get("p").and_then(Value::as_str) != caller(principal).as_deref() {
        return Err("it belongs to another caller");
    }
    if payload["m"] != method || payload["d"] != hex(&sha256(subject.as_bytes())).as_str() {
        return Err("it belongs to a different request");
    }
    // Signed by this key, so made by a server of this version or an earlier one: an earlier
    // one's state carries no expiry, and is refused as expired.
    if payload["e"].as_u64().is_none_or(|expires| now > expires) {
        return Err("it has expired");
    }
    match payload["a"].take() {
        Value::Object(answers) => Ok(answers),
        _ => Err("malformed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-26, when these tests were written.
    const NOW: u64 = 1_795_000_000;

    #[test]
    fn state_is_good_until_it_expires_and_no_longer() {
        let key = b"k".to_vec();
        let state = seal(&key, "prompts/get", "p {}", None, &Map::new(), NOW + 600);
        let at = |now| open(&key, "prompts/get", "p {}", None, &state, now);
        assert_eq!(at(NOW + 600), Ok(Map::new()));
        assert_eq!(at(NOW + 601), Err("it has expired"));
        // A state signed by the same key without an expiry (an earlier version's) has none
        // to check: it is refused.
        let unexpiring = json!({"v": 1, "m": "prompts/get", "d": hex(&sha256(b"p {}")), "a": {}});
        let body = base64(unexpiring.to_string().as_bytes());
        let old = format!("{body}.{}", hex(&hmac(&key, body.as_bytes())));
        assert_eq!(open(&key, "prompts/get", "p {}", None, &old, NOW), Err("it has expired"));
    }

    #[test]
    fn state_round_trips_and_refuses_tampering() {
        let key = b"k".to_vec();
        let mut answers = Map::new();
        answers.insert("elicit-1".into(), json!({"action": "accept"}));
        let state = seal(&key, "tools/call", "t {}", None, &answers, NOW);
        assert_eq!(open(&key, "tools/call", "t {}", None, &state, NOW), Ok(answers.clone()));
        assert!(open(b"other", "tools/call", "t {}", None, &state, NOW).is_err());
        assert_eq!(
            open(&key, "tools/call", "u {}", None, &state, NOW),
            Err("it belongs to a different request")
        );
        let (body, mac) = state.split_once('.').unwrap();
        let flipped = format!(
            "{}{}.{mac}",
            &body[..body.len() - 2],
            if body.ends_with('A') { "BA" } else { "AA" }
        );
        assert!(open(&key, "tools/call", "t {}", None, &flipped, NOW).is_err());
        assert!(open(&key, "tools/call", "t {}", None, "garbage", NOW).is_err());
    }

    #[test]
    fn state_is_bound_to_the_caller_who_got_it() {
        let key = b"k".to_vec();
        let jwt = |sub: &str| {
            let claims = serde_json::json!({"sub": sub, "iss": "https://idp", "exp": 1});
            Principal::from_claims(claims.as_object().unwrap().clone())
        };
        let (ann, bob) = (jwt("ann"), jwt("bob"));
        let state = seal(&key, "tools/call", "t {}", Some(&ann), &Map::new(), NOW);
        assert_eq!(open(&key, "tools/call", "t {}", Some(&ann), &state, NOW), Ok(Map::new()));
        let another = Err("it belongs to another caller");
        assert_eq!(open(&key, "tools/call", "t {}", Some(&bob), &state, NOW), another);
        assert_eq!(open(&key, "tools/call", "t {}", None, &state, NOW), another);
        // A static token named ann is not the JWT subject ann.
        assert_eq!(
            open(&key, "tools/call", "t {}", Some(&Principal::token("ann")), &state, NOW),
            another
        );
        let anyone = seal(&key, "tools/call", "t {}", None, &Map::new(), NOW);
        assert_eq!(open(&key, "tools/call", "t {}", Some(&ann), &anyone, NOW), another);
    }
}
