//! `Principal`: who made a request, as the transport's authentication established it, and
//! what a verified token says of it (scopes, client, claims). Legacy sessions and 2026-07-28
//! `requestState` are bound to it; handlers read it through [`crate::Context::principal`].

use serde_json::{Map, Value};

/// Who made a request: over HTTP, the holder of a verified JWT or of a static bearer token;
/// nobody on stdio or without authentication.
///
/// The caller is [`subject`](Principal::subject) and [`issuer`](Principal::issuer) together:
/// legacy sessions and `requestState` are bound to them, so a refreshed token of the same
/// subject keeps its session. Two principals are the same caller only when they came the same
/// way: a static token named `ann` is not a JWT whose `sub` is `ann`. Equality (`==`) compares
/// everything, claims included.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    subject: String,
    /// A JWT's `iss` (empty when it has none); `None` for a static token.
    issuer: Option<String>,
    scopes: Vec<String>,
    client_id: Option<String>,
    claims: Map<String, Value>,
}

impl Principal {
    /// The holder of the static bearer token named `name` in the token file.
    pub(crate) fn token(name: impl Into<String>) -> Principal {
        Principal {
            subject: name.into(),
            issuer: None,
            scopes: Vec::new(),
            client_id: None,
            claims: Map::new(),
        }
    }

    /// The caller a verified JWT's claims name. The subject is `sub`, or for a token without
    /// one the client (as [`client_id`](Principal::client_id) finds it), or else empty: every
    /// token of an issuer that names neither is the same caller.
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
        let subject = text("sub").or_else(|| client_id.clone()).unwrap_or_default();
        let issuer = Some(text("iss").unwrap_or_default());
        Principal { subject, issuer, scopes, client_id, claims }
    }

    /// The name: a JWT's `sub` (its client when it has no `sub`), or the static token's name
    /// (`token-` and 8 hex digits of its SHA-256 when the token file gives it none).
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The issuer a JWT named (`iss`, empty when none); `None` for a static token.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// The scopes a JWT grants, in token order: `scope` (a space-separated string, RFC 9068)
    /// and `scp` (Okta's array, Entra's space-separated string). None for a static token.
    pub fn scopes(&self) -> &[String] {
        &self.scopes
    }

    /// The OAuth client a JWT was issued to: `client_id` (RFC 9068), else `azp` (OpenID
    /// Connect: Keycloak, Auth0, Entra v2.0), else `appid` (Entra v1.0), else `cid` (Okta).
    /// `None` for a static token.
    pub fn client_id(&self) -> Option<&str> {
        self.client_id.as_deref()
    }

    /// Every claim of a JWT, for what the accessors above do not read (roles, groups, a
    /// tenant); empty for a static token.
    pub fn claims(&self) -> &Map<String, Value> {
        &self.claims
    }

    /// The scopes of `required` this principal was not granted, in `required`'s order: what
    /// a 403 `insufficient_scope` refusal logs.
    pub(crate) fn missing_scopes<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        required.iter().filter(|r| !self.scopes.contains(r)).map(String::as_str).collect()
    }

    /// One text that differs between any two different callers: what state bound to a
    /// principal records (as a digest).
    pub(crate) fn binding(&self) -> String {
        // JSON, so that no subject or issuer text can read as another split of the two; and
        // which claim named a JWT's caller, so a client named `ann` is not the user `ann`.
        let text = serde_json::Value::from;
        let parts = match &self.issuer {
            None => vec![text("token"), text(self.subject.as_str())],
            Some(issuer) => {
                let named_by = match (self.claims.contains_key("sub"), &self.client_id) {
                    (true, _) => "sub",
                    (false, Some(_)) => "client",
                    (false, None) => "none",
                };
                vec![
                    text("jwt"),
                    text(issuer.as_str()),
                    text(named_by),
                    text(self.subject.as_str()),
                ]
            }
        };
        serde_json::Value::Array(parts).to_string()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn principal(claims: Value) -> Principal {
        let Value::Object(map) = claims else { panic!("{claims}") };
        Principal::from_claims(map)
    }

    #[test]
    fn the_principal_reads_each_providers_claim_names() {
        // RFC 9068 / Auth0 / oidc-provider: `scope` and `client_id`.
        let p = principal(json!({
            "sub": "ann", "iss": "https://i.example", "scope": "mcp:read  mcp:write", "client_id": "c1", "azp": "c2"
        }));
        assert_eq!((p.subject(), p.issuer()), ("ann", Some("https://i.example")));
        assert_eq!(p.scopes(), ["mcp:read", "mcp:write"]);
        assert_eq!(p.client_id(), Some("c1"));
        assert_eq!(p.claims()["azp"], "c2");
        // Okta: `scp` as an array (what is not a string in it is no scope), `cid`.
        let p = principal(json!({"sub": "u", "scp": ["openid", "mcp:read", 3], "cid": "x"}));
        assert_eq!(
            (p.scopes(), p.client_id()),
            (&["openid".into(), "mcp:read".into()][..], Some("x"))
        );
        // Without any of the four names there is no client, whatever else the token says.
        let p = principal(json!({"sub": "ann", "aud": "c", "client": "c"}));
        assert_eq!((p.client_id(), p.scopes().len()), (None, 0));
        // Entra v2.0: `scp` as a string, `azp`; v1.0: `appid`. Without `sub` (or with one that
        // is not a string) the client is the subject.
        let p = principal(json!({"scp": "Files.Read User.Read", "azp": "guid"}));
        assert_eq!(
            (p.scopes(), p.client_id()),
            (&["Files.Read".into(), "User.Read".into()][..], Some("guid"))
        );
        let p = principal(json!({"appid": "v1", "sub": 5}));
        assert_eq!((p.client_id(), p.subject(), p.issuer()), (Some("v1"), "v1", Some("")));
        assert_eq!(principal(json!({"iss": "i"})).subject(), "");
    }

    #[test]
    fn the_caller_is_the_subject_from_its_issuer() {
        let early = principal(json!({"sub": "ann", "iss": "i", "exp": 1, "scope": "a"}));
        let late = principal(json!({"sub": "ann", "iss": "i", "exp": 2, "scope": "a b"}));
        assert_ne!(early, late);
        assert_eq!(early.binding(), late.binding());
        let others = [
            principal(json!({"sub": "ann", "iss": "j"})),
            principal(json!({"sub": "bob", "iss": "i"})),
            Principal::token("ann"),
        ];
        for other in others {
            assert_ne!(early.binding(), other.binding(), "{other:?}");
        }
        // No text in a claim reads as another split of issuer and subject.
        let split = principal(json!({"iss": "x\0y", "sub": "z"}));
        let other_split = principal(json!({"iss": "x", "sub": "y\0z"}));
        assert_ne!(split.binding(), other_split.binding());
        // A client is not the user of the same name.
        let user = principal(json!({"iss": "i", "sub": "ann"}));
        let client = principal(json!({"iss": "i", "client_id": "ann"}));
        assert_eq!((user.subject(), client.subject()), ("ann", "ann"));
        assert_ne!(user.binding(), client.binding());
        assert_eq!(Principal::token("ann").issuer(), None);
        assert!(Principal::token("ann").claims().is_empty());
    }

    #[test]
    fn missing_scopes_are_named_in_the_order_required() {
        let p = principal(json!({"scope": "b a"}));
        let required = ["a".to_string(), "c".into(), "b".into(), "d".into()];
        assert_eq!(p.missing_scopes(&required), ["c", "d"]);
        assert!(p.missing_scopes(&required[..1]).is_empty());
    }
}
