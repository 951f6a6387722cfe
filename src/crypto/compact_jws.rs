//! A JWT's signature checked against a key set, as a resource server must (RFC 7515, RFC
//! 8725): the compact form only, the algorithm the key's and never `none` or HMAC, no
//! critical extension, a bounded cost for any input; then the claims set as a JSON object.
//! What the claims must say is the caller's business.

use std::fmt;

use serde_json::{Map, Value};

use super::jwks::{KeySet, shown};
use super::key::Algorithm;
use crate::util::encoding::base64url_decode;

/// The longest token read. Access tokens are about a kilobyte; large ones carry group lists,
/// and 16 KiB is also what common HTTP servers allow a whole request head.
const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// How deep a header or claims set may nest arrays and objects. Providers' claims nest three
/// levels (Keycloak's `resource_access.client.roles`).
const MAX_DEPTH: usize = 16;

/// The most keys one token is checked against: a token without `kid` whose algorithm more
/// keys fit is refused rather than tried against each (each RSA check costs a modular
/// exponentiation).
const MAX_KEYS_TRIED: usize = 4;

/// A token whose signature verified.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Signed {
    pub(crate) alg: Algorithm,
    /// The header's `kid`, when it named one.
    pub(crate) kid: Option<String>,
    /// The payload: a JWT claims set.
    pub(crate) claims: Map<String, Value>,
}

/// Why a token's signature was not accepted. Nothing here repeats the token; names taken from
/// it are quoted and cut short.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum JwsError {
    /// Longer than [`MAX_TOKEN_BYTES`].
    TooLong { bytes: usize },
    /// Not three base64url parts, a header or payload that is no JSON object, or a member
    /// of the wrong type.
    Malformed(&'static str),
    /// `alg: none`: an unsigned token.
    Unsigned,
    /// An HMAC `alg` (`HS256`...): with public keys, its secret would be public.
    Hmac(String),
    /// Any other `alg` not verified here.
    UnknownAlgorithm(String),
    /// A `crit` header: no extension is understood here (RFC 7515 §4.1.11).
    Critical(String),
    /// A `typ` that says this is not an access token.
    Type(String),
    /// No key has the token's `kid` (a JWKS file not refreshed since a rotation, or a token
    /// from another issuer).
    UnknownKid(String),
    /// The keys the token points at do not verify its `alg`: another family, or pinned to
    /// another algorithm.
    AlgorithmNotTheKeys { alg: Algorithm, kid: Option<String> },
    /// No `kid`, and more than [`MAX_KEYS_TRIED`] keys fit the `alg`.
    TooManyCandidates { alg: Algorithm, count: usize },
    /// The signature does not verify under the keys tried.
    BadSignature,
}

/// Verifies a compact JWS against `keys` and returns its claims. The header is read first
/// and everything it may not say is refused before any key is used; the payload is parsed
/// only once its signature holds.
///
/// Key choice: a `kid` selects the keys with that `kid`; a token without one is tried against
/// every key that verifies its `alg`, as long as there are at most [`MAX_KEYS_TRIED`]. Either
/// way only keys that accept the `alg` (of its family, and pinned to it when the JWK says an
/// `alg`) are used: the token never chooses how a key is used.
pub(crate) fn verify(token: &str, keys: &KeySet) -> Result<Signed, JwsError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JwsError::TooLong { bytes: token.len() });
    }
    let mut parts = token.split('.');
    let (Some(header64), Some(payload64), Some(signature64), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwsError::Malformed("not three dot-separated parts"));
    };
    let header = object(header64, "header is not a base64url JSON object")?;
    let (alg, kid) = read_header(&header)?;
    let tried: Vec<_> = keys.named(kid.as_deref()).filter(|key| key.accepts(alg)).collect();
    if tried.is_empty() {
        return Err(match &kid {
            Some(kid) if keys.named(Some(kid)).next().is_none() => JwsError::UnknownKid(shown(kid)),
            _ => JwsError::AlgorithmNotTheKeys { alg, kid: kid.as_deref().map(shown) },
        });
    }
    if tried.len() > MAX_KEYS_TRIED {
        return Err(JwsError::TooManyCandidates { alg, count: tried.len() });
    }
    let signature = base64url_decode(signature64)
        .ok_or(JwsError::Malformed("signature is not unpadded base64url"))?;
    // The signing input is the header and payload as sent (RFC 7515 §5.2).
    let input = &token.as_bytes()[..header64.len() + 1 + payload64.len()];
    if !tried.iter().any(|key| key.key.verify(alg, input, &signature).is_ok()) {
        return Err(JwsError::BadSignature);
    }
    let claims = object(payload64, "payload is not a base64url JSON object")?;
    Ok(Signed { alg, kid, claims })
}

/// Refuses a header that names a critical extension (none is understood here) or a type
/// other than an access token's. HS256 tokens are held to it too.
pub(crate) fn refuse_extensions(header: &Map<String, Value>) -> Result<(), JwsError> {
    if let Some(crit) = header.get("crit") {
        return Err(JwsError::Critical(shown(&crit.to_string())));
    }
    // RFC 9068 §2.1 types an access token `at+jwt`; most providers (Entra, Keycloak, Okta,
    // Auth0 by default) still say `JWT` or nothing. Both are taken. Any other type names
    // another kind of JWT (a DPoP proof, a logout token...), which is never an access token.
    if let Some(typ) = typ(header)? {
        let media = match typ.get(..12) {
            Some(prefix) if prefix.eq_ignore_ascii_case("application/") => &typ[12..],
            _ => typ,
        };
        if !media.eq_ignore_ascii_case("at+jwt") && !media.eq_ignore_ascii_case("jwt") {
            return Err(JwsError::Type(shown(typ)));
        }
    }
    Ok(())
}

/// The header's `typ`, when it has one.
fn typ(header: &Map<String, Value>) -> Result<Option<&str>, JwsError> {
    match header.get("typ") {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.as_str())),
        Some(_) => Err(JwsError::Malformed("typ is not a string")),
    }
}

/// The header's `alg` and `kid`, once nothing in it is refused.
fn read_header(header: &Map<String, Value>) -> Result<(Algorithm, Option<String>), JwsError> {
    let text = |name, why| match header.get(name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.as_str())),
        Some(_) => Err(JwsError::Malformed(why)),
    };
    let name = text("alg", "alg is not a string")?.ok_or(JwsError::Malformed("no alg"))?;
    let alg = match Algorithm::from_name(name) {
        Some(alg) => alg,
        None if name.eq_ignore_ascii_case("none") => return Err(JwsError::Unsigned),
        None if name.starts_with("HS") => return Err(JwsError::Hmac(shown(name))),
        None => return Err(JwsError::UnknownAlgorithm(shown(name))),
    };
    refuse_extensions(header)?;
    let kid = text("kid", "kid is not a string")?.map(String::from);
    Ok((alg, kid))
}

/// A base64url part that must be a JSON object, not nested past [`MAX_DEPTH`]; `malformed`
/// says which part it is when it is not.
fn object(encoded: &str, malformed: &'static str) -> Result<Map<String, Value>, JwsError> {
    let json = base64url_decode(encoded).ok_or(JwsError::Malformed(malformed))?;
    if depth(&json) > MAX_DEPTH {
        return Err(JwsError::Malformed("header or payload nests too deep"));
    }
    match serde_json::from_slice(&json) {
        Ok(Value::Object(map)) => Ok(map),
        _ => Err(JwsError::Malformed(malformed)),
    }
}

/// How deep arrays and objects nest in `json`, brackets inside strings aside. Counted before
/// parsing, so that a hostile token costs a pass over its bytes, never a deep recursion.
fn depth(json: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0, false, false);
    for &b in json {
        match (in_string, b) {
            (true, _) if escaped => escaped = false,
            (true, b'\\') => escaped = true,
            (_, b'"') => in_string = !in_string,
            (false, b'[' | b'{') => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            (false, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

impl fmt::Display for JwsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JwsError::TooLong { bytes } => {
                write!(f, "token of {bytes} bytes (at most {MAX_TOKEN_BYTES} are read)")
            }
            JwsError::Malformed(why) => write!(f, "malformed token: {why}"),
            JwsError::Unsigned => f.write_str("token is unsigned (alg none)"),
            JwsError::Hmac(alg) => {
                write!(f, "token algorithm {alg} is HMAC, refused with public keys")
            }
            JwsError::UnknownAlgorithm(alg) => write!(
                f,
                "token algorithm {alg} is not verified here (RS256, PS256, ES256 and EdDSA are)"
            ),
            JwsError::Critical(crit) => write!(f, "token has critical header extensions {crit}"),
            JwsError::Type(typ) => write!(f, "token typ {typ} is not an access token"),
            JwsError::UnknownKid(kid) => write!(f, "token kid {kid} names no key in the JWKS"),
            JwsError::AlgorithmNotTheKeys { alg, kid: Some(kid) } => {
                write!(f, "token algorithm {} is not that of the key with kid {kid}", alg.name())
            }
            JwsError::AlgorithmNotTheKeys { alg, kid: None } => {
                write!(f, "token algorithm {} is that of no key in the JWKS", alg.name())
            }
            JwsError::TooManyCandidates { alg, count } => write!(
                f,
                "token has no kid and {count} keys verify {} (at most {MAX_KEYS_TRIED} are tried)",
                alg.name()
            ),
            JwsError::BadSignature => f.write_str("token signature does not verify"),
        }
    }
}

impl std::error::Error for JwsError {}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::crypto::jwks::tests::{minted, minted_key};
    use crate::util::encoding::base64url;

    /// A token with this header, a payload that would pass and a signature that would not:
    /// what the header check alone decides.
    fn forged(header: &Value) -> String {
        let payload = json!({"sub": "x", "exp": 4_000_000_000u64});
        let signature = base64url(&[7; 64]);
        format!(
            "{}.{}.{signature}",
            base64url(header.to_string().as_bytes()),
            base64url(payload.to_string().as_bytes())
        )
    }

    fn keys(doc: &Value) -> KeySet {
        KeySet::parse(doc.to_string().as_bytes()).unwrap().0
    }

    /// The minted set, read once: reading it tests each RSA modulus for primality, which
    /// takes an unoptimized test build most of a second.
    fn minted_keys() -> &'static KeySet {
        static SET: std::sync::OnceLock<KeySet> = std::sync::OnceLock::new();
        SET.get_or_init(|| keys(&minted()))
    }

    fn refusal(header: Value) -> String {
        verify(&forged(&header), minted_keys()).unwrap_err().to_string()
    }

    #[test]
    fn the_header_is_judged_before_any_key_is_used() {
        for (header, why) in [
            (json!({"alg": "none"}), "token is unsigned (alg none)"),
            (json!({"alg": "NONE", "kid": "ec-1"}), "token is unsigned (alg none)"),
            (
                json!({"alg": "HS256", "kid": "rsa-1"}),
                r#"token algorithm "HS256" is HMAC, refused with public keys"#,
            ),
            (
                json!({"alg": "HS512"}),
                r#"token algorithm "HS512" is HMAC, refused with public keys"#,
            ),
            (
                json!({"alg": "RS512"}),
                r#"token algorithm "RS512" is not verified here (RS256, PS256, ES256 and EdDSA are)"#,
            ),
            (
                json!({"alg": ""}),
                r#"token algorithm "" is not verified here (RS256, PS256, ES256 and EdDSA are)"#,
            ),
            (json!({"kid": "ec-1"}), "malformed token: no alg"),
            (json!({"alg": ["ES256"]}), "malformed token: alg is not a string"),
            (json!({"alg": "ES256", "kid": 1}), "malformed token: kid is not a string"),
            (json!({"alg": "ES256", "typ": null}), "malformed token: typ is not a string"),
            (
                json!({"alg": "ES256", "kid": "ec-1", "crit": []}),
                "token has critical header extensions \"[]\"",
            ),
            (
                json!({"alg": "ES256", "kid": "ec-1", "crit": ["exp"], "exp": 1}),
                r#"token has critical header extensions "[\"exp\"]""#,
            ),
            (
                json!({"alg": "ES256", "typ": "dpop+jwt"}),
                r#"token typ "dpop+jwt" is not an access token"#,
            ),
            (
                json!({"alg": "ES256", "typ": "application/jose"}),
                r#"token typ "application/jose" is not an access token"#,
            ),
            (json!({"alg": "ES256", "typ": ""}), r#"token typ "" is not an access token"#),
            (
                json!({"alg": "ES256", "typ": "application/"}),
                r#"token typ "application/" is not an access token"#,
            ),
            (
                json!({"alg": "ES256", "kid": "rsa-gone"}),
                r#"token kid "rsa-gone" names no key in the JWKS"#,
            ),
            (
                json!({"alg": "ES256", "kid": "rsa-enc"}),
                r#"token kid "rsa-enc" names no key in the JWKS"#,
            ),
            (
                json!({"alg": "PS256", "kid": "rsa-1"}),
                r#"token algorithm PS256 is not that of the key with kid "rsa-1""#,
            ),
        ] {
            assert_eq!(refusal(header.clone()), why, "{header}");
        }
        // The accepted types, and the signature judged next.
        for typ in ["JWT", "jwt", "at+jwt", "AT+JWT", "application/at+jwt", "Application/JWT"] {
            let header = json!({"alg": "ES256", "kid": "ec-1", "typ": typ});
            assert_eq!(refusal(header), "token signature does not verify", "{typ}");
        }
        let only_ec = keys(&json!({"keys": [minted_key("ec-1")]}));
        assert_eq!(
            verify(&forged(&json!({"alg": "RS256"})), &only_ec).unwrap_err().to_string(),
            "token algorithm RS256 is that of no key in the JWKS"
        );
    }

    #[test]
    fn malformed_tokens_are_named_as_such() {
        let set = minted_keys();
        let good = forged(&json!({"alg": "ES256", "kid": "ec-1"}));
        let (header, rest) = good.split_once('.').unwrap();
        let (payload, _) = rest.split_once('.').unwrap();
        for (token, why) in [
            (String::new(), "not three dot-separated parts"),
            (format!("{header}.{payload}"), "not three dot-separated parts"),
            (format!("{good}.{payload}"), "not three dot-separated parts"),
            (format!("{header}=.{rest}"), "header is not a base64url JSON object"),
            (format!("{}.{rest}", base64url(b"[1]")), "header is not a base64url JSON object"),
            (
                format!("{}.{rest}", base64url(b"{\"alg\":")),
                "header is not a base64url JSON object",
            ),
            (format!("{header}.{payload}.AAAA="), "signature is not unpadded base64url"),
            (format!("{header}.{payload}.AA/A"), "signature is not unpadded base64url"),
        ] {
            assert_eq!(verify(&token, set), Err(JwsError::Malformed(why)), "{token}");
        }
    }

    #[test]
    fn hostile_sizes_are_refused_before_they_cost() {
        let set = minted_keys();
        // Nesting: fifteen levels are read, seventeen refused (brackets in strings uncounted).
        let nest = |levels: usize| {
            let mut value = json!({"alg": "ES256", "kid": "ec-1", "x": "[[[[{{{{\\\"[[[["});
            for _ in 1..levels {
                value = json!({"alg": "ES256", "kid": "ec-1", "x": [value]});
            }
            value
        };
        assert_eq!(depth(nest(8).to_string().as_bytes()), 15);
        assert_eq!(depth(br#"[{"a":"]]\"{{"},[[[]]]]"#), 4);
        let deep = verify(&forged(&nest(9)), set);
        assert_eq!(deep, Err(JwsError::Malformed("header or payload nests too deep")));
        assert_eq!(verify(&forged(&nest(8)), set), Err(JwsError::BadSignature));
        // Length: the bound itself is read (and judged on), one byte more is not.
        let token = forged(&json!({"alg": "ES256", "kid": "ec-1"}));
        let (prefix, _) = token.rsplit_once('.').unwrap();
        let sized = |len: usize| format!("{prefix}.{}", "A".repeat(len - prefix.len() - 1));
        assert_ne!(
            verify(&sized(MAX_TOKEN_BYTES), set),
            Err(JwsError::TooLong { bytes: MAX_TOKEN_BYTES })
        );
        let over = verify(&sized(MAX_TOKEN_BYTES + 1), set);
        assert_eq!(over, Err(JwsError::TooLong { bytes: MAX_TOKEN_BYTES + 1 }));
        // Keys: without a kid, at most four are tried.
        let five: Vec<_> = (0..5)
            .map(|i| {
                let mut key = minted_key("ec-1");
                key.insert("kid".into(), json!(format!("ec-{i}")));
                key
            })
            .collect();
        let unkeyed = forged(&json!({"alg": "ES256"}));
        let many = verify(&unkeyed, &keys(&json!({"keys": five})));
        assert_eq!(many, Err(JwsError::TooManyCandidates { alg: Algorithm::Es256, count: 5 }));
        let four = verify(&unkeyed, &keys(&json!({"keys": &five[..4]})));
        assert_eq!(four, Err(JwsError::BadSignature));
    }
}
