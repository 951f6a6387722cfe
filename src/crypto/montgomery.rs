//! Montgomery arithmetic on little-endian 64-bit limbs for any odd modulus: the one
//! multiplication RSA (2048 to 8192 bits) and the 256-bit curve fields are built on, and
//! exponentiation for RSA: by the public exponent to verify, by the odd part of `n - 1` to
//! test a modulus for primality when a key is read.
//!
//! A number `x` is held in Montgomery form as `x·R mod m`, with `R = 2^(64·n)` for a modulus
//! of `n` limbs; multiplying two such numbers costs one pass without any division. Nothing
//! here is constant time: only public values (keys, signatures, hashes) pass through.

/// An odd modulus with the constants Montgomery multiplication needs, for RSA: its size is
/// known only when a key arrives.
#[derive(Clone, Debug)]
pub(crate) struct OddModulus {
    limbs: Vec<u64>,
    inv: u64,
    r2: Vec<u64>,
}

impl OddModulus {
    /// The context for the odd modulus `limbs` (little-endian).
    pub(crate) fn new(limbs: Vec<u64>) -> OddModulus {
        let mut r2 = vec![0; limbs.len()];
        r_squared(&limbs, &mut r2);
        OddModulus { inv: neg_inverse(limbs[0]), r2, limbs }
    }

    /// `base^exponent mod m`, for `base < m` of the modulus's length and an exponent of at
    /// least 1 (little-endian limbs): square and multiply, left to right, so an exponent of
    /// `k` bits costs at most `2k` multiplications.
    pub(crate) fn pow(&self, base: &[u64], exponent: &[u64]) -> Vec<u64> {
        let (m, n) = (&self.limbs[..], self.limbs.len());
        let mut base_m = vec![0; n];
        mul(base, &self.r2, m, self.inv, &mut base_m);
        let mut acc = base_m.clone();
        let mut scratch = vec![0; n];
        let top = exponent
            .iter()
            .rposition(|&limb| limb != 0)
            .map_or(0, |i| 64 * (i + 1) - exponent[i].leading_zeros() as usize);
        for bit in (0..top.saturating_sub(1)).rev() {
            mul(&acc, &acc, m, self.inv, &mut scratch);
            std::mem::swap(&mut acc, &mut scratch);
            if exponent[bit / 64] >> (bit % 64) & 1 == 1 {
                mul(&acc, &base_m, m, self.inv, &mut scratch);
                std::mem::swap(&mut acc, &mut scratch);
            }
        }
        // Out of Montgomery form: a product with plain 1 divides by R once more.
        let mut one = vec![0; n];
        one[0] = 1;
        mul(&acc, &one, m, self.inv, &mut scratch);
        scratch
    }

    /// The modulus, little-endian.
    pub(crate) fn limbs(&self) -> &[u64] {
        &self.limbs
    }
}

/// `out = a·b·R⁻¹ mod m`, fully reduced, for `b < m`, any `a` of `n` limbs, and
/// `inv = -m⁻¹ mod 2^64`: the coarsely integrated operand scanning method (Koç, Acar and
/// Kaliski, 1996). The running sum stays below `2m` (it is below `(a·b + R·m)/R`, and
/// `a·b < R·m`), so it needs the `n` limbs of `out` and one more bit, `top`, and one
/// subtraction at the end reduces it fully.
pub(crate) const fn mul(a: &[u64], b: &[u64], m: &[u64], inv: u64, out: &mut [u64]) {
    let n = m.len();
    let mut i = 0;
    while i < n {
        out[i] = 0;
        i += 1;
    }
    let mut top = 0u64;
    i = 0;
    while i < n {
        // t += a[i]·b
        let mut carry = 0;
        let mut j = 0;
        while j < n {
            (out[j], carry) = mac(out[j], a[i], b[j], carry);
            j += 1;
        }
        let (high, over) = top.overflowing_add(carry);
        // t += q·m with q chosen so that the lowest limb becomes zero, then t /= 2^64.
        let q = out[0].wrapping_mul(inv);
        (_, carry) = mac(out[0], q, m[0], 0);
        j = 1;
        while j < n {
            (out[j - 1], carry) = mac(out[j], q, m[j], carry);
            j += 1;
        }
        let (low, over_again) = high.overflowing_add(carry);
        out[n - 1] = low;
        top = over as u64 + over_again as u64;
        i += 1;
    }
    if top != 0 || !less(out, m) {
        sub_assign(out, m);
    }
}

/// `acc + x·y + carry` as (low limb, high limb); it cannot overflow 128 bits.
const fn mac(acc: u64, x: u64, y: u64, carry: u64) -> (u64, u64) {
    let wide = acc as u128 + (x as u128) * (y as u128) + carry as u128;
    (wide as u64, (wide >> 64) as u64)
}

/// `a < b`, for limb strings of one length.
pub(crate) const fn less(a: &[u64], b: &[u64]) -> bool {
    let mut i = a.len();
    while i > 0 {
        i -= 1;
        if a[i] != b[i] {
            return a[i] < b[i];
        }
    }
    false
}

/// `a -= b` modulo `2^(64·n)`; true when it borrowed (`a` was below `b`).
pub(crate) const fn sub_assign(a: &mut [u64], b: &[u64]) -> bool {
    let mut borrow = false;
    let mut i = 0;
    while i < a.len() {
        let (d, b1) = a[i].overflowing_sub(b[i]);
        let (d, b2) = d.overflowing_sub(borrow as u64);
        a[i] = d;
        borrow = b1 || b2;
        i += 1;
    }
    borrow
}

/// `a += b` modulo `2^(64·n)`; true when it carried out.
pub(crate) const fn add_assign(a: &mut [u64], b: &[u64]) -> bool {
    let mut carry = false;
    let mut i = 0;
    while i < a.len() {
        let (s, c1) = a[i].overflowing_add(b[i]);
        let (s, c2) = s.overflowing_add(carry as u64);
        a[i] = s;
        carry = c1 || c2;
        i += 1;
    }
    carry
}

/// `-m⁻¹ mod 2^64` for odd `m0`, by Newton's iteration: each step doubles the bits that are
/// right, from the one bit of `x = 1` to all 64 in six steps.
pub(crate) const fn neg_inverse(m0: u64) -> u64 {
    let mut x = 1u64;
    let mut step = 0;
    while step < 6 {
        x = x.wrapping_mul(2u64.wrapping_sub(m0.wrapping_mul(x)));
        step += 1;
    }
    x.wrapping_neg()
}

/// `out = R² mod m`, the factor that brings a number into Montgomery form: 1 doubled
/// `2·64·n` times, reduced after each doubling. Done once per modulus.
pub(crate) const fn r_squared(m: &[u64], out: &mut [u64]) {
    let mut i = 0;
    while i < out.len() {
        out[i] = 0;
        i += 1;
    }
    out[0] = 1;
    let mut doubling = 0;
    while doubling < 128 * m.len() {
        let mut carry = 0;
        i = 0;
        while i < out.len() {
            let next = out[i] >> 63;
            out[i] = out[i] << 1 | carry;
            carry = next;
            i += 1;
        }
        if carry != 0 || !less(out, m) {
            sub_assign(out, m);
        }
        doubling += 1;
    }
}

/// Big-endian bytes as little-endian limbs, as many limbs as the bytes need.
pub(crate) fn limbs_from_be(bytes: &[u8]) -> Vec<u64> {
    bytes
        .rchunks(8)
        .map(|chunk| chunk.iter().fold(0u64, |limb, &byte| limb << 8 | u64::from(byte)))
        .collect()
}

/// Little-endian limbs as `len` big-endian bytes; the limbs must fit.
pub(crate) fn be_from_limbs(limbs: &[u64], len: usize) -> Vec<u8> {
    (0..len)
        .rev()
        .map(|i| limbs.get(i / 8).map_or(0, |limb| (limb >> (8 * (i % 8))) as u8))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_moduli_agree_with_plain_arithmetic() {
        // One limb, so R = 2^64 and every step can be checked with u128.
        for m in [3u64, 97, 65_537, 0xffff_ffff_ffff_ffc5, (1 << 63) + 1] {
            let modulus = OddModulus::new(vec![m]);
            for (base, e) in [(2u64, 3u32), (m - 1, 65_537), (12_345 % m, 17), (0, 5), (1, 1)] {
                let mut want = 1u128;
                for _ in 0..e {
                    want = want * u128::from(base) % u128::from(m);
                }
                assert_eq!(
                    modulus.pow(&[base], &[e.into()]),
                    vec![want as u64],
                    "{base}^{e} mod {m}"
                );
            }
        }
    }

    /// `a·b mod m` by doubling and adding, for `m < 2^127` (nothing overflows u128).
    fn slow_mul_mod(a: u128, b: u128, m: u128) -> u128 {
        (0..128).rev().fold(0, |acc, bit| {
            let acc = acc * 2 % m;
            if b >> bit & 1 == 1 { (acc + a) % m } else { acc }
        })
    }

    #[test]
    fn two_limb_powers_agree_with_slow_arithmetic() {
        let wide = |limbs: &[u64]| u128::from(limbs[0]) | u128::from(limbs[1]) << 64;
        // 2^127 - 1, and a modulus whose top limb is small.
        for m in [[u64::MAX, u64::MAX >> 1], [0x9e37_79b9_7f4a_7c15, 3]] {
            let modulus = OddModulus::new(m.to_vec());
            let a = [0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321 % m[1].max(1)];
            // Exponents of one limb and of two (as primality testing uses).
            for e in [2u128, 3, 65_537, u32::MAX.into(), 1 << 64 | 5, u128::MAX >> 1] {
                let mut want = 1;
                for bit in (0..128).rev() {
                    want = slow_mul_mod(want, want, wide(&m));
                    if e >> bit & 1 == 1 {
                        want = slow_mul_mod(want, wide(&a), wide(&m));
                    }
                }
                let e_limbs = [e as u64, (e >> 64) as u64];
                assert_eq!(wide(&modulus.pow(&a, &e_limbs)), want, "exponent {e}, modulus {m:x?}");
            }
        }
    }

    #[test]
    fn bytes_and_limbs_round_trip() {
        let bytes: Vec<u8> = (1..=19).collect();
        let limbs = limbs_from_be(&bytes);
        assert_eq!(limbs.len(), 3);
        assert_eq!(limbs[2], 0x01_0203);
        assert_eq!(be_from_limbs(&limbs, 19), bytes);
        assert_eq!(be_from_limbs(&limbs, 21)[..2], [0, 0]);
        assert_eq!(neg_inverse(3).wrapping_mul(3), u64::MAX);
    }
}
