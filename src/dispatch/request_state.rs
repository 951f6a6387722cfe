//! `requestState` for 2026-07-28 multi round-trip requests: the answers a handler already got,
//! bound to the request they belong to and to the caller who made it, signed with
//! HMAC-SHA-256 so a client can carry them but not change them.

use serde_json::{Map, Value, json};

use crate::conn::principal::Principal;
use crate::util::encoding::{base64, base64_decode};
use crate::util::sha256::{hex, hmac, same, sha256};

/// Signs `answers` for the request identified by `method` and `subject` (its salient
/// parameters), made by `principal` (when the transport authenticated one).
pub fn seal(
    key: &[u8],
    method: &str,
    subject: &str,
    principal: Option<&Principal>,
    answers: &Map<String, Value>,
) -> String {
    let mut payload =
        json!({ "v": 1, "m": method, "d": hex(&sha256(subject.as_bytes())), "a": answers });
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

/// Checks a `requestState` presented by `principal` and returns the answers it carries;
/// `Err` says why it was refused.
pub fn open(
    key: &[u8],
    method: &str,
    subject: &str,
    principal: Option<&Principal>,
    state: &str,
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
    match payload["a"].take() {
        Value::Object(answers) => Ok(answers),
        _ => Err("malformed"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_refuses_tampering() {
        let key = b"k".to_vec();
        let mut answers = Map::new();
        answers.insert("elicit-1".into(), json!({"action": "accept"}));
        let state = seal(&key, "tools/call", "t {}", None, &answers);
        assert_eq!(open(&key, "tools/call", "t {}", None, &state), Ok(answers.clone()));
        assert!(open(b"other", "tools/call", "t {}", None, &state).is_err());
        assert_eq!(
            open(&key, "tools/call", "u {}", None, &state),
            Err("it belongs to a different request")
        );
        let (body, mac) = state.split_once('.').unwrap();
        let flipped = format!(
            "{}{}.{mac}",
            &body[..body.len() - 2],
            if body.ends_with('A') { "BA" } else { "AA" }
        );
        assert!(open(&key, "tools/call", "t {}", None, &flipped).is_err());
        assert!(open(&key, "tools/call", "t {}", None, "garbage").is_err());
    }

    #[test]
    fn state_is_bound_to_the_caller_who_got_it() {
        let key = b"k".to_vec();
        let jwt = |sub: &str| {
            let claims = serde_json::json!({"sub": sub, "iss": "https://idp", "exp": 1});
            Principal::from_claims(claims.as_object().unwrap().clone())
        };
        let (ann, bob) = (jwt("ann"), jwt("bob"));
        let state = seal(&key, "tools/call", "t {}", Some(&ann), &Map::new());
        assert_eq!(open(&key, "tools/call", "t {}", Some(&ann), &state), Ok(Map::new()));
        let another = Err("it belongs to another caller");
        assert_eq!(open(&key, "tools/call", "t {}", Some(&bob), &state), another);
        assert_eq!(open(&key, "tools/call", "t {}", None, &state), another);
        // A static token named ann is not the JWT subject ann.
        assert_eq!(
            open(&key, "tools/call", "t {}", Some(&Principal::token("ann")), &state),
            another
        );
        let anyone = seal(&key, "tools/call", "t {}", None, &Map::new());
        assert_eq!(open(&key, "tools/call", "t {}", Some(&ann), &anyone), another);
    }
}
