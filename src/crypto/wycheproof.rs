//! The Wycheproof vectors (`fixtures/wycheproof/`, from C2SP/wycheproof): every case of each
//! file gets its expected verdict through the API a JWT check uses, keys built from the
//! vectors' JWKs as a JWKS would give them. Each file's tally is pinned, so a case that goes
//! unrun, or a key the bounds refuse, changes a number here and is seen.

use serde_json::Value;

use crate::crypto::{Algorithm, KeyError, PublicKey, VerifyError};
use crate::util::encoding::base64url_decode;

/// What one file's cases came to.
#[derive(Debug, Default, PartialEq)]
struct Tally {
    /// Cases run: all of the file's.
    run: usize,
    /// `valid` cases, each accepted.
    valid: usize,
    /// `invalid` cases, each refused.
    invalid: usize,
    /// `acceptable` cases, accepted or refused as [`accept_acceptable`] decides.
    acceptable_accepted: usize,
    acceptable_refused: usize,
    /// Cases under a key the bounds refused, which are not run.
    under_refused_keys: usize,
}

/// The verdict for an `acceptable` case, by its flags. Only one kind occurs in these files:
/// `MissingNull`, a PKCS#1 v1.5 `DigestInfo` without the `NULL` parameters. RFC 8017 §9.2
/// encodes with the `NULL`, every JWS signer does, and comparing against the one encoding is
/// what keeps the check free of parsing: refused. Another flag fails the test until decided.
fn accept_acceptable(flags: &[&str]) -> bool {
    match flags {
        ["MissingNull"] => false,
        _ => panic!("an acceptable case with flags {flags:?}: decide and document its verdict"),
    }
}

fn check(file: &str, alg: Algorithm, want: Tally) {
    let path = format!("{}/fixtures/wycheproof/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let doc: Value = serde_json::from_str(&text).unwrap();
    let mut tally = Tally::default();
    let mut wrong = Vec::new();
    for group in doc["testGroups"].as_array().unwrap() {
        check_parameters(group, alg);
        let key = key_of(group, alg);
        for case in group["tests"].as_array().unwrap() {
            tally.run += 1;
            let Ok(key) = &key else {
                // Refused keys are counted, never run: the pinned tally shows them.
                tally.under_refused_keys += 1;
                continue;
            };
            let message = unhex(case["msg"].as_str().unwrap());
            let signature = unhex(case["sig"].as_str().unwrap());
            let accepted = match key.verify(alg, &message, &signature) {
                Ok(()) => true,
                Err(VerifyError::BadSignature) => false,
                Err(error) => panic!("{file}: {error}"),
            };
            let flags: Vec<&str> =
                case["flags"].as_array().unwrap().iter().map(|f| f.as_str().unwrap()).collect();
            let expected = match case["result"].as_str().unwrap() {
                "valid" => {
                    tally.valid += 1;
                    true
                }
                "invalid" => {
                    tally.invalid += 1;
                    false
                }
                _ if accept_acceptable(&flags) => {
                    tally.acceptable_accepted += 1;
                    true
                }
                _ => {
                    tally.acceptable_refused += 1;
                    false
                }
            };
            if accepted != expected {
                wrong.push(format!(
                    "tcId {} ({}, {flags:?}): expected {expected}, got {accepted}",
                    case["tcId"],
                    case["comment"].as_str().unwrap_or(""),
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "{file}: {} wrong verdicts:\n{}", wrong.len(), wrong.join("\n"));
    assert_eq!(tally.run, doc["numberOfTests"].as_u64().unwrap() as usize, "{file}: cases run");
    assert_eq!(tally, want, "{file}: the tally changed");
}

/// The group's key through the constructors a JWKS loader calls, from its JWK members. A few
/// P-256 groups come without a JWK; their coordinates come from the uncompressed point, which
/// holds the same fixed 32 bytes each (checked where both are given).
fn key_of(group: &Value, alg: Algorithm) -> Result<PublicKey, KeyError> {
    let jwk = ["publicKeyJwk", "keyJwk"].iter().map(|name| &group[name]).find(|j| j.is_object());
    let member = |name: &str| jwk.map(|jwk| base64url(jwk[name].as_str().unwrap()));
    match alg {
        Algorithm::Rs256 | Algorithm::Ps256 => {
            PublicKey::rsa(&member("n").unwrap(), &member("e").unwrap())
        }
        Algorithm::Es256 => {
            let point = unhex(group["publicKey"]["uncompressed"].as_str().unwrap());
            let (x, y) = (&point[1..33], &point[33..]);
            assert!(
                point[0] == 4 && member("x").is_none_or(|jx| jx == x && member("y").unwrap() == y)
            );
            PublicKey::p256(x, y)
        }
        Algorithm::EdDsa => PublicKey::ed25519(&member("x").unwrap()),
    }
}

/// The group's parameters are the ones `alg` fixes, so no vector of another hash or salt
/// length passes for one of these.
fn check_parameters(group: &Value, alg: Algorithm) {
    let expect = |name: &str, value: Value| assert_eq!(group[name], value, "group {name}");
    match alg {
        Algorithm::Rs256 => expect("sha", "SHA-256".into()),
        Algorithm::Es256 => {
            expect("sha", "SHA-256".into());
            assert_eq!(group["publicKey"]["curve"], "secp256r1");
        }
        Algorithm::Ps256 => {
            expect("sha", "SHA-256".into());
            expect("mgf", "MGF1".into());
            expect("mgfSha", "SHA-256".into());
            expect("sLen", 32.into());
        }
        Algorithm::EdDsa => assert_eq!(group["publicKey"]["curve"], "edwards25519"),
    }
}

#[test]
fn rsa_pkcs1_2048() {
    let want =
        Tally { run: 259, valid: 9, invalid: 249, acceptable_refused: 1, ..Tally::default() };
    check("rsa_signature_2048_sha256_test.json", Algorithm::Rs256, want);
}

#[test]
fn rsa_pkcs1_3072() {
    let want =
        Tally { run: 259, valid: 8, invalid: 250, acceptable_refused: 1, ..Tally::default() };
    check("rsa_signature_3072_sha256_test.json", Algorithm::Rs256, want);
}

#[test]
fn rsa_pkcs1_4096() {
    let want =
        Tally { run: 258, valid: 7, invalid: 250, acceptable_refused: 1, ..Tally::default() };
    check("rsa_signature_4096_sha256_test.json", Algorithm::Rs256, want);
}

#[test]
fn rsa_pss_2048() {
    let want = Tally { run: 108, valid: 63, invalid: 45, ..Tally::default() };
    check("rsa_pss_2048_sha256_mgf1_32_test.json", Algorithm::Ps256, want);
}

#[test]
fn ecdsa_p256_p1363() {
    let want = Tally { run: 262, valid: 173, invalid: 89, ..Tally::default() };
    check("ecdsa_secp256r1_sha256_p1363_test.json", Algorithm::Es256, want);
}

#[test]
fn ed25519() {
    let want = Tally { run: 151, valid: 88, invalid: 63, ..Tally::default() };
    check("ed25519_test.json", Algorithm::EdDsa, want);
}

/// One verification per algorithm, timed: the first valid case of a file, run `ROUNDS` times.
/// `cargo test --release --lib crypto::wycheproof::timings -- --ignored --nocapture`.
#[test]
#[ignore = "a measurement, for release builds"]
#[allow(clippy::print_stderr)]
fn timings() {
    const ROUNDS: u32 = 20;
    for (file, alg) in [
        ("rsa_signature_2048_sha256_test.json", Algorithm::Rs256),
        ("rsa_signature_4096_sha256_test.json", Algorithm::Rs256),
        ("rsa_pss_2048_sha256_mgf1_32_test.json", Algorithm::Ps256),
        ("ecdsa_secp256r1_sha256_p1363_test.json", Algorithm::Es256),
        ("ed25519_test.json", Algorithm::EdDsa),
    ] {
        let path = format!("{}/fixtures/wycheproof/{file}", env!("CARGO_MANIFEST_DIR"));
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let group = &doc["testGroups"][0];
        let case = group["tests"].as_array().unwrap().iter().find(|c| c["result"] == "valid");
        let case = case.unwrap();
        let (message, signature) =
            (unhex(case["msg"].as_str().unwrap()), unhex(case["sig"].as_str().unwrap()));
        let start = std::time::Instant::now();
        let key = key_of(group, alg).unwrap();
        let built = start.elapsed();
        let start = std::time::Instant::now();
        for _ in 0..ROUNDS {
            assert!(key.verify(alg, &message, &signature).is_ok());
        }
        let each = start.elapsed() / ROUNDS;
        eprintln!("{file}: key built in {built:?}, one verification in {each:?}");
    }
}

/// Hex as bytes, for the vectors.
pub(super) fn unhex(text: &str) -> Vec<u8> {
    assert!(text.len().is_multiple_of(2), "odd hex {text}");
    (0..text.len()).step_by(2).map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap()).collect()
}

/// Unpadded base64url (RFC 4648 §5), as JWKs and JWS carry bytes.
pub(super) fn base64url(text: &str) -> Vec<u8> {
    base64url_decode(text).unwrap()
}
