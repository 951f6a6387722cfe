//! RSA signature verification as JWS uses it (RFC 7518 §3.3, §3.5): RS256 is
//! RSASSA-PKCS1-v1_5 with SHA-256, PS256 is RSASSA-PSS with SHA-256, MGF1-SHA-256 and a
//! 32-byte salt (RFC 8017 §8.1, §8.2), and the bounds a key from a JWKS must keep.

use super::key_error::KeyError;
use super::montgomery::{OddModulus, be_from_limbs, less, limbs_from_be};
use crate::util::sha256::{same, sha256};

/// RFC 7518 §3.3 requires 2048 bits or more.
const MIN_BITS: usize = 2048;
/// Above this a key buys a hostile JWKS nothing but slower verifications.
const MAX_BITS: usize = 8192;

/// The `AlgorithmIdentifier` and `OCTET STRING` header that precede a SHA-256 hash in the
/// DER `DigestInfo` of RFC 8017 §9.2, note 1 (its `NULL` parameters included).
const SHA256_DIGEST_INFO: [u8; 19] = [
    0x30, 0x31, 0x30, 0x0d, 0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01, 0x05,
    0x00, 0x04, 0x20,
];

/// PSS's hash and salt lengths: SHA-256's 32 bytes for both, as RFC 7518 §3.5 requires.
const HASH_LEN: usize = 32;
const SALT_LEN: usize = 32;

/// An RSA public key within the bounds.
#[derive(Clone, Debug)]
pub(crate) struct RsaKey {
    modulus: OddModulus,
    exponent: u32,
    bits: usize,
}

impl RsaKey {
    /// The key of modulus `n` and public exponent `e`, big-endian (leading zero bytes, which
    /// some encoders add, are ignored). Refused: a modulus outside 2048..=8192 bits or even;
    /// an exponent that is even, below 3, or 2^32 and above.
    pub(crate) fn new(n: &[u8], e: &[u8]) -> Result<RsaKey, KeyError> {
        let n = without_leading_zeros(n);
        let bits = n.first().map_or(0, |&top| 8 * n.len() - top.leading_zeros() as usize);
        if !(MIN_BITS..=MAX_BITS).contains(&bits) {
            return Err(KeyError::RsaModulusSize { bits });
        }
        if n[n.len() - 1] & 1 == 0 {
            return Err(KeyError::RsaModulusEven);
        }
        // Odd, since `e` must be invertible modulo λ(n), which is even. At least 3, since
        // with `e = 1` a signature is its own padded message and anyone can forge one. Below
        // 2^32, since each bit of `e` costs up to two multiplications: a key with a huge
        // exponent would make each verification cost what a private-key operation does. Keys
        // in use have 65537 (a few 3); Go caps `e` below 2^31, BoringSSL at 33 bits.
        let e = without_leading_zeros(e);
        if e.len() > 4 {
            return Err(KeyError::RsaExponent);
        }
        let exponent = e.iter().fold(0u32, |e, &byte| e << 8 | u32::from(byte));
        if exponent < 3 || exponent % 2 == 0 {
            return Err(KeyError::RsaExponent);
        }
        Ok(RsaKey { modulus: OddModulus::new(limbs_from_be(n)), exponent, bits })
    }

    /// RS256: RSASSA-PKCS1-v1_5 verification (RFC 8017 §8.2.2). The expected encoding is
    /// built and compared whole, so no padding or DER variant can slip through a parser.
    pub(crate) fn verify_pkcs1(&self, message: &[u8], signature: &[u8]) -> bool {
        let Some(encoded) = self.open(signature) else { return false };
        let Some(fill) = encoded.len().checked_sub(3 + SHA256_DIGEST_INFO.len() + HASH_LEN) else {
            return false;
        };
        let mut expected = vec![0x00, 0x01];
        expected.resize(2 + fill, 0xff);
        expected.push(0x00);
        expected.extend_from_slice(&SHA256_DIGEST_INFO);
        expected.extend_from_slice(&sha256(message));
        same(&encoded, &expected)
    }

    /// PS256: RSASSA-PSS verification with SHA-256, MGF1-SHA-256 and a 32-byte salt
    /// (RFC 8017 §8.1.2 and EMSA-PSS-VERIFY, §9.1.2).
    pub(crate) fn verify_pss(&self, message: &[u8], signature: &[u8]) -> bool {
        let Some(opened) = self.open(signature) else { return false };
        // The encoded message has `bits - 1` bits: one byte shorter than the modulus when
        // `bits` is 1 more than a multiple of 8, and that byte must then be zero.
        let em_bits = self.bits - 1;
        let em_len = em_bits.div_ceil(8);
        let (lead, em) = opened.split_at(opened.len() - em_len);
        if lead.iter().any(|&b| b != 0) || em_len < HASH_LEN + SALT_LEN + 2 {
            return false;
        }
        let (masked_db, rest) = em.split_at(em_len - HASH_LEN - 1);
        let (hash, trailer) = rest.split_at(HASH_LEN);
        // The bits above `em_bits` in the first byte must be zero.
        let kept = 0xffu8 >> (8 * em_len - em_bits);
        if trailer != [0xbc] || masked_db[0] & !kept != 0 {
            return false;
        }
        let mut db = mgf1(hash, masked_db.len());
        db.iter_mut().zip(masked_db).for_each(|(d, m)| *d ^= m);
        db[0] &= kept;
        // DB = zeros ‖ 0x01 ‖ salt.
        let zeros = db.len() - SALT_LEN - 1;
        if db[..zeros].iter().any(|&b| b != 0) || db[zeros] != 0x01 {
            return false;
        }
        let mut m_prime = [0u8; 8 + HASH_LEN + SALT_LEN];
        m_prime[8..8 + HASH_LEN].copy_from_slice(&sha256(message));
        m_prime[8 + HASH_LEN..].copy_from_slice(&db[zeros + 1..]);
        same(hash, &sha256(&m_prime))
    }

    /// RSAVP1: `signature^e mod n` as bytes of the modulus's length; `None` for a signature
    /// of another length or not below the modulus (RFC 8017 §5.2.2, §8.2.2 step 1).
    fn open(&self, signature: &[u8]) -> Option<Vec<u8>> {
        let len = self.bits.div_ceil(8);
        if signature.len() != len {
            return None;
        }
        let s = limbs_from_be(signature);
        if !less(&s, self.modulus.limbs()) {
            return None;
        }
        Some(be_from_limbs(&self.modulus.pow(&s, self.exponent), len))
    }
}

/// MGF1 with SHA-256 (RFC 8017 §B.2.1): `len` bytes of `SHA-256(seed ‖ counter)` blocks.
fn mgf1(seed: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + HASH_LEN);
    let mut input = seed.to_vec();
    for counter in 0u32.. {
        if out.len() >= len {
            break;
        }
        input.truncate(seed.len());
        input.extend_from_slice(&counter.to_be_bytes());
        out.extend_from_slice(&sha256(&input));
    }
    out.truncate(len);
    out
}

fn without_leading_zeros(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    &bytes[start..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An odd modulus of `bits` bits (all ones), not a real key but within or outside the
    /// bounds as asked.
    fn ones(bits: usize) -> Vec<u8> {
        let mut n = vec![0xff; bits.div_ceil(8)];
        if let Some(top) = n.first_mut() {
            *top = 0xff >> (bits.div_ceil(8) * 8 - bits);
        }
        n
    }

    #[test]
    fn moduli_outside_the_bounds_are_refused() {
        let e = [1, 0, 1];
        for bits in [0, 1024, 2047, 8193, 16_384] {
            let error = RsaKey::new(&ones(bits), &e).err();
            assert_eq!(error, Some(KeyError::RsaModulusSize { bits }), "{bits} bits");
        }
        for bits in [2048, 2049, 3072, 4096, 8192] {
            assert!(RsaKey::new(&ones(bits), &e).is_ok(), "{bits} bits");
        }
        // Leading zero bytes (a DER-style sign byte) do not count.
        let mut padded = vec![0, 0];
        padded.extend(ones(2048));
        assert_eq!(RsaKey::new(&padded, &e).map(|k| k.bits).ok(), Some(2048));
        let mut even = ones(2048);
        *even.last_mut().unwrap() = 0xfe;
        assert_eq!(RsaKey::new(&even, &e).err(), Some(KeyError::RsaModulusEven));
    }

    #[test]
    fn exponents_outside_the_bounds_are_refused() {
        let n = ones(2048);
        for e in [
            &[][..],
            &[0],
            &[1],
            &[2],
            &[1, 0, 0],
            &[1, 0, 0, 0, 1],
            &[0xff, 0xff, 0xff, 0xff, 0xff],
        ] {
            assert_eq!(RsaKey::new(&n, e).err(), Some(KeyError::RsaExponent), "e = {e:?}");
        }
        for e in [&[3][..], &[1, 0, 1], &[0, 0, 1, 0, 1], &[0xff, 0xff, 0xff, 0xff]] {
            assert!(RsaKey::new(&n, e).is_ok(), "e = {e:?}");
        }
    }

    #[test]
    fn signatures_of_the_wrong_length_or_size_are_refused_before_any_arithmetic() {
        let key = RsaKey::new(&ones(2048), &[3]).unwrap();
        assert!(key.open(&[1; 255]).is_none() && key.open(&[1; 257]).is_none());
        // The modulus itself is no signature (nor is anything above it).
        assert!(key.open(&ones(2048)).is_none());
        // A small value opens to its cube: 2^3 = 8.
        let mut two = vec![0; 256];
        two[255] = 2;
        assert_eq!(key.open(&two).unwrap()[250..], [0, 0, 0, 0, 0, 8]);
        assert!(!key.verify_pkcs1(b"", &two) && !key.verify_pss(b"", &two));
    }

    #[test]
    fn mgf1_is_counter_mode_sha256() {
        let mask = mgf1(b"seed", 70);
        assert_eq!(mask.len(), 70);
        assert_eq!(mask[..32], sha256(b"seed\0\0\0\0"));
        assert_eq!(mask[32..64], sha256(b"seed\0\0\0\x01"));
        assert_eq!(mask[64..], sha256(b"seed\0\0\0\x02")[..6]);
    }
}
