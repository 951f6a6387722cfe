//! Why a public key was refused: each reason as data, for the JWKS loader to log and skip
//! that one key.

use std::fmt;

/// A public key's raw fields (what a JWK's base64url members decode to) that no verifier here
/// will use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeyError {
    /// An RSA modulus outside 2048 to 8192 bits.
    RsaModulusSize { bits: usize },
    /// An even RSA modulus: the product of two odd primes is odd.
    RsaModulusEven,
    /// An RSA modulus with an odd prime factor below 1000 (the smallest is kept): such a
    /// modulus is factored at once, and its private exponent with it.
    RsaModulusSmallFactor { factor: u32 },
    /// A prime RSA modulus: `φ(n) = n - 1` is public, so anyone can compute the private
    /// exponent and sign.
    RsaModulusPrime,
    /// A square RSA modulus (`n = p²`): its square root, found at once, is the factor, so
    /// anyone can compute the private exponent as with a prime modulus.
    RsaModulusSquare,
    /// An RSA public exponent that is even, below 3, or not below 2^32.
    RsaExponent,
    /// A P-256 coordinate that is not 32 bytes (RFC 7518 §6.2.1.2 fixes the length).
    P256CoordinateLength { len: usize },
    /// P-256 coordinates that are not below the field prime or not a point on the curve.
    P256NotOnCurve,
    /// An Ed25519 public key that is not 32 bytes.
    Ed25519Length { len: usize },
    /// 32 bytes that encode no Ed25519 point (RFC 8032 §5.1.3).
    Ed25519Encoding,
    /// An Ed25519 point of small order (the identity, the point of order 2, ...): with it,
    /// anyone can forge a signature.
    Ed25519SmallOrder,
}

impl fmt::Display for KeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeyError::RsaModulusSize { bits } => {
                write!(f, "an RSA modulus of {bits} bits (2048 to 8192 are accepted)")
            }
            KeyError::RsaModulusEven => f.write_str("an RSA modulus that is even"),
            KeyError::RsaModulusSmallFactor { factor } => {
                write!(f, "an RSA modulus with a small factor ({factor})")
            }
            KeyError::RsaModulusPrime => f.write_str("an RSA modulus that is prime"),
            KeyError::RsaModulusSquare => f.write_str("an RSA modulus that is a perfect square"),
            KeyError::RsaExponent => {
                f.write_str("an RSA public exponent that is not odd, at least 3 and below 2^32")
            }
            KeyError::P256CoordinateLength { len } => {
                write!(f, "a P-256 coordinate of {len} bytes (32 are required)")
            }
            KeyError::P256NotOnCurve => f.write_str("coordinates of no point on P-256"),
            KeyError::Ed25519Length { len } => {
                write!(f, "an Ed25519 public key of {len} bytes (32 are required)")
            }
            KeyError::Ed25519Encoding => f.write_str("32 bytes that encode no Ed25519 point"),
            KeyError::Ed25519SmallOrder => {
                f.write_str("an Ed25519 point of small order (anyone can forge a signature)")
            }
        }
    }
}

impl std::error::Error for KeyError {}
