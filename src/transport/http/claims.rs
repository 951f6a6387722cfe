//! What a verified JWT's claims must say to be let in (`exp`, `nbf`, `aud`, `iss`), the same
//! for HS256 tokens and JWKS-verified ones, and what a scope may be. What they say about the
//! caller is read by `Principal::from_claims` (`conn/principal.rs`).

use serde_json::{Map, Value};

/// Clock skew allowed on `exp` and `nbf`.
pub(crate) const LEEWAY_SECS: u64 = 60;

/// The checks on a token's claims once its signature holds, at the time `now` (seconds since
/// 1970). `exp` is required; `nbf`, when present, must be a number and is honoured; `aud`, a string or an
/// array, must name `audience` and `iss` must equal `issuer`, each when given.
pub(crate) fn check_claims(
    claims: &Map<String, Value>,
    now: u64,
    audience: Option<&str>,
    issuer: Option<&str>,
) -> Result<(), &'static str> {
    // The claims that name the caller are strings (RFC 7519 §4.1.1-2, RFC 9068 §2.2): read as
    // missing, another type would make two callers one.
    let caller_claims = ["sub", "iss", "client_id", "azp", "appid", "cid"];
    if caller_claims.iter().any(|name| claims.get(*name).is_some_and(|v| !v.is_string())) {
        return Err("token names its caller with a claim that is not a string");
    }
    Lifetime::of(claims)?.check(now)?;
    if let Some(audience) = audience {
        let named = match claims.get("aud") {
            Some(Value::String(aud)) => aud == audience,
            Some(Value::Array(list)) => list.iter().any(|aud| aud == audience),
            _ => false,
        };
        if !named {
            return Err("token audience is not this server");
        }
    }
    if let Some(issuer) = issuer
        && claims.get("iss").and_then(Value::as_str) != Some(issuer)
    {
        return Err("token issuer is not trusted");
    }
    Ok(())
}

/// When a token may be used: its `exp` (required) and `nbf`, kept with a verified token so
/// that a token taken from the cache of verified ones (`verified.rs`) is held to them still.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Lifetime {
    exp: f64,
    nbf: Option<f64>,
}

impl Lifetime {
    pub(crate) fn of(claims: &Map<String, Value>) -> Result<Lifetime, &'static str> {
        // A NumericDate may have a fraction (RFC 7519, section 2): seconds as a JSON number.
        let number = |name| claims.get(name).and_then(Value::as_f64);
        // An `nbf` that is not a number is no NumericDate (RFC 7519 §4.1.5): read as absent,
        // it would let a token in early.
        let nbf = match claims.get("nbf") {
            Some(nbf) => Some(nbf.as_f64().ok_or("token nbf is not a number")?),
            None => None,
        };
        Ok(Lifetime { exp: number("exp").ok_or("token has no exp")?, nbf })
    }

    /// Whether it covers the time `now` (seconds since 1970), with [`LEEWAY_SECS`] of skew.
    pub(crate) fn check(self, now: u64) -> Result<(), &'static str> {
        let (now, leeway) = (now as f64, LEEWAY_SECS as f64);
        if now > self.exp + leeway {
            return Err("token expired");
        }
        if self.nbf.is_some_and(|nbf| nbf > now + leeway) {
            return Err("token not yet valid");
        }
        Ok(())
    }
}

/// Whether `scope` is one scope token (RFC 6749 §3.3: printable ASCII but space, `"` and
/// `\`), so a `--required-scope` value can be named in a quoted challenge as it is.
pub fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty() && scope.bytes().all(|b| matches!(b, 0x21 | 0x23..=0x5b | 0x5d..=0x7e))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn claims(value: Value) -> Map<String, Value> {
        let Value::Object(map) = value else { panic!("{value}") };
        map
    }

    #[test]
    fn time_audience_and_issuer_are_checked() {
        let ours = "https://mcp.example/mcp";
        let aud = Some(ours);
        let iss = Some("https://issuer.example");
        let good = claims(json!({
            "exp": 2000, "nbf": 900, "aud": "https://mcp.example/mcp", "iss": "https://issuer.example"
        }));
        assert_eq!(check_claims(&good, 1000, aud, iss), Ok(()));
        assert_eq!(check_claims(&good, 2000 + LEEWAY_SECS, aud, iss), Ok(()));
        assert_eq!(check_claims(&good, 2001 + LEEWAY_SECS, aud, iss), Err("token expired"));
        assert_eq!(check_claims(&good, 900 - LEEWAY_SECS, aud, iss), Ok(()));
        assert_eq!(check_claims(&good, 899 - LEEWAY_SECS, aud, iss), Err("token not yet valid"));
        assert_eq!(
            check_claims(&good, 1000, Some("https://mcp.example/other"), iss),
            Err("token audience is not this server")
        );
        assert_eq!(
            check_claims(&good, 1000, aud, Some("https://issuer.example/")),
            Err("token issuer is not trusted")
        );
        // A caller named by anything but a string is no caller to tell from another.
        for odd in
            [json!({"sub": 1001}), json!({"iss": {}}), json!({"azp": null}), json!({"cid": [1]})]
        {
            let mut odd = claims(odd);
            odd.insert("exp".into(), json!(2000));
            let refused = check_claims(&odd, 1000, None, None);
            assert_eq!(refused, Err("token names its caller with a claim that is not a string"));
        }
        // Unconfigured checks are skipped; a configured one needs its claim.
        let bare = claims(json!({"exp": 2000}));
        assert_eq!(check_claims(&bare, 1000, None, None), Ok(()));
        assert_eq!(check_claims(&bare, 1000, aud, None), Err("token audience is not this server"));
        assert_eq!(check_claims(&bare, 1000, None, iss), Err("token issuer is not trusted"));
        let listed = claims(json!({"exp": 2000, "aud": ["https://a.example", ours]}));
        assert_eq!(check_claims(&listed, 1000, aud, None), Ok(()));
        for aud_claim in [json!(["https://a.example"]), json!(7), json!({"aud": aud}), json!([])] {
            let other = claims(json!({"exp": 2000, "aud": aud_claim}));
            assert_eq!(
                check_claims(&other, 1000, aud, None),
                Err("token audience is not this server")
            );
        }
        for exp in [json!(null), json!("2000"), json!([2000])] {
            let bad = claims(json!({"exp": exp}));
            assert_eq!(check_claims(&bad, 1000, None, None), Err("token has no exp"), "{exp}");
        }
        // Nor is an nbf of another type read as absent.
        for nbf in [json!(null), json!("2000"), json!([2000]), json!({})] {
            let bad = claims(json!({"exp": 2000, "nbf": nbf}));
            let refused = check_claims(&bad, 1000, None, None);
            assert_eq!(refused, Err("token nbf is not a number"), "{nbf}");
        }
    }

    #[test]
    fn a_scope_is_one_printable_token() {
        for good in ["mcp:tools", "api://guid/.default", "a!#[]~"] {
            assert!(is_scope_token(good), "{good}");
        }
        for bad in ["", "a b", "a\"b", "a\\b", "é", "a\tb"] {
            assert!(!is_scope_token(bad), "{bad}");
        }
    }
}
