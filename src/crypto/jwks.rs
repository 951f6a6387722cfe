//! A JSON Web Key Set (RFC 7517 §5) read into the public keys `key.rs` verifies with: RSA,
//! EC P-256 and OKP Ed25519 keys (RFC 7518 §6, RFC 8037 §2), each with its `kid` and the
//! `alg` that pins it. Keys this crate cannot or must not verify with are skipped, each with
//! its reason; a set with no usable key at all is refused.

use std::fmt;

use serde_json::{Map, Value};

use super::key::{Algorithm, PublicKey};
use super::key_error::KeyError;
use crate::util::encoding::base64url_decode;

/// The largest JWKS read. Providers publish a few keys, some with certificate chains (`x5c`):
/// tens of kilobytes at most.
pub(crate) const MAX_JWKS_BYTES: usize = 1 << 20;

/// The most keys a set may hold (usable or not). Providers keep two or three during a rotation.
pub(crate) const MAX_KEYS: usize = 100;

/// The longest base64url member read: an 8192-bit modulus (the largest accepted) is 1366
/// characters, with a leading zero byte 1367. Longer text is refused before it is decoded.
const MAX_MEMBER_CHARS: usize = 1400;

/// The longest `kid` kept; a token naming a longer one names no key.
const MAX_KID_CHARS: usize = 256;

/// The usable keys of a set, in the file's order.
#[derive(Clone, Debug)]
pub(crate) struct KeySet {
    keys: Vec<Jwk>,
}

/// One usable key.
#[derive(Clone, Debug)]
pub(crate) struct Jwk {
    /// The key's `kid`, which a token's header names to choose it.
    pub(crate) kid: Option<String>,
    /// The key's `alg`: when set, the only algorithm it verifies (RFC 7517 §4.4).
    pub(crate) alg: Option<Algorithm>,
    pub(crate) key: PublicKey,
}

/// A key of the set that is not used, and why (logged when the set is read).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Skipped {
    /// The key's place in `keys`, from 0.
    pub(crate) index: usize,
    pub(crate) kid: Option<String>,
    pub(crate) why: KeyProblem,
}

/// Why one key of a set is not used.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum KeyProblem {
    /// Not a JSON object.
    NotAnObject,
    /// A `kty` other than `RSA`, `EC` and `OKP` (`oct` among them: HMAC tokens are refused).
    UnknownType(String),
    /// An EC or OKP curve other than P-256 and Ed25519.
    UnknownCurve(String),
    /// `use` is not `sig` (an encryption key, `enc`, has no place in verifying).
    NotForSignatures(String),
    /// `key_ops` is given and does not list `verify`.
    NotForVerifying,
    /// An `alg` not verified here (`RS384`, `RSA-OAEP`, ...).
    UnverifiedAlgorithm(String),
    /// An `alg` of another key family (`ES256` on an RSA key).
    AlgorithmOfAnotherType { alg: Algorithm, kty: &'static str },
    /// Private key material (`d`, or RSA's `p`, `q`, ...) in what should be a public set.
    Private,
    /// A member that is missing, not a string, not base64url or too long.
    Member { name: &'static str, why: &'static str },
    /// Key material refused by the bounds (`KeyError`).
    Key(KeyError),
}

/// Why a whole set was refused.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum JwksError {
    TooLarge {
        bytes: usize,
    },
    NotJson(String),
    /// Valid JSON, but not an object with a `keys` array.
    NoKeysArray,
    TooManyKeys {
        count: usize,
    },
    /// Every key was skipped (the list says why); an empty `keys` is this too.
    NoUsableKey(Vec<Skipped>),
}

impl KeySet {
    /// Reads a JWKS document: the usable keys, and those skipped with their reasons.
    pub(crate) fn parse(text: &[u8]) -> Result<(KeySet, Vec<Skipped>), JwksError> {
        if text.len() > MAX_JWKS_BYTES {
            return Err(JwksError::TooLarge { bytes: text.len() });
        }
        let doc: Value =
            serde_json::from_slice(text).map_err(|e| JwksError::NotJson(e.to_string()))?;
        let Some(list) = doc.get("keys").and_then(Value::as_array) else {
            return Err(JwksError::NoKeysArray);
        };
        if list.len() > MAX_KEYS {
            return Err(JwksError::TooManyKeys { count: list.len() });
        }
        let (mut keys, mut skipped) = (Vec::new(), Vec::new());
        for (index, member) in list.iter().enumerate() {
            let kid = member.get("kid").and_then(Value::as_str).map(String::from);
            match member.as_object().ok_or(KeyProblem::NotAnObject).and_then(read_key) {
                Ok(key) => keys.push(key),
                Err(why) => skipped.push(Skipped { index, kid, why }),
            }
        }
        if keys.is_empty() {
            return Err(JwksError::NoUsableKey(skipped));
        }
        Ok((KeySet { keys }, skipped))
    }

    /// The keys a token's header points at: those with its `kid` (every key when it names
    /// none), whether or not they verify its `alg`.
    pub(crate) fn named<'a>(&'a self, kid: Option<&'a str>) -> impl Iterator<Item = &'a Jwk> {
        self.keys.iter().filter(move |key| kid.is_none_or(|kid| key.kid.as_deref() == Some(kid)))
    }

    /// How many keys are usable.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }
}

impl Jwk {
    /// Whether this key verifies `alg`: of its family, and pinned to it when pinned at all.
    pub(crate) fn accepts(&self, alg: Algorithm) -> bool {
        self.key.fits(alg) && self.alg.is_none_or(|pinned| pinned == alg)
    }
}

impl KeyProblem {
    /// Whether the key is broken, rather than merely of a kind not used here (an encryption
    /// key, a curve not supported): the loader warns about the first and notes the second.
    pub(crate) fn malformed(&self) -> bool {
        matches!(
            self,
            KeyProblem::NotAnObject
                | KeyProblem::AlgorithmOfAnotherType { .. }
                | KeyProblem::Private
                | KeyProblem::Member { .. }
                | KeyProblem::Key(_)
        )
    }
}

/// One JWK into a usable key, or why not. The checks that say a key is not meant for
/// verifying come before those of its material, so an encryption key is never called broken.
fn read_key(jwk: &Map<String, Value>) -> Result<Jwk, KeyProblem> {
    let kty = text(jwk, "kty")?.ok_or(KeyProblem::Member { name: "kty", why: "is missing" })?;
    match text(jwk, "use")? {
        None | Some("sig") => {}
        Some(other) => return Err(KeyProblem::NotForSignatures(shown(other))),
    }
    if let Some(ops) = jwk.get("key_ops") {
        let ops = ops.as_array().ok_or(KeyProblem::Member { name: "key_ops", why: NOT_LIST })?;
        if !ops.iter().any(|op| op == "verify") {
            return Err(KeyProblem::NotForVerifying);
        }
    }
    let alg = match text(jwk, "alg")? {
        None => None,
        Some(name) => Some(
            Algorithm::from_name(name)
                .ok_or_else(|| KeyProblem::UnverifiedAlgorithm(shown(name)))?,
        ),
    };
    let kid = match text(jwk, "kid")? {
        Some(kid) if kid.len() > MAX_KID_CHARS => {
            return Err(KeyProblem::Member { name: "kid", why: "is over 256 characters" });
        }
        kid => kid.map(String::from),
    };
    // RFC 7518 §6.3.2 and RFC 8037 §2 name the private members.
    if ["d", "p", "q", "dp", "dq", "qi", "oth"].iter().any(|name| jwk.contains_key(*name)) {
        return Err(KeyProblem::Private);
    }
    let key = match kty {
        "RSA" => PublicKey::rsa(&bytes(jwk, "n")?, &bytes(jwk, "e")?),
        "EC" => match text(jwk, "crv")? {
            Some("P-256") => PublicKey::p256(&bytes(jwk, "x")?, &bytes(jwk, "y")?),
            other => return Err(KeyProblem::UnknownCurve(shown(other.unwrap_or("(none)")))),
        },
        "OKP" => match text(jwk, "crv")? {
            Some("Ed25519") => PublicKey::ed25519(&bytes(jwk, "x")?),
            other => return Err(KeyProblem::UnknownCurve(shown(other.unwrap_or("(none)")))),
        },
        other => return Err(KeyProblem::UnknownType(shown(other))),
    }
    .map_err(KeyProblem::Key)?;
    if let Some(alg) = alg
        && !key.fits(alg)
    {
        let kty = match key {
            PublicKey::Rsa(_) => "RSA",
            PublicKey::P256(_) => "EC",
            PublicKey::Ed25519(_) => "OKP",
        };
        return Err(KeyProblem::AlgorithmOfAnotherType { alg, kty });
    }
    Ok(Jwk { kid, alg, key })
}

const NOT_TEXT: &str = "is not a string";
const NOT_LIST: &str = "is not an array";

/// A string member, when present.
fn text<'a>(
    jwk: &'a Map<String, Value>,
    name: &'static str,
) -> Result<Option<&'a str>, KeyProblem> {
    match jwk.get(name) {
        None => Ok(None),
        Some(Value::String(text)) => Ok(Some(text)),
        Some(_) => Err(KeyProblem::Member { name, why: NOT_TEXT }),
    }
}

/// A required base64url member's bytes.
fn bytes(jwk: &Map<String, Value>, name: &'static str) -> Result<Vec<u8>, KeyProblem> {
    let member = |why| KeyProblem::Member { name, why };
    let encoded = text(jwk, name)?.ok_or(member("is missing"))?;
    if encoded.len() > MAX_MEMBER_CHARS {
        return Err(member("is over 1400 characters"));
    }
    base64url_decode(encoded).ok_or(member("is not unpadded base64url"))
}

/// A name from a key set or a token, quoted (escapes and all) and cut short, for a log line.
pub(super) fn shown(text: &str) -> String {
    let cut: String = text.chars().take(40).collect();
    format!("{cut:?}")
}

impl fmt::Display for KeyProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyProblem::NotAnObject => f.write_str("not a JSON object"),
            KeyProblem::UnknownType(kty) => {
                write!(f, "kty {kty} is not verified here (RSA, EC and OKP are)")
            }
            KeyProblem::UnknownCurve(crv) => {
                write!(f, "crv {crv} is not verified here (P-256 and Ed25519 are)")
            }
            KeyProblem::NotForSignatures(usage) => write!(f, "use {usage} is not \"sig\""),
            KeyProblem::NotForVerifying => f.write_str("key_ops does not list \"verify\""),
            KeyProblem::UnverifiedAlgorithm(alg) => {
                write!(f, "alg {alg} is not verified here (RS256, PS256, ES256 and EdDSA are)")
            }
            KeyProblem::AlgorithmOfAnotherType { alg, kty } => {
                write!(f, "alg {} does not belong to a kty {kty} key", alg.name())
            }
            KeyProblem::Private => {
                f.write_str("holds private key material: publish only the public members")
            }
            KeyProblem::Member { name, why } => write!(f, "member {name} {why}"),
            KeyProblem::Key(error) => write!(f, "{error}"),
        }
    }
}

impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kid {
            Some(kid) => write!(f, "key {} (kid {}): {}", self.index, shown(kid), self.why),
            None => write!(f, "key {}: {}", self.index, self.why),
        }
    }
}

impl fmt::Display for JwksError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            JwksError::TooLarge { bytes } => {
                write!(f, "a JWKS of {bytes} bytes (at most {MAX_JWKS_BYTES} are read)")
            }
            JwksError::NotJson(error) => write!(f, "not JSON: {error}"),
            JwksError::NoKeysArray => f.write_str(r#"not a JWKS: no "keys" array"#),
            JwksError::TooManyKeys { count } => {
                write!(f, "a JWKS of {count} keys (at most {MAX_KEYS} are read)")
            }
            JwksError::NoUsableKey(skipped) if skipped.is_empty() => {
                f.write_str("no usable key: the keys array is empty")
            }
            JwksError::NoUsableKey(skipped) => {
                f.write_str("no usable key:")?;
                skipped.iter().try_for_each(|s| write!(f, " {s};"))
            }
        }
    }
}

impl std::error::Error for JwksError {}

#[cfg(test)]
pub(super) mod tests {
    use serde_json::json;

    use super::*;

    /// The fixture set minted by `fixtures/jwt/mint.mjs` (npm jose): RSA 2048, 4096 and 3072
    /// bits (the last pinned to PS256), P-256, Ed25519 without `alg`, and an encryption key.
    pub(in crate::crypto) fn minted() -> Value {
        let path = format!("{}/fixtures/jwt/jwks.json", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    /// The fixture's key with this `kid`, as JSON to alter.
    pub(in crate::crypto) fn minted_key(kid: &str) -> Map<String, Value> {
        let keys = minted()["keys"].as_array().unwrap().clone();
        let key = keys.into_iter().find(|k| k["kid"] == kid).unwrap();
        key.as_object().unwrap().clone()
    }

    /// `fixtures/jwt/prime.json`, made by `forged.py`: a JWKS whose one RSA key (kid `prime`)
    /// has a 2048-bit prime modulus, and an RS256 token forged for it with the private
    /// exponent anyone can compute, `d = e^-1 mod (n - 1)`.
    pub(in crate::crypto) fn prime_fixture() -> Value {
        let path = format!("{}/fixtures/jwt/prime.json", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    /// `fixtures/jwt/square.json`, made by `forged.py`: the same with a modulus that is the
    /// square of a 1024-bit prime (kid `square`), the token forged with `d = e^-1 mod p(p - 1)`.
    pub(in crate::crypto) fn square_fixture() -> Value {
        let path = format!("{}/fixtures/jwt/square.json", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    fn parse(doc: &Value) -> Result<(KeySet, Vec<Skipped>), JwksError> {
        KeySet::parse(doc.to_string().as_bytes())
    }

    #[test]
    fn the_minted_set_reads_with_its_encryption_key_skipped() {
        let (set, skipped) = parse(&minted()).unwrap();
        let kids: Vec<_> = set.named(None).map(|k| k.kid.as_deref().unwrap()).collect();
        assert_eq!(kids, ["rsa-1", "rsa-4096", "rsa-pss", "ec-1", "ed-1"]);
        let pins: Vec<_> = set.named(None).map(|k| k.alg.map(Algorithm::name)).collect();
        assert_eq!(pins, [Some("RS256"), Some("RS256"), Some("PS256"), Some("ES256"), None]);
        assert_eq!(skipped.len(), 1);
        assert_eq!(skipped[0].to_string(), r#"key 5 (kid "rsa-enc"): use "enc" is not "sig""#);
        assert!(!skipped[0].why.malformed());
        // A pinned key verifies its algorithm only; an unpinned one its family's.
        let rsa = set.named(Some("rsa-1")).next().unwrap();
        assert!(rsa.accepts(Algorithm::Rs256) && !rsa.accepts(Algorithm::Ps256));
        let ed = set.named(Some("ed-1")).next().unwrap();
        assert!(ed.accepts(Algorithm::EdDsa) && !ed.accepts(Algorithm::Es256));
        assert_eq!(set.named(Some("nope")).count(), 0);
    }

    /// Each altered key is skipped for its own reason, and the set still reads for the good one.
    // tidy: table
    #[test]
    fn each_unusable_key_is_skipped_with_its_reason() {
        let altered = |kid: &str, changes: Value| {
            let mut key = minted_key(kid);
            for (name, value) in changes.as_object().unwrap() {
                match value {
                    Value::Null => key.remove(name),
                    _ => key.insert(name.clone(), value.clone()),
                };
            }
            Value::Object(key)
        };
        let cases = [
            (json!("a string"), "not a JSON object", true),
            (
                altered("ec-1", json!({"kty": "oct", "k": "c2VjcmV0"})),
                r#"kty "oct" is not verified here (RSA, EC and OKP are)"#,
                false,
            ),
            (
                altered("ec-1", json!({"crv": "P-384"})),
                r#"crv "P-384" is not verified here (P-256 and Ed25519 are)"#,
                false,
            ),
            (
                altered("ed-1", json!({"crv": "X25519"})),
                r#"crv "X25519" is not verified here (P-256 and Ed25519 are)"#,
                false,
            ),
            (
                altered("ed-1", json!({"crv": null})),
                r#"crv "(none)" is not verified here (P-256 and Ed25519 are)"#,
                false,
            ),
            (
                altered("ec-1", json!({"key_ops": ["sign"]})),
                r#"key_ops does not list "verify""#,
                false,
            ),
            (
                altered("rsa-1", json!({"alg": "RS512"})),
                r#"alg "RS512" is not verified here (RS256, PS256, ES256 and EdDSA are)"#,
                false,
            ),
            (altered("rsa-1", json!({"use": "tls"})), r#"use "tls" is not "sig""#, false),
            (
                altered("rsa-1", json!({"alg": "ES256"})),
                "alg ES256 does not belong to a kty RSA key",
                true,
            ),
            (
                altered("ed-1", json!({"alg": "ES256"})),
                "alg ES256 does not belong to a kty OKP key",
                true,
            ),
            (
                altered("ec-1", json!({"d": "AAAA"})),
                "holds private key material: publish only the public members",
                true,
            ),
            (altered("rsa-1", json!({"n": null})), "member n is missing", true),
            (altered("rsa-1", json!({"e": 65537})), "member e is not a string", true),
            (altered("rsa-1", json!({"kty": null})), "member kty is missing", true),
            (
                altered("ec-1", json!({"x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU="})),
                "member x is not unpadded base64url",
                true,
            ),
            (
                altered("ec-1", json!({"y": "x/FEzRu9m36HLN/tue659LNpXW6pCyStikYjKIWI5a0"})),
                "member y is not unpadded base64url",
                true,
            ),
            (
                altered("rsa-1", json!({"n": "A".repeat(1401)})),
                "member n is over 1400 characters",
                true,
            ),
            (
                altered("rsa-1", json!({"kid": "k".repeat(257)})),
                "member kid is over 256 characters",
                true,
            ),
            (
                altered("rsa-1", json!({"key_ops": "verify"})),
                "member key_ops is not an array",
                true,
            ),
            (
                altered("rsa-1", json!({"n": "AQAB"})),
                "an RSA modulus of 17 bits (2048 to 8192 are accepted)",
                true,
            ),
            (
                altered("ec-1", json!({"y": minted_key("ec-1")["x"]})),
                "coordinates of no point on P-256",
                true,
            ),
            (
                altered("ed-1", json!({"x": "AQAB"})),
                "an Ed25519 public key of 3 bytes (32 are required)",
                true,
            ),
        ];
        for (key, why, malformed) in cases {
            let doc = json!({"keys": [key, minted_key("ec-1")]});
            let (set, skipped) = parse(&doc).unwrap_or_else(|e| panic!("{key}: {e}"));
            assert_eq!(set.len(), 1);
            assert_eq!(skipped.len(), 1, "{key}");
            assert_eq!(skipped[0].index, 0);
            assert_eq!(skipped[0].why.to_string(), why, "{key}");
            assert_eq!(skipped[0].why.malformed(), malformed, "{key}");
        }
        // `use: sig` and a `key_ops` listing `verify` are usable.
        let fine = altered("rsa-1", json!({"use": "sig", "key_ops": ["verify"]}));
        assert_eq!(parse(&json!({"keys": [fine]})).unwrap().1, []);
    }

    #[test]
    fn prime_and_square_moduli_are_refused_and_tokens_forged_for_them_do_not_verify() {
        for (doc, kid, why) in [
            (prime_fixture(), "prime", "an RSA modulus that is prime"),
            (square_fixture(), "square", "an RSA modulus that is a perfect square"),
        ] {
            let mut keys = doc["jwks"]["keys"].as_array().unwrap().clone();
            keys.push(Value::Object(minted_key("ec-1")));
            let (set, skipped) = parse(&json!({"keys": keys})).unwrap();
            // The forged token names a key that was not kept: nothing verifies it.
            let forged = doc["token"].as_str().unwrap();
            let error = crate::crypto::verify_jws(forged, &set).unwrap_err();
            assert_eq!(error, crate::crypto::JwsError::UnknownKid(format!("\"{kid}\"")));
            assert_eq!(skipped.len(), 1);
            assert_eq!(skipped[0].to_string(), format!(r#"key 0 (kid "{kid}"): {why}"#));
            // Alone, the key leaves no usable key: the set is refused whole.
            let refused = parse(&doc["jwks"]).unwrap_err().to_string();
            assert_eq!(refused, format!(r#"no usable key: key 0 (kid "{kid}"): {why};"#));
        }
    }

    #[test]
    fn a_set_is_refused_whole_only_when_nothing_in_it_is_usable() {
        let refused = |doc: &[u8]| KeySet::parse(doc).unwrap_err().to_string();
        assert_eq!(refused(b"{\"keys\": [}"), "not JSON: expected value at line 1 column 11");
        assert_eq!(refused(b"[]"), r#"not a JWKS: no "keys" array"#);
        assert_eq!(
            refused(&serde_json::to_vec(&minted_key("ec-1")).unwrap()),
            r#"not a JWKS: no "keys" array"#
        );
        assert_eq!(refused(br#"{"keys": {}}"#), r#"not a JWKS: no "keys" array"#);
        assert_eq!(refused(br#"{"keys": []}"#), "no usable key: the keys array is empty");
        let enc = json!({"keys": [minted_key("rsa-enc"), 5]});
        assert_eq!(
            refused(enc.to_string().as_bytes()),
            r#"no usable key: key 0 (kid "rsa-enc"): use "enc" is not "sig"; key 1: not a JSON object;"#
        );
        let many = json!({"keys": vec![minted_key("ec-1"); MAX_KEYS + 1]});
        assert_eq!(
            refused(many.to_string().as_bytes()),
            "a JWKS of 101 keys (at most 100 are read)"
        );
        assert!(parse(&json!({"keys": vec![minted_key("ec-1"); MAX_KEYS]})).is_ok());
        let big = vec![b' '; MAX_JWKS_BYTES + 1];
        assert_eq!(refused(&big), "a JWKS of 1048577 bytes (at most 1048576 are read)");
    }
}
