//! `[a]P + [b]Q`, the one scalar multiplication signature verification needs (ECDSA's
//! `u1·G + u2·Q`, Ed25519's `[S]B − [k]A`), by Straus's method: both sums share one chain
//! of doublings, four bits of each scalar per step.

/// A group written additively, whose addition is complete: it gives the right answer for
/// any two elements, equal ones and the identity included, so no case needs care here.
pub(crate) trait Group: Copy {
    fn identity() -> Self;
    fn add(&self, other: &Self) -> Self;
    fn double(&self) -> Self;
}

/// `[a]p + [b]q` for 256-bit scalars (little-endian limbs). Not constant time: the scalars
/// of a verification are public.
pub(crate) fn sum_of_multiples<G: Group>(a: &[u64; 4], p: &G, b: &[u64; 4], q: &G) -> G {
    let (p_table, q_table) = (multiples(p), multiples(q));
    let mut acc = G::identity();
    for window in (0..64).rev() {
        if window != 63 {
            for _ in 0..4 {
                acc = acc.double();
            }
        }
        for (scalar, table) in [(a, &p_table), (b, &q_table)] {
            let digit = (scalar[window / 16] >> (4 * (window % 16)) & 15) as usize;
            if digit != 0 {
                acc = acc.add(&table[digit]);
            }
        }
    }
    acc
}

/// `[0]p` to `[15]p`.
fn multiples<G: Group>(p: &G) -> [G; 16] {
    let mut table = [G::identity(); 16];
    for i in 1..16 {
        table[i] = table[i - 1].add(p);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    const M: u128 = (1 << 61) - 1;

    /// The integers modulo the prime 2^61 - 1 under addition, where `[a]p` is `a·p mod M`.
    #[derive(Clone, Copy)]
    struct Additive(u128);
    impl Group for Additive {
        fn identity() -> Self {
            Additive(0)
        }
        fn add(&self, other: &Self) -> Self {
            Additive((self.0 + other.0) % M)
        }
        fn double(&self) -> Self {
            Additive(self.0 * 2 % M)
        }
    }

    #[test]
    fn matches_plain_arithmetic() {
        let reduce = |s: &[u64; 4]| {
            s.iter().rev().fold(0, |acc, &limb| ((acc << 64) + u128::from(limb)) % M)
        };
        let cases = [
            ([0, 0, 0, 0], 5, [1, 0, 0, 0], 7),
            ([u64::MAX, 3, 0, 1 << 63], 0x1234, [0x0f0f_0f0f, 0, 9, 0], 1),
            ([123_456_789, u64::MAX, u64::MAX, u64::MAX], 3, [u64::MAX; 4], M - 1),
        ];
        for (a, p, b, q) in cases {
            let got = sum_of_multiples(&a, &Additive(p), &b, &Additive(q)).0;
            let want = (reduce(&a) * p + reduce(&b) * q) % M;
            assert_eq!(got, want, "{a:?}·{p} + {b:?}·{q}");
        }
    }
}
