//! `requestState` for 2026-07-28 multi round-trip requests: the answers a handler already got,
//! bound to the request they belong to, signed with HMAC-SHA-256 so a client can carry them
//! but not change them.

use serde_json::{Map, Value, json};

use crate::util::encoding::{base64, base64_decode};
use crate::util::sha256::{hex, hmac, same, sha256};

/// Signs `answers` for the request identified by `method` and `subject` (its salient
/// parameters).
pub fn seal(key: &[u8], method: &str, subject: &str, answers: &Map<String, Value>) -> String {
    let payload =
        json!({ "v": 1, "m": method, "d": hex(&sha256(subject.as_bytes())), "a": answers })
            .to_string();
    let body = base64(payload.as_bytes());
    let mac = hex(&hmac(key, body.as_bytes()));
    format!("{body}.{mac}")
}

/// Checks a `requestState` and returns the answers it carries; `Err` says why it was refused.
pub fn open(
    key: &[u8],
    method: &str,
    subject: &str,
    state: &str,
) -> Result<Map<String, Value>, &'static str> {
    let (body, mac) = state.rsplit_once('.').ok_or("malformed")?;
    let expected = hex(&hmac(key, body.as_bytes()));
    if !same(expected.as_bytes(), mac.as_bytes()) {
        return Err("its signature does not verify (was it changed, or made by another server?)");
    }
    let payload: Value =
        base64_decode(body).and_then(|b| serde_json::from_slice(&b).ok()).ok_or("malformed")?;
    if payload["m"] != method || payload["d"] != hex(&sha256(subject.as_bytes())).as_str() {
        return Err("it belongs to a different request");
    }
    payload["a"].as_object().cloned().ok_or("malformed")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_round_trips_and_refuses_tampering() {
        let key = b"k".to_vec();
        let mut answers = Map::new();
        answers.insert("elicit-1".into(), json!({"action": "accept"}));
        let state = seal(&key, "tools/call", "t {}", &answers);
        assert_eq!(open(&key, "tools/call", "t {}", &state), Ok(answers));
        assert!(open(b"other", "tools/call", "t {}", &state).is_err());
        assert!(open(&key, "tools/call", "u {}", &state).is_err());
        let (body, mac) = state.split_once('.').unwrap();
        let flipped = format!(
            "{}{}.{mac}",
            &body[..body.len() - 2],
            if body.ends_with('A') { "BA" } else { "AA" }
        );
        assert!(open(&key, "tools/call", "t {}", &flipped).is_err());
        assert!(open(&key, "tools/call", "t {}", "garbage").is_err());
    }
}
