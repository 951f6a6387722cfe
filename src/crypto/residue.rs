//! Integers modulo an odd modulus below 2^256, in four limbs: the fields and scalar rings of
//! P-256 and Ed25519 share this one type, with the usual operators, so that curve formulas
//! read as they are written in their papers.
//!
//! A [`Residue`] is kept fully reduced in Montgomery form, so equal values have equal limbs.
//! Its constants come from hex at compile time ([`Residue::from_hex`]).

use std::fmt::Debug;
use std::marker::PhantomData;
use std::ops::{Add, Mul, Neg, Sub};

use super::montgomery::{add_assign, less, mul, neg_inverse, r_squared, sub_assign};

/// A modulus as a type: odd, below 2^256, its Montgomery constants derived once.
pub(crate) trait Modulus: Copy + Eq + Debug {
    /// The modulus, little-endian limbs.
    const M: [u64; 4];
    /// `-M⁻¹ mod 2^64`.
    const INV: u64 = neg_inverse(Self::M[0]);
    /// `R² mod M`, with `R = 2^256`.
    const R2: [u64; 4] = {
        let mut out = [0; 4];
        r_squared(&Self::M, &mut out);
        out
    };
}

/// An integer modulo `M::M`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Residue<M: Modulus>([u64; 4], PhantomData<M>);

impl<M: Modulus> Residue<M> {
    pub(crate) const ZERO: Self = Residue([0; 4], PhantomData);
    pub(crate) const ONE: Self = Self::from_hex("01");

    /// The value of a big-endian hex string below the modulus; a constant that is not fails
    /// to compile.
    pub(crate) const fn from_hex(hex: &str) -> Self {
        let value = limbs_from_hex(hex);
        assert!(less(&value, &M::M), "a constant is not below its modulus");
        Self::reduce(value)
    }

    /// `value` if it is below the modulus (a canonical encoding), else `None`.
    pub(crate) fn new(value: [u64; 4]) -> Option<Self> {
        less(&value, &M::M).then(|| Self::reduce(value))
    }

    /// `value mod M`, for any `value` below 2^256: one Montgomery product with `R² mod M`
    /// brings it into Montgomery form and reduces it at once (the product needs only its
    /// second factor below `M`).
    pub(crate) const fn reduce(value: [u64; 4]) -> Self {
        let mut out = [0; 4];
        mul(&value, &M::R2, &M::M, M::INV, &mut out);
        Residue(out, PhantomData)
    }

    /// `(high·2^256 + low) mod M`: a 512-bit hash as a scalar. `2^256 mod M` in Montgomery
    /// form is `R·R mod M`, that is `R2`.
    pub(crate) fn reduce_wide(low: [u64; 4], high: [u64; 4]) -> Self {
        Self::reduce(low) + Self::reduce(high) * Residue(M::R2, PhantomData)
    }

    /// The plain value, below the modulus, little-endian limbs.
    pub(crate) fn value(self) -> [u64; 4] {
        let mut out = [0; 4];
        mul(&self.0, &[1, 0, 0, 0], &M::M, M::INV, &mut out);
        out
    }

    pub(crate) fn is_zero(self) -> bool {
        self.0 == [0; 4]
    }

    pub(crate) fn square(self) -> Self {
        self * self
    }

    pub(crate) fn double(self) -> Self {
        self + self
    }

    /// `self^exponent`, square and multiply from the top bit.
    pub(crate) fn pow(self, exponent: &[u64; 4]) -> Self {
        let mut acc = Self::ONE;
        for bit in (0..256).rev() {
            acc = acc.square();
            if exponent[bit / 64] >> (bit % 64) & 1 == 1 {
                acc = acc * self;
            }
        }
        acc
    }

    /// `self⁻¹` by Fermat's little theorem (`self^(M-2)`), for the prime moduli this crate
    /// uses; zero stays zero, which callers refuse before they divide.
    pub(crate) fn invert(self) -> Self {
        let mut exponent = M::M;
        sub_assign(&mut exponent, &[2, 0, 0, 0]);
        self.pow(&exponent)
    }
}

impl<M: Modulus> Add for Residue<M> {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        let mut sum = self.0;
        if add_assign(&mut sum, &other.0) || !less(&sum, &M::M) {
            sub_assign(&mut sum, &M::M);
        }
        Residue(sum, PhantomData)
    }
}

impl<M: Modulus> Sub for Residue<M> {
    type Output = Self;
    fn sub(self, other: Self) -> Self {
        let mut difference = self.0;
        if sub_assign(&mut difference, &other.0) {
            add_assign(&mut difference, &M::M);
        }
        Residue(difference, PhantomData)
    }
}

impl<M: Modulus> Mul for Residue<M> {
    type Output = Self;
    fn mul(self, other: Self) -> Self {
        let mut out = [0; 4];
        mul(&self.0, &other.0, &M::M, M::INV, &mut out);
        Residue(out, PhantomData)
    }
}

impl<M: Modulus> Neg for Residue<M> {
    type Output = Self;
    fn neg(self) -> Self {
        Self::ZERO - self
    }
}

/// Up to 64 big-endian hex digits as little-endian limbs.
pub(crate) const fn limbs_from_hex(hex: &str) -> [u64; 4] {
    let digits = hex.as_bytes();
    assert!(digits.len() <= 64, "more than 256 bits of hex");
    let mut limbs = [0u64; 4];
    let mut i = 0;
    while i < digits.len() {
        let digit = match digits[digits.len() - 1 - i] {
            c @ b'0'..=b'9' => c - b'0',
            c @ b'a'..=b'f' => c - b'a' + 10,
            _ => panic!("not a lowercase hex digit"),
        };
        limbs[i / 16] |= (digit as u64) << (4 * (i % 16));
        i += 1;
    }
    limbs
}

/// Up to 32 big-endian bytes as little-endian limbs.
pub(crate) fn be_limbs(bytes: &[u8]) -> [u64; 4] {
    let mut limbs = [0; 4];
    for (limb, chunk) in limbs.iter_mut().zip(bytes.rchunks(8)) {
        *limb = chunk.iter().fold(0, |limb, &byte| limb << 8 | u64::from(byte));
    }
    limbs
}

/// Up to 32 little-endian bytes as little-endian limbs.
pub(crate) fn le_limbs(bytes: &[u8]) -> [u64; 4] {
    let mut limbs = [0; 4];
    for (limb, chunk) in limbs.iter_mut().zip(bytes.chunks(8)) {
        *limb = chunk.iter().rev().fold(0, |limb, &byte| limb << 8 | u64::from(byte));
    }
    limbs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The prime 2^61 - 1, small enough to check against u128 arithmetic.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    struct Small;
    impl Modulus for Small {
        const M: [u64; 4] = [(1 << 61) - 1, 0, 0, 0];
    }
    type F = Residue<Small>;

    #[test]
    fn operators_agree_with_u128_arithmetic() {
        let m = (1u128 << 61) - 1;
        let values = [0u64, 1, 2, 12_345_678_901, (1 << 61) - 2, 0x0123_4567_89ab_cdef];
        for &a in &values {
            for &b in &values {
                let (x, y) = (F::new([a, 0, 0, 0]).unwrap(), F::new([b, 0, 0, 0]).unwrap());
                let (a, b) = (u128::from(a), u128::from(b));
                assert_eq!(u128::from((x + y).value()[0]), (a + b) % m);
                assert_eq!(u128::from((x - y).value()[0]), (a + m - b) % m);
                assert_eq!(u128::from((x * y).value()[0]), a * b % m);
                assert_eq!(u128::from((-x).value()[0]), (m - a) % m);
            }
            let x = F::new([a, 0, 0, 0]).unwrap();
            if a != 0 {
                assert_eq!(x * x.invert(), F::ONE, "{a} times its inverse");
            }
        }
        assert_eq!(F::new(Small::M), None, "the modulus itself is not canonical");
        assert_eq!(F::reduce([(1 << 61) + 5, 0, 0, 0]), F::from_hex("6"));
        // 2^256 + 7 mod (2^61 - 1): 2^256 = 2^(61·4 + 12) ≡ 2^12.
        assert_eq!(F::reduce_wide([7, 0, 0, 0], [1, 0, 0, 0]), F::from_hex("1007"));
    }

    #[test]
    fn byte_orders_read_as_written() {
        let mut be = [0u8; 32];
        be[31] = 1;
        be[0] = 0x80;
        assert_eq!(be_limbs(&be), [1, 0, 0, 1 << 63]);
        assert_eq!(be_limbs(&be[24..]), [1, 0, 0, 0]);
        be.reverse();
        assert_eq!(le_limbs(&be), [1, 0, 0, 1 << 63]);
        assert_eq!(limbs_from_hex("10000000000000000"), [0, 1, 0, 0]);
    }
}
