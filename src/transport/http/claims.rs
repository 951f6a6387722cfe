//! What a verified JWT's claims must say to be let in (`exp`, `nbf`, `aud`, `iss`), the same
//! for HS256 tokens and JWKS-verified ones, and what they say about the caller: the
//! [`Principal`], with its scopes.

use serde_json::{Map, Value};

/// Clock skew allowed on `exp` and `nbf`.
pub(crate) const LEEWAY_SECS: u64 = 60;

/// The checks on a token's claims once its signature holds, at the time `now` (seconds since
/// 1970). `exp` is required; `nbf` is honoured when it is a number; `aud`, a string or an
/// array, must name `audience` and `iss` must equal `issuer`, each when given.
pub(crate) fn check_claims(
    claims: &Map<String, Value>,
    now: u64,
    audience: Option<&str>,
    issuer: Option<&str>,
) -> Result<(), &'static str> {
    let number = |name| claims.get(name).and_then(Value::as_f64);
    // A NumericDate may have a fraction (RFC 7519, section 2): seconds as a JSON number.
    let (now, leeway) = (now as f64, LEEWAY_SECS as f64);
    let exp = number("exp").ok_or("token has no exp")?;
    if now > exp + leeway {
        return Err("token expired");
    }
    if number("nbf").is_some_and(|nbf| nbf > now + leeway) {
        return Err("token not yet valid");
    }
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

/// Who is calling, as a verified token says.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Principal {
    /// `sub`: the user, or for the client-credentials grant the client itself.
    pub(crate) subject: Option<String>,
    /// `iss`: the authorization server that issued the token.
    pub(crate) issuer: Option<String>,
    /// The granted scopes: `scope` (a space-separated string, RFC 8693 §4.2, RFC 9068 §2.2.3)
    /// and `scp` (Okta's array, Entra's space-separated string), in token order.
    pub(crate) scopes: Vec<String>,
    /// The OAuth client the token was issued to: `client_id` (RFC 9068), else `azp`
    /// (OpenID Connect, Keycloak, Auth0, Entra v2), else `appid` (Entra v1), else `cid`
    /// (Okta).
    pub(crate) client_id: Option<String>,
    /// Every claim, for handlers that look further (roles, groups, tenant).
    pub(crate) claims: Map<String, Value>,
}

impl Principal {
    /// The principal a checked claims set names.
    pub(crate) fn from_claims(claims: Map<String, Value>) -> Principal {
        let text = |name: &str| claims.get(name).and_then(Value::as_str).map(String::from);
        let mut scopes = Vec::new();
        for name in ["scope", "scp"] {
            match claims.get(name) {
                Some(Value::String(list)) => {
                    scopes.extend(list.split(' ').filter(|s| !s.is_empty()).map(String::from));
                }
                Some(Value::Array(list)) => {
                    scopes.extend(list.iter().filter_map(Value::as_str).map(String::from));
                }
                _ => {}
            }
        }
        let client_id = ["client_id", "azp", "appid", "cid"].into_iter().find_map(text);
        Principal { subject: text("sub"), issuer: text("iss"), scopes, client_id, claims }
    }

    /// The scopes of `required` this principal was not granted, in `required`'s order: what
    /// a 403 `insufficient_scope` challenge names.
    #[cfg_attr(not(test), expect(dead_code, reason = "--required-scope is wired in next"))]
    pub(crate) fn missing_scopes<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required.iter().filter(|r| !self.scopes.contains(r)).map(String::as_str).collect()
    }
}

/// Whether `scope` is one scope token (RFC 6749 §3.3: printable ASCII but space, `"` and
/// `\`), so a `--required-scope` value can be named in a quoted challenge as it is.
#[cfg_attr(not(test), expect(dead_code, reason = "--required-scope is wired in next"))]
pub(crate) fn is_scope_token(scope: &str) -> bool {
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
    }

    #[test]
    fn the_principal_reads_each_providers_claim_names() {
        // RFC 9068 / Auth0 / oidc-provider: `scope` and `client_id`.
        let p = Principal::from_claims(claims(json!({
            "sub": "ann", "iss": "https://i.example", "scope": "mcp:read  mcp:write", "client_id": "c1", "azp": "c2"
        })));
        assert_eq!(p.subject.as_deref(), Some("ann"));
        assert_eq!(p.issuer.as_deref(), Some("https://i.example"));
        assert_eq!(p.scopes, ["mcp:read", "mcp:write"]);
        assert_eq!(p.client_id.as_deref(), Some("c1"));
        assert_eq!(p.claims["azp"], "c2");
        // Okta: `scp` as an array (what is not a string in it is no scope), `cid`.
        let p =
            Principal::from_claims(claims(json!({"scp": ["openid", "mcp:read", 3], "cid": "x"})));
        assert_eq!(
            (p.scopes.as_slice(), p.client_id.as_deref()),
            (&["openid".into(), "mcp:read".into()][..], Some("x"))
        );
        // Without any of the four names there is no client, whatever else the token says.
        let p = Principal::from_claims(claims(json!({"sub": "ann", "aud": "c", "client": "c"})));
        assert_eq!((p.client_id, p.scopes.len()), (None, 0));
        // Entra v2: `scp` as a string, `azp`; v1: `appid`.
        let p =
            Principal::from_claims(claims(json!({"scp": "Files.Read User.Read", "azp": "guid"})));
        assert_eq!(
            (p.scopes, p.client_id.as_deref()),
            (vec!["Files.Read".into(), "User.Read".into()], Some("guid"))
        );
        let p = Principal::from_claims(claims(json!({"appid": "v1", "sub": 5})));
        assert_eq!((p.client_id.as_deref(), p.subject), (Some("v1"), None));
    }

    #[test]
    fn missing_scopes_are_named_in_the_order_required() {
        let p = Principal::from_claims(claims(json!({"scope": "b a"})));
        let required = ["a".to_string(), "c".into(), "b".into(), "d".into()];
        assert_eq!(p.missing_scopes(&required), ["c", "d"]);
        assert!(p.missing_scopes(&required[..1]).is_empty());
        for good in ["mcp:tools", "api://guid/.default", "a!#[]~"] {
            assert!(is_scope_token(good), "{good}");
        }
        for bad in ["", "a b", "a\"b", "a\\b", "é", "a\tb"] {
            assert!(!is_scope_token(bad), "{bad}");
        }
    }
}
