//! What a JWT check calls: a public key from a JWKS (RSA, P-256 or Ed25519) verifying a
//! signature under the JWS algorithm a token names, refused when key and algorithm do not
//! belong together (RFC 7518 §3.1, RFC 8037 §3.1).

use std::fmt;

use super::ed25519::Ed25519Key;
use super::key_error::KeyError;
use super::p256::P256Key;
use super::rsa::RsaKey;

/// A JWS `alg` this crate verifies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Algorithm {
    /// RSASSA-PKCS1-v1_5 with SHA-256.
    Rs256,
    /// RSASSA-PSS with SHA-256, MGF1-SHA-256 and a 32-byte salt.
    Ps256,
    /// ECDSA over P-256 with SHA-256.
    Es256,
    /// EdDSA; only Ed25519 keys are read, so this is Ed25519.
    EdDsa,
}

impl Algorithm {
    /// The algorithm a JWS header's `alg` names, or `None` for one not verified here (`none`
    /// and the HMAC family among them). `Ed25519`, RFC 9864's fully specified name, is the
    /// same check as `EdDSA` with an Ed25519 key.
    pub(crate) fn from_name(name: &str) -> Option<Algorithm> {
        match name {
            "RS256" => Some(Algorithm::Rs256),
            "PS256" => Some(Algorithm::Ps256),
            "ES256" => Some(Algorithm::Es256),
            "EdDSA" | "Ed25519" => Some(Algorithm::EdDsa),
            _ => None,
        }
    }

    /// The `alg` value, as a header carries it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Algorithm::Rs256 => "RS256",
            Algorithm::Ps256 => "PS256",
            Algorithm::Es256 => "ES256",
            Algorithm::EdDsa => "EdDSA",
        }
    }
}

/// A public key that passed its checks, ready to verify.
#[derive(Clone, Debug)]
pub(crate) enum PublicKey {
    /// JWK `kty: RSA`, for RS256 and PS256.
    Rsa(RsaKey),
    /// JWK `kty: EC`, `crv: P-256`, for ES256.
    P256(P256Key),
    /// JWK `kty: OKP`, `crv: Ed25519`, for EdDSA.
    Ed25519(Ed25519Key),
}

/// Why a signature was not accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum VerifyError {
    /// The key is of another family than the algorithm (an RSA key and ES256, say): a token
    /// may not choose how its key is used.
    WrongKey { key: &'static str, alg: Algorithm },
    /// The signature is malformed or was not made by this key over this message.
    BadSignature,
}

impl PublicKey {
    /// An RSA key from the big-endian modulus `n` and exponent `e`.
    pub(crate) fn rsa(n: &[u8], e: &[u8]) -> Result<PublicKey, KeyError> {
        RsaKey::new(n, e).map(PublicKey::Rsa)
    }

    /// A P-256 key from its big-endian affine coordinates, 32 bytes each.
    pub(crate) fn p256(x: &[u8], y: &[u8]) -> Result<PublicKey, KeyError> {
        P256Key::new(x, y).map(PublicKey::P256)
    }

    /// An Ed25519 key from its 32-byte encoding.
    pub(crate) fn ed25519(x: &[u8]) -> Result<PublicKey, KeyError> {
        Ed25519Key::new(x).map(PublicKey::Ed25519)
    }

    /// Whether this key can verify `alg` at all.
    pub(crate) fn fits(&self, alg: Algorithm) -> bool {
        matches!(
            (self, alg),
            (PublicKey::Rsa(_), Algorithm::Rs256 | Algorithm::Ps256)
                | (PublicKey::P256(_), Algorithm::Es256)
                | (PublicKey::Ed25519(_), Algorithm::EdDsa)
        )
    }

    /// Verifies `signature` (the decoded third part of a compact JWS) over `message` (the
    /// signing input: header and payload as they were sent, joined by `.`).
    pub(crate) fn verify(
        &self,
        alg: Algorithm,
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), VerifyError> {
        let good = match (self, alg) {
            (PublicKey::Rsa(key), Algorithm::Rs256) => key.verify_pkcs1(message, signature),
            (PublicKey::Rsa(key), Algorithm::Ps256) => key.verify_pss(message, signature),
            (PublicKey::P256(key), Algorithm::Es256) => key.verify(message, signature),
            (PublicKey::Ed25519(key), Algorithm::EdDsa) => key.verify(message, signature),
            _ => return Err(VerifyError::WrongKey { key: self.family(), alg }),
        };
        if good { Ok(()) } else { Err(VerifyError::BadSignature) }
    }

    fn family(&self) -> &'static str {
        match self {
            PublicKey::Rsa(_) => "RSA",
            PublicKey::P256(_) => "P-256",
            PublicKey::Ed25519(_) => "Ed25519",
        }
    }
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VerifyError::WrongKey { key, alg } => {
                write!(f, "the {key} key cannot verify {}", alg.name())
            }
            VerifyError::BadSignature => f.write_str("the signature does not verify"),
        }
    }
}

impl std::error::Error for VerifyError {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::wycheproof::base64url;

    /// RFC 7515 §A.2: the RS256 example key and token.
    const RSA_N: &str = "ofgWCuLjybRlzo0tZWJjNiuSfb4p4fAkd_wWJcyQoTbji9k0l8W26mPddxHmfHQp-Vaw-4qPCJrcS2mJPMEzP1Pt0Bm4d4QlL-yRT-SFd2lZS-pCgNMsD1W_YpRPEwOWvG6b32690r2jZ47soMZo9wGzjb_7OMg0LOL-bSf63kpaSHSXndS5z5rexMdbBYUsLA9e-KXBdQOS-UTo7WTBEMa2R2CapHg665xsmtdVMTBQY4uDZlxvb3qCo5ZwKh9kG4LT6_I5IhlJH7aGhyxXFvUK-DWNmoudF8NAco9_h9iaGNj8q2ethFkMLs91kzk2PAcDTW9gb54h4FRWyuXpoQ";
    const RS256_TOKEN: &str = "eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.cC4hiUPoj9Eetdgtv3hF80EGrhuB__dzERat0XF9g2VtQgr9PJbu3XOiZj5RZmh7AAuHIm4Bh-0Qc_lF5YKt_O8W2Fp5jujGbds9uJdbF9CUAr7t1dnZcAcQjbKBYNX4BAynRFdiuB--f_nZLgrnbyTyWzO75vRK5h6xBArLIARNPvkSjtQBMHlb1L07Qe7K0GarZRmB_eSN9383LcOLn6_dO--xi12jzDwusC-eOkHWEsqtFZESc6BfI7noOPqvhJ1phCnvWh6IeYI2w9QOYEUipUTI8np6LbgGY9Fs98rqVt5AXLIhWkWywlVmtVrBp0igcN_IoypGlUPQGe77Rw";
    /// RFC 7515 §A.3: the ES256 example key and token.
    const EC_X: &str = "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU";
    const EC_Y: &str = "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0";
    const ES256_TOKEN: &str = "eyJhbGciOiJFUzI1NiJ9.eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ.DtEhU3ljbEg8L38VWAfUAqOyKAM6-Xx-F4GawxaepmXFCgfTjDxw5djxLa8ISlSApmWQxfKTUJqPP3-Kg6NU1Q";
    /// RFC 8037 §A.4: the Ed25519 example key and token.
    const OKP_X: &str = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
    const EDDSA_TOKEN: &str = "eyJhbGciOiJFZERTQSJ9.RXhhbXBsZSBvZiBFZDI1NTE5IHNpZ25pbmc.hgyY0il_MGCjP0JzlnLWG1PPOt7-09PGcvMg3AIbQR6dWbhijcNR4ki4iylGjg5BhVsPt9g7sVvpAr_MuM0KAg";

    /// A compact token's signing input and decoded signature.
    fn split(token: &str) -> (&[u8], Vec<u8>) {
        let (input, signature) = token.rsplit_once('.').unwrap();
        (input.as_bytes(), base64url(signature))
    }

    fn keys() -> [PublicKey; 3] {
        [
            PublicKey::rsa(&base64url(RSA_N), &base64url("AQAB")).unwrap(),
            PublicKey::p256(&base64url(EC_X), &base64url(EC_Y)).unwrap(),
            PublicKey::ed25519(&base64url(OKP_X)).unwrap(),
        ]
    }

    #[test]
    fn the_rfc_example_tokens_verify_and_altered_ones_do_not() {
        let [rsa, p256, ed25519] = keys();
        for (key, alg, token) in [
            (&rsa, Algorithm::Rs256, RS256_TOKEN),
            (&p256, Algorithm::Es256, ES256_TOKEN),
            (&ed25519, Algorithm::EdDsa, EDDSA_TOKEN),
        ] {
            let (input, signature) = split(token);
            assert_eq!(key.verify(alg, input, &signature), Ok(()), "{}", alg.name());
            let mut altered = input.to_vec();
            altered[5] ^= 1;
            assert_eq!(key.verify(alg, &altered, &signature), Err(VerifyError::BadSignature));
            let mut flipped = signature.clone();
            flipped[10] ^= 0x40;
            assert_eq!(key.verify(alg, input, &flipped), Err(VerifyError::BadSignature));
        }
        // The same RSA key under PSS refuses a PKCS#1 v1.5 signature.
        let (input, signature) = split(RS256_TOKEN);
        assert_eq!(rsa.verify(Algorithm::Ps256, input, &signature), Err(VerifyError::BadSignature));
    }

    #[test]
    fn a_key_refuses_the_algorithms_of_other_families() {
        let all = [Algorithm::Rs256, Algorithm::Ps256, Algorithm::Es256, Algorithm::EdDsa];
        for key in keys() {
            for alg in all {
                if key.fits(alg) {
                    continue;
                }
                let error = key.verify(alg, b"message", &[0; 64]).unwrap_err();
                assert_eq!(error, VerifyError::WrongKey { key: key.family(), alg });
            }
        }
        let [rsa, ..] = keys();
        let error = rsa.verify(Algorithm::Es256, b"", &[]).unwrap_err();
        assert_eq!(error.to_string(), "the RSA key cannot verify ES256");
        assert_eq!(
            KeyError::RsaModulusSize { bits: 1024 }.to_string(),
            "an RSA modulus of 1024 bits (2048 to 8192 are accepted)"
        );
    }

    #[test]
    fn algorithm_names_are_the_registered_ones() {
        for alg in [Algorithm::Rs256, Algorithm::Ps256, Algorithm::Es256, Algorithm::EdDsa] {
            assert_eq!(Algorithm::from_name(alg.name()), Some(alg));
        }
        assert_eq!(Algorithm::from_name("Ed25519"), Some(Algorithm::EdDsa));
        for other in ["none", "HS256", "rs256", "ES384", "RS512", ""] {
            assert_eq!(Algorithm::from_name(other), None, "{other}");
        }
    }
}
