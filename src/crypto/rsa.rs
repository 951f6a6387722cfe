//! RSA signature verification as JWS uses it (RFC 7518 §3.3, §3.5): RS256 is
//! RSASSA-PKCS1-v1_5 with SHA-256, PS256 is RSASSA-PSS with SHA-256, MGF1-SHA-256 and a
//! 32-byte salt (RFC 8017 §8.1, §8.2), and the bounds a key from a JWKS must keep.

use super::key_error::KeyError;
use super::montgomery::{OddModulus, be_from_limbs, less, limbs_from_be, sub_assign};
use crate::util::sha256::{same, sha256};

/// RFC 7518 §3.3 requires 2048 bits or more.
const MIN_BITS: usize = 2048;
/// Above this a key buys a hostile JWKS nothing but slower verifications.
const MAX_BITS: usize = 8192;
/// A modulus is divided by each odd prime below this: a few hundred cheap divisions.
const TRIAL_BELOW: u32 = 1000;

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
    /// some encoders add, are ignored). Refused: a modulus outside 2048..=8192 bits, even,
    /// with an odd prime factor below 1000, a perfect square, or prime; an exponent that is
    /// even, below 3, or 2^32 and above. The cheap checks come first (the exact square root:
    /// about 0.5 ms at 4096 bits, 1.5 ms at 8192); the primality test, one exponentiation by
    /// a number the size of `n`, runs once per key, when it is read: about 10 ms of CPU for
    /// 2048 bits, 60 ms for 4096, 0.5 s for 8192 (release build).
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
        // A signature is forged by whoever can compute `d`, the inverse of `e` modulo λ(n):
        // that takes factoring `n`, which a tiny factor or a square (`n = p²`, p = √n) makes
        // instant and a prime `n` makes needless (λ(n) = n - 1).
        let modulus = OddModulus::new(limbs_from_be(n));
        if let Some(factor) = small_factor(modulus.limbs()) {
            return Err(KeyError::RsaModulusSmallFactor { factor });
        }
        if perfect_square(modulus.limbs()) {
            return Err(KeyError::RsaModulusSquare);
        }
        if strong_probable_prime(&modulus) {
            return Err(KeyError::RsaModulusPrime);
        }
        Ok(RsaKey { modulus, exponent, bits })
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
        Some(be_from_limbs(&self.modulus.pow(&s, &[self.exponent.into()]), len))
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

/// The smallest odd prime below [`TRIAL_BELOW`] that divides `n` (little-endian limbs).
fn small_factor(n: &[u64]) -> Option<u32> {
    let prime =
        |p: &u32| (3..).step_by(2).take_while(|f| f * f <= *p).all(|f| !p.is_multiple_of(f));
    (3..TRIAL_BELOW).step_by(2).filter(prime).find(|&p| remainder(n, p) == 0)
}

/// `n mod p`, from the top limb down, half a limb at a time so nothing passes 64 bits.
fn remainder(n: &[u64], p: u32) -> u32 {
    let p = u64::from(p);
    let r = n.iter().rev().fold(0, |r, &limb| {
        let r = (r << 32 | limb >> 32) % p;
        (r << 32 | limb & 0xffff_ffff) % p
    });
    r as u32
}

/// Whether `n` (little-endian limbs, not zero) is the square of an integer: the square root
/// is taken exactly, one bit per step from the top, on shifts, additions and subtractions
/// (there is no division here), and `n` is a square when nothing remains. For 8192 bits,
/// 4096 steps of a few passes over 129 limbs.
fn perfect_square(n: &[u64]) -> bool {
    // One limb more than `n`, so `root + bit` has room (it stays below 2n).
    let mut rest = n.to_vec();
    rest.push(0);
    let mut root = vec![0; rest.len()];
    let mut trial = vec![0; rest.len()];
    let high = n.iter().rposition(|&limb| limb != 0).expect("n is not zero");
    let top = 64 * high + 63 - n[high].leading_zeros() as usize;
    // `2^bit` is a power of 4: the highest not above `n` first, then a quarter of it each step.
    let mut bit = top & !1;
    loop {
        trial.copy_from_slice(&root);
        add_bit(&mut trial, bit);
        halve(&mut root);
        if !less(&rest, &trial) {
            sub_assign(&mut rest, &trial);
            add_bit(&mut root, bit);
        }
        if bit < 2 {
            break;
        }
        bit -= 2;
    }
    rest.iter().all(|&limb| limb == 0)
}

/// `a += 2^bit`; the caller leaves room for the carry.
fn add_bit(a: &mut [u64], bit: usize) {
    let (mut i, mut carry) = (bit / 64, 1u64 << (bit % 64));
    while carry != 0 {
        let (sum, over) = a[i].overflowing_add(carry);
        (a[i], carry, i) = (sum, u64::from(over), i + 1);
    }
}

/// `a >>= 1`.
fn halve(a: &mut [u64]) {
    let mut carry = 0;
    for limb in a.iter_mut().rev() {
        (*limb, carry) = (*limb >> 1 | carry << 63, *limb & 1);
    }
}

/// Whether the odd modulus `n > 2` is a strong probable prime to base 2: one round of
/// Miller–Rabin. It errs one way only. Every prime passes, so this one round refuses every
/// prime modulus; more bases would refuse no more of them. A composite can pass too (2047 =
/// 23·89 does, and one can be built to), but a product of two large random primes passes
/// with a negligible chance, and a composite refused as prime fails closed.
fn strong_probable_prime(modulus: &OddModulus) -> bool {
    let n = modulus.limbs();
    // n - 1 = 2^s · d with d odd; n is odd, so its lowest limb does not borrow.
    let mut n_minus_1 = n.to_vec();
    n_minus_1[0] -= 1;
    let zero_limbs = n_minus_1.iter().take_while(|&&limb| limb == 0).count();
    let s = 64 * zero_limbs + n_minus_1[zero_limbs].trailing_zeros() as usize;
    let d: Vec<u64> = (s / 64..n.len())
        .map(|i| {
            let high = n_minus_1.get(i + 1).copied().unwrap_or(0);
            ((u128::from(high) << 64 | u128::from(n_minus_1[i])) >> (s % 64)) as u64
        })
        .collect();
    let mut x = vec![0; n.len()];
    x[0] = 2;
    x = modulus.pow(&x, &d);
    // A prime's only square roots of 1 are ±1: 2^d is 1, or squaring reaches -1 within s steps.
    if x[0] == 1 && x[1..].iter().all(|&limb| limb == 0) || x == n_minus_1 {
        return true;
    }
    for _ in 1..s {
        x = modulus.pow(&x, &[2]);
        if x == n_minus_1 {
            return true;
        }
    }
    false
}

fn without_leading_zeros(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    &bytes[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::jwks::tests::{minted_key, prime_fixture};
    use crate::crypto::wycheproof::base64url;

    /// An odd modulus of `bits` bits (all ones), not a real key but within or outside the
    /// bounds as asked.
    fn ones(bits: usize) -> Vec<u8> {
        let mut n = vec![0xff; bits.div_ceil(8)];
        if let Some(top) = n.first_mut() {
            *top = 0xff >> (bits.div_ceil(8) * 8 - bits);
        }
        n
    }

    /// A real key's 2048-bit modulus (`fixtures/jwt/jwks.json`), which every check accepts.
    fn real() -> Vec<u8> {
        base64url(minted_key("rsa-1")["n"].as_str().unwrap())
    }

    /// A 2048-bit prime (`fixtures/jwt/prime.json`).
    fn prime() -> Vec<u8> {
        base64url(prime_fixture()["jwks"]["keys"][0]["n"].as_str().unwrap())
    }

    /// `n·k`, big-endian.
    fn times(n: &[u8], k: u32) -> Vec<u8> {
        let mut carry = 0;
        let mut product: Vec<u8> = n
            .iter()
            .rev()
            .map(|&byte| {
                let wide = u32::from(byte) * k + carry;
                carry = wide >> 8;
                wide as u8
            })
            .collect();
        product.extend(carry.to_le_bytes());
        product.reverse();
        product
    }

    #[test]
    fn moduli_outside_the_bounds_are_refused() {
        let e = [1, 0, 1];
        for bits in [0, 1024, 2047, 8193, 16_384] {
            let error = RsaKey::new(&ones(bits), &e).err();
            assert_eq!(error, Some(KeyError::RsaModulusSize { bits }), "{bits} bits");
        }
        // Within the bounds, all-ones moduli pass the size check and are refused for a small
        // factor instead: 2^k - 1 is a multiple of 3 for an even k, of 7 = 2^3 - 1 for 2049.
        for (bits, factor) in [(2048, 3), (2049, 7), (3072, 3), (4096, 3), (8192, 3)] {
            let error = RsaKey::new(&ones(bits), &e).err();
            assert_eq!(error, Some(KeyError::RsaModulusSmallFactor { factor }), "{bits} bits");
        }
        // Leading zero bytes (a DER-style sign byte) do not count.
        let mut padded = vec![0, 0];
        padded.extend(real());
        assert_eq!(RsaKey::new(&padded, &e).map(|k| k.bits).ok(), Some(2048));
        let mut even = ones(2048);
        *even.last_mut().unwrap() = 0xfe;
        assert_eq!(RsaKey::new(&even, &e).err(), Some(KeyError::RsaModulusEven));
    }

    /// With a prime modulus, or one with a tiny factor, anyone can compute a private exponent.
    #[test]
    fn prime_moduli_and_moduli_with_a_small_factor_are_refused() {
        let (p, e) = (prime(), [1, 0, 1]);
        let error = RsaKey::new(&p, &e).err().unwrap();
        assert_eq!(
            (error, error.to_string().as_str()),
            (KeyError::RsaModulusPrime, "an RSA modulus that is prime")
        );
        let error = RsaKey::new(&times(&p, 3), &e).err().unwrap();
        assert_eq!(error.to_string(), "an RSA modulus with a small factor (3)");
        for factor in [5, 7, 997] {
            let error = RsaKey::new(&times(&p, factor), &e).err();
            assert_eq!(error, Some(KeyError::RsaModulusSmallFactor { factor }));
        }
        // The smallest factor is named; 1009 is past the trial division, 997 is not.
        assert_eq!(small_factor(&[3 * 5 * 7]), Some(3));
        assert_eq!(small_factor(&[997 * 1009]), Some(997));
        assert_eq!(small_factor(&[1009 * 1013]), None);
        assert_eq!(small_factor(&limbs_from_be(&real())), None);
    }

    #[test]
    fn squares_are_found_exactly() {
        // Every number below 2^16 against its integer square root in floating point.
        for n in 1..1u64 << 16 {
            let root = (n as f64).sqrt() as u64;
            assert_eq!(perfect_square(&[n]), root * root == n, "{n}");
        }
        // Across limbs: (2^64 + 1)² = 2^128 + 2^65 + 1, and its neighbours; (2^64 - 1)².
        assert!(perfect_square(&[1, 2, 1]) && perfect_square(&[1, u64::MAX - 1]));
        assert!(!perfect_square(&[0, 2, 1]) && !perfect_square(&[3, 2, 1]));
        assert!(perfect_square(&[1, 2, 1, 0]), "a zero top limb is no bit of the number");
        // Real keys, primes and all-ones moduli are not squares.
        for n in [real(), prime(), ones(2048), ones(8192)] {
            assert!(!perfect_square(&limbs_from_be(&n)));
        }
    }

    #[test]
    fn the_primality_test_passes_every_prime_and_the_composites_it_should_not() {
        let probable = |n: &[u64]| strong_probable_prime(&OddModulus::new(n.to_vec()));
        // Primes, 2^61 - 1 and 2^127 - 1 among them.
        for prime in [3, 5, 7, 97, 65_537, (1 << 61) - 1] {
            assert!(probable(&[prime]), "{prime}");
        }
        assert!(probable(&[u64::MAX, u64::MAX >> 1]));
        assert!(probable(&limbs_from_be(&prime())));
        // Composites, among them 341 = 11·31 and 561 = 3·11·17, which pass a Fermat test to
        // base 2, and a real key's modulus.
        for composite in [9, 15, 341, 561, 1105, 1_000_001] {
            assert!(!probable(&[composite]), "{composite}");
        }
        assert!(!probable(&limbs_from_be(&real())));
        // The one way the test errs: 2047 = 23·89, the smallest strong pseudoprime to base 2.
        // Refusing such a modulus as prime fails closed.
        assert!(probable(&[2047]));
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
            assert!(RsaKey::new(&real(), e).is_ok(), "e = {e:?}");
        }
    }

    #[test]
    fn signatures_of_the_wrong_length_or_size_are_refused_before_any_arithmetic() {
        let key = RsaKey::new(&real(), &[3]).unwrap();
        assert!(key.open(&[1; 255]).is_none() && key.open(&[1; 257]).is_none());
        // The modulus itself is no signature, nor is anything above it.
        assert!(key.open(&real()).is_none() && key.open(&ones(2048)).is_none());
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
