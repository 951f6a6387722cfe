//! JWTs signed by an authorization server's keys (`--jwks-file`): the key set read from a
//! file the operator keeps fresh (read again when it changes, or on SIGHUP; baremcp never
//! fetches a URL), each token's signature checked against it, then its claims.

use std::fmt;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::conn::principal::Principal;
use crate::crypto::{JwsError, KeySet, MAX_JWKS_BYTES, verify_jws};
use crate::transport::http::claims::check_claims;
use crate::util::stamp::Stamp;

/// The log target: the name `RUST_LOG` filters by (docs/cli.md, Logging), kept when files move.
const LOG: &str = "baremcp::http::guard";

/// How often the file's stamp is looked at, at most.
const LOOK_EVERY: Duration = Duration::from_secs(1);

/// The key set of a JWKS file and what a token's claims must say.
pub(crate) struct JwksVerifier {
    path: PathBuf,
    /// `--jwt-audience`: required with a JWKS, or any token its issuer signs for any API would
    /// be let in.
    audience: String,
    /// `--jwt-issuer`.
    issuer: Option<String>,
    state: Mutex<Loaded>,
}

struct Loaded {
    /// Shared with the checks under way, which never hold the lock while they verify.
    keys: Arc<KeySet>,
    /// One more each time the file is read anew (see [`JwksVerifier::generation`]).
    generation: u64,
    stamp: Option<Stamp>,
    looked: Instant,
    /// A thread is reading the file (one at a time: a read of big RSA keys takes seconds,
    /// and an older read must not store its keys over a newer one's).
    reading: bool,
    /// A reload was asked for while that read ran: the reader reads once more.
    again: bool,
}

/// Why a token was refused: its signature, or its claims.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Refusal {
    Signature(JwsError),
    Claims(&'static str),
}

impl JwksVerifier {
    /// Reads the file; a file that cannot be read or holds no usable key is an error, since a
    /// server started on it would refuse every token.
    pub(crate) fn open(
        path: PathBuf,
        audience: String,
        issuer: Option<String>,
    ) -> io::Result<JwksVerifier> {
        let (keys, stamp) = read_jwks(&path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        let state = Mutex::new(Loaded {
            keys: Arc::new(keys),
            generation: 0,
            stamp,
            looked: Instant::now(),
            reading: false,
            again: false,
        });
        Ok(JwksVerifier { path, audience, issuer, state })
    }

    /// The caller a token names, at the time `now` (seconds since 1970).
    pub(crate) fn verify(&self, token: &str, now: u64) -> Result<Principal, Refusal> {
        let (keys, _) = self.keys(false);
        let signed = verify_jws(token, &keys).map_err(Refusal::Signature)?;
        check_claims(&signed.claims, now, Some(&self.audience), self.issuer.as_deref())
            .map_err(Refusal::Claims)?;
        Ok(Principal::from_claims(signed.claims))
    }

    /// Reads the file again now, whatever its stamp (SIGHUP).
    pub(crate) fn reread(&self) {
        self.keys(true);
    }

    /// Which key set is in force: what a set verified is taken as verified only while it is
    /// (the cache of verified tokens, `verified.rs`), so a key taken out of the file, or a
    /// reload, lets nothing it verified in any longer.
    pub(crate) fn generation(&self) -> u64 {
        self.keys(false).1
    }

    /// [`JwksVerifier::generation`] without reading the file: `None` when it is due to be read
    /// again (its stamp changed), which a thread that may wait does; the dispatching loop asks
    /// this.
    pub(crate) fn generation_if_read(&self) -> Option<u64> {
        let mut state = self.lock();
        if !state.reading && state.looked.elapsed() >= LOOK_EVERY {
            if Stamp::of(&self.path) != state.stamp {
                return None;
            }
            state.looked = Instant::now();
        }
        Some(state.generation)
    }

    /// The key set now, and its generation: the file is read again when `reload` is set, or
    /// when its stamp changed (looked at most once a second). A file that no longer reads as a
    /// usable set leaves the keys as they were: a half-written file must not lock everyone out.
    /// The file is read and its keys checked outside the lock (an RSA key's check takes 10 ms
    /// and more), by one thread at a time: meanwhile the others verify with the keys in force.
    fn keys(&self, reload: bool) -> (Arc<KeySet>, u64) {
        {
            let mut state = self.lock();
            let due = reload
                || (state.looked.elapsed() >= LOOK_EVERY && {
                    state.looked = Instant::now();
                    Stamp::of(&self.path) != state.stamp
                });
            if !due || state.reading {
                state.again |= due;
                return (state.keys.clone(), state.generation);
            }
            state.reading = true;
        }
        loop {
            let read = read_jwks(&self.path);
            let mut state = self.lock();
            match read {
                Ok((keys, stamp)) => {
                    log::info!(target: LOG, "{}: read {} key(s)", self.path.display(), keys.len());
                    state.keys = Arc::new(keys);
                    state.generation += 1;
                    state.stamp = stamp;
                }
                Err(e) => log::warn!(
                    target: LOG,
                    "{}: {e}; keeping the previous keys",
                    self.path.display()
                ),
            }
            if !std::mem::take(&mut state.again) {
                state.reading = false;
                return (state.keys.clone(), state.generation);
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Loaded> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The file's usable keys and its stamp before reading (so a write during the read is seen
/// next time). Each skipped key is logged: a broken one as a warning, one merely of a kind
/// not used here (an encryption key) as a note.
fn read_jwks(path: &Path) -> io::Result<(KeySet, Option<Stamp>)> {
    let stamp = Stamp::of(path);
    let mut text = Vec::new();
    std::fs::File::open(path)?.take(MAX_JWKS_BYTES as u64 + 1).read_to_end(&mut text)?;
    let (keys, skipped) =
        KeySet::parse(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
    for key in skipped {
        if key.why.malformed() {
            log::warn!(target: LOG, "{}: {key}; skipped", path.display());
        } else {
            log::info!(target: LOG, "{}: {key}; skipped", path.display());
        }
    }
    Ok((keys, stamp))
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Signature(error) => write!(f, "{error}"),
            Refusal::Claims(why) => f.write_str(why),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::crypto::JwsError;

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jwt").join(name)
    }

    /// `fixtures/jwt/tokens.json`: tokens minted by npm jose (`fixtures/jwt/mint.mjs`), the
    /// time to verify them at, and what each must come to.
    fn minted() -> Value {
        serde_json::from_str(&std::fs::read_to_string(fixture("tokens.json")).unwrap()).unwrap()
    }

    fn verifier(path: PathBuf) -> JwksVerifier {
        let doc = minted();
        let (audience, issuer) = (doc["audience"].as_str().unwrap(), doc["issuer"].as_str());
        JwksVerifier::open(path, audience.into(), issuer.map(String::from)).unwrap()
    }

    /// The fixture's name for a refusal.
    fn code(refusal: &Refusal) -> &'static str {
        match refusal {
            Refusal::Signature(error) => match error {
                JwsError::TooLong { .. } => "too_long",
                JwsError::Malformed(_) => "malformed",
                JwsError::Unsigned => "unsigned",
                JwsError::Hmac(_) => "hmac",
                JwsError::UnknownAlgorithm(_) => "unknown_algorithm",
                JwsError::Critical(_) => "critical",
                JwsError::Type(_) => "type",
                JwsError::UnknownKid(_) => "unknown_kid",
                JwsError::AlgorithmNotTheKeys { .. } => "key_mismatch",
                JwsError::TooManyCandidates { .. } => "too_many_candidates",
                JwsError::BadSignature => "bad_signature",
            },
            Refusal::Claims("token has no exp") => "no_exp",
            Refusal::Claims("token expired") => "expired",
            Refusal::Claims("token not yet valid") => "not_yet_valid",
            Refusal::Claims("token audience is not this server") => "audience",
            Refusal::Claims("token issuer is not trusted") => "issuer",
            Refusal::Claims(other) => panic!("a claims refusal without a fixture name: {other}"),
        }
    }

    /// Every minted token gets its verdict: the good ones of each algorithm are accepted with
    /// the principal they name, each forgery or misdirected token is refused for its reason.
    #[test]
    fn tokens_minted_by_an_independent_library_get_their_verdicts() {
        let doc = minted();
        let now = doc["now"].as_u64().unwrap();
        let verifier = verifier(fixture("jwks.json"));
        let mut wrong = Vec::new();
        let mut accepted = 0;
        for case in doc["tokens"].as_array().unwrap() {
            let (name, token) = (&case["name"], case["token"].as_str().unwrap());
            match (verifier.verify(token, now), case["expect"].as_str().unwrap()) {
                (Ok(principal), "accept") => {
                    let want = &case["principal"];
                    let got = json!({
                        "subject": principal.subject(),
                        "client_id": principal.client_id(),
                        "scopes": principal.scopes(),
                    });
                    if got != *want {
                        wrong.push(format!("{name}: principal {got}, want {want}"));
                    }
                    assert_eq!(principal.issuer(), doc["issuer"].as_str());
                    accepted += 1;
                }
                (Err(refusal), expect) if code(&refusal) == expect => {}
                (got, expect) => wrong.push(format!("{name}: {got:?}, want {expect}")),
            }
        }
        assert!(wrong.is_empty(), "wrong verdicts:\n{}", wrong.join("\n"));
        assert_eq!(accepted, 7, "RS256 (2048, 4096, no kid), PS256, ES256 (kid, no kid), EdDSA");
    }

    #[test]
    fn time_is_checked_at_the_time_given() {
        let doc = minted();
        let now = doc["now"].as_u64().unwrap();
        let verifier = verifier(fixture("jwks.json"));
        let rs256 = doc["tokens"][0]["token"].as_str().unwrap();
        let exp = doc["expires"].as_u64().unwrap() + crate::transport::http::claims::LEEWAY_SECS;
        assert!(verifier.verify(rs256, now).is_ok());
        assert!(verifier.verify(rs256, exp).is_ok());
        assert_eq!(verifier.verify(rs256, exp + 1), Err(Refusal::Claims("token expired")));
        let refusal = verifier.verify(rs256, exp + 1).unwrap_err();
        assert_eq!(refusal.to_string(), "token expired");
    }

    /// A scratch copy of a JWKS holding only the fixture's keys with these kids.
    fn scratch(path: &Path, kids: &[&str]) {
        let mut doc: Value =
            serde_json::from_slice(&std::fs::read(fixture("jwks.json")).unwrap()).unwrap();
        doc["keys"].as_array_mut().unwrap().retain(|k| kids.iter().any(|kid| k["kid"] == *kid));
        // Written aside and renamed, as the docs tell operators to.
        let aside = path.with_extension("tmp");
        std::fs::write(&aside, doc.to_string()).unwrap();
        std::fs::rename(&aside, path).unwrap();
    }

    #[test]
    fn a_rotated_file_is_in_force_and_a_broken_one_keeps_the_keys() {
        let doc = minted();
        let now = doc["now"].as_u64().unwrap();
        let token = |name: &str| {
            let case = doc["tokens"].as_array().unwrap().iter().find(|c| c["name"] == name);
            case.unwrap()["token"].as_str().unwrap().to_string()
        };
        let (rsa, ec) = (token("rs256"), token("es256_no_kid"));
        let dir = std::env::temp_dir().join(format!("baremcp-jwks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("jwks.json");
        scratch(&path, &["rsa-1"]);
        let verifier = verifier(path.clone());
        let unknown_ec = Refusal::Signature(JwsError::AlgorithmNotTheKeys {
            alg: crate::crypto::Algorithm::Es256,
            kid: None,
        });
        assert!(verifier.verify(&rsa, now).is_ok());
        assert_eq!(verifier.verify(&ec, now), Err(unknown_ec.clone()));

        // The provider rotates: the file now holds the EC key only. SIGHUP reads it at once.
        scratch(&path, &["ec-1"]);
        verifier.reread();
        assert!(verifier.verify(&ec, now).is_ok());
        let gone = Refusal::Signature(JwsError::UnknownKid("\"rsa-1\"".into()));
        assert_eq!(verifier.verify(&rsa, now), Err(gone));

        // Without a signal, a changed file is read once a second has passed since the last look.
        scratch(&path, &["rsa-1"]);
        verifier.state.lock().unwrap().looked -= LOOK_EVERY;
        assert!(verifier.verify(&rsa, now).is_ok());

        // Broken files leave the keys as they were: half written, or nothing usable.
        std::fs::write(&path, r#"{"keys": [{"kty": "RSA", "#).unwrap();
        verifier.reread();
        assert!(verifier.verify(&rsa, now).is_ok());
        std::fs::write(&path, r#"{"keys": []}"#).unwrap();
        verifier.reread();
        assert!(verifier.verify(&rsa, now).is_ok());
        std::fs::remove_file(&path).unwrap();
        verifier.reread();
        assert!(verifier.verify(&rsa, now).is_ok());

        // But a server does not start on one.
        let error = JwksVerifier::open(path.clone(), "a".into(), None).err().unwrap();
        assert!(error.to_string().starts_with(&format!("{}: ", path.display())), "{error}");
        std::fs::write(&path, r#"{"keys": []}"#).unwrap();
        let error = JwksVerifier::open(path.clone(), "a".into(), None).err().unwrap();
        assert_eq!(
            error.to_string(),
            format!("{}: no usable key: the keys array is empty", path.display())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The cases `tests/interop/oidc.sh --check` writes from a real oidc-provider: each
    /// phase a JWKS file as the provider published it, tokens to accept (with the scopes
    /// granted) and tokens to refuse (with words of the reason). Run only by that script.
    #[test]
    #[ignore = "tests/interop/oidc.sh --check runs it, with BAREMCP_OIDC_CASES set"]
    fn oidc_provider_tokens() {
        let path = std::env::var("BAREMCP_OIDC_CASES").expect("BAREMCP_OIDC_CASES: a cases file");
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let text = |value: &Value| value.as_str().unwrap().to_string();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
        let (alg, client) = (&doc["alg"], doc["client_id"].as_str());
        for (i, phase) in doc["phases"].as_array().unwrap().iter().enumerate() {
            let jwks = PathBuf::from(text(&phase["jwks"]));
            let verifier =
                JwksVerifier::open(jwks, text(&doc["audience"]), Some(text(&doc["issuer"])))
                    .unwrap();
            for case in phase["accept"].as_array().unwrap() {
                let principal = verifier.verify(case[0].as_str().unwrap(), now.as_secs());
                let principal = principal.unwrap_or_else(|e| panic!("{alg} phase {i}: {e}"));
                assert_eq!(principal.scopes().join(" "), text(&case[1]), "{alg} phase {i}");
                assert_eq!((principal.client_id(), Some(principal.subject())), (client, client));
            }
            for case in phase["refuse"].as_array().unwrap() {
                let refusal = verifier.verify(case[0].as_str().unwrap(), now.as_secs());
                let why = refusal.err().map(|e| e.to_string()).unwrap_or_default();
                assert!(
                    why.contains(case[1].as_str().unwrap()),
                    "{alg} phase {i}: {why:?}, want {}",
                    case[1]
                );
            }
        }
    }
}
