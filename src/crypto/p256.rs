//! ES256 (RFC 7518 §3.4): ECDSA over P-256 with SHA-256 (FIPS 186-5 §6.4.2), the signature
//! as `r ‖ s` in 64 bytes (IEEE P1363), the public key as affine coordinates checked to be
//! on the curve.

use super::key_error::KeyError;
use super::residue::{Modulus, Residue, be_limbs, limbs_from_hex};
use super::straus::{Group, sum_of_multiples};
use crate::util::sha256::sha256;

/// The field prime `p = 2^256 - 2^224 + 2^192 + 2^96 - 1`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct FieldPrime;
impl Modulus for FieldPrime {
    const M: [u64; 4] =
        limbs_from_hex("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff");
}

/// The order `n` of the base point, which is the order of the whole curve (cofactor 1).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct GroupOrder;
impl Modulus for GroupOrder {
    const M: [u64; 4] =
        limbs_from_hex("ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551");
}

type Fe = Residue<FieldPrime>;
type Scalar = Residue<GroupOrder>;

/// `b` of the curve `y² = x³ - 3x + b` (FIPS 186-5 / SP 800-186 §3.2.1.3).
const B: Fe = Fe::from_hex("5ac635d8aa3a93e7b3ebbd55769886bc651d06b0cc53b0f63bce3c3e27d2604b");

/// The base point.
const G: Point = Point {
    x: Fe::from_hex("6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296"),
    y: Fe::from_hex("4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5"),
    z: Fe::ONE,
};

/// A P-256 public key: a point on the curve (never the identity, which has no affine form).
#[derive(Clone, Debug)]
pub(crate) struct P256Key {
    point: Point,
}

impl P256Key {
    /// The key at affine `(x, y)`, each 32 big-endian bytes (JWK `x` and `y`), refused unless
    /// both are below `p` and the point is on the curve. With cofactor 1, every such point
    /// is in the group: no further check of the subgroup is needed.
    pub(crate) fn new(x: &[u8], y: &[u8]) -> Result<P256Key, KeyError> {
        let coordinate = |bytes: &[u8]| match bytes.len() {
            32 => Fe::new(be_limbs(bytes)).ok_or(KeyError::P256NotOnCurve),
            len => Err(KeyError::P256CoordinateLength { len }),
        };
        let (x, y) = (coordinate(x)?, coordinate(y)?);
        if y.square() != x.square() * x - x.double() - x + B {
            return Err(KeyError::P256NotOnCurve);
        }
        Ok(P256Key { point: Point { x, y, z: Fe::ONE } })
    }

    /// ECDSA verification: `r` and `s` in `[1, n-1]`, then `x(u1·G + u2·Q) mod n == r` with
    /// `u1 = z/s`, `u2 = r/s` and `z` the SHA-256 hash as an integer (P-256's order has 256
    /// bits, so the whole hash is used).
    pub(crate) fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        if signature.len() != 64 {
            return false;
        }
        let (r, s) = signature.split_at(32);
        let in_range = |bytes| Scalar::new(be_limbs(bytes)).filter(|s| !s.is_zero());
        let (Some(r), Some(s)) = (in_range(r), in_range(s)) else { return false };
        let z = Scalar::reduce(be_limbs(&sha256(message)));
        let w = s.invert();
        let sum = sum_of_multiples(&(z * w).value(), &G, &(r * w).value(), &self.point);
        if sum.z.is_zero() {
            return false;
        }
        let x = sum.x * sum.z.invert();
        // The affine x as an integer, modulo n (FIPS 186-5 §6.4.2, step 7): x < p, and p > n.
        Scalar::reduce(x.value()) == r
    }
}

/// A point in projective coordinates `(X : Y : Z)`, standing for `(X/Z, Y/Z)`; the identity
/// is `(0 : 1 : 0)`.
#[derive(Clone, Copy, Debug)]
struct Point {
    x: Fe,
    y: Fe,
    z: Fe,
}

/// The complete formulas of Renes, Costello and Batina, "Complete addition formulas for prime
/// order elliptic curves" (2016), for `a = -3`: no exceptional case (doubling through `add`,
/// the identity, `P + (-P)`), which is what Wycheproof's edge cases probe.
impl Group for Point {
    fn identity() -> Point {
        Point { x: Fe::ZERO, y: Fe::ONE, z: Fe::ZERO }
    }

    /// Algorithm 4.
    fn add(&self, q: &Point) -> Point {
        let p = self;
        let (xx, yy, zz) = (p.x * q.x, p.y * q.y, p.z * q.z);
        let xy = (p.x + p.y) * (q.x + q.y) - (xx + yy);
        let yz = (p.y + p.z) * (q.y + q.z) - (yy + zz);
        let xz = (p.x + p.z) * (q.x + q.z) - (xx + zz);
        let bzz = xz - B * zz;
        let bzz3 = bzz.double() + bzz;
        let (minus, plus) = (yy - bzz3, yy + bzz3);
        let zz3 = zz.double() + zz;
        let bxz = B * xz - (zz3 + xx);
        let bxz3 = bxz.double() + bxz;
        let xx3 = xx.double() + xx - zz3;
        Point { x: plus * xy - yz * bxz3, y: plus * minus + xx3 * bxz3, z: minus * yz + xy * xx3 }
    }

    /// Algorithm 6.
    fn double(&self) -> Point {
        let p = self;
        let (xx, yy, zz) = (p.x.square(), p.y.square(), p.z.square());
        let xy2 = (p.x * p.y).double();
        let xz2 = (p.x * p.z).double();
        let bzz = B * zz - xz2;
        let bzz3 = bzz.double() + bzz;
        let (minus, plus) = (yy - bzz3, yy + bzz3);
        let zz3 = zz.double() + zz;
        let bxz2 = B * xz2 - (zz3 + xx);
        let bxz6 = bxz2.double() + bxz2;
        let xx3 = xx.double() + xx - zz3;
        let yz2 = (p.y * p.z).double();
        Point {
            x: minus * xy2 - bxz6 * yz2,
            y: plus * minus + xx3 * bxz6,
            z: (yz2 * yy).double().double(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_point(p: &Point, q: &Point) -> bool {
        p.x * q.z == q.x * p.z && p.y * q.z == q.y * p.z
    }

    #[test]
    fn the_group_law_holds_on_the_base_point() {
        let n = GroupOrder::M;
        let zero = [0; 4];
        assert!(P256Key::new(&be(G.x), &be(G.y)).is_ok(), "G is on the curve");
        // [n]G is the identity, [n-1]G is -G, [2]G by doubling equals G + G.
        let at = |k: [u64; 4]| sum_of_multiples(&k, &G, &zero, &G);
        assert!(at(n).z.is_zero());
        let mut n_minus_1 = n;
        n_minus_1[0] -= 1;
        let minus_g = at(n_minus_1);
        assert!(same_point(&minus_g, &Point { x: G.x, y: -G.y, z: Fe::ONE }));
        assert!(same_point(&G.double(), &G.add(&G)));
        assert!(G.add(&minus_g).z.is_zero(), "G + (-G) is the identity");
        let identity = Point::identity();
        assert!(same_point(&identity.add(&G), &G) && identity.double().z.is_zero());
        // [a]G + [b]G = [a+b]G through both tables.
        let (a, b) = ([5, 0, 7, 0], [3, 1, 0, 9]);
        assert!(same_point(&sum_of_multiples(&a, &G, &b, &G), &at([8, 1, 7, 9])));
    }

    fn be(x: Fe) -> Vec<u8> {
        x.value().iter().rev().flat_map(|limb| limb.to_be_bytes()).collect()
    }

    #[test]
    fn keys_off_the_curve_or_of_the_wrong_length_are_refused() {
        let (x, y) = (be(G.x), be(G.y));
        let mut bent = y.clone();
        bent[31] ^= 1;
        assert_eq!(P256Key::new(&x, &bent).err(), Some(KeyError::P256NotOnCurve));
        assert_eq!(
            P256Key::new(&x[1..], &y).err(),
            Some(KeyError::P256CoordinateLength { len: 31 })
        );
        let mut long = vec![0];
        long.extend(&y);
        assert_eq!(P256Key::new(&x, &long).err(), Some(KeyError::P256CoordinateLength { len: 33 }));
        // y + p is the same residue but no canonical coordinate.
        assert_eq!(P256Key::new(&x, &[0xff; 32]).err(), Some(KeyError::P256NotOnCurve));
    }

    #[test]
    fn signatures_out_of_range_are_refused() {
        let key = P256Key::new(&be(G.x), &be(G.y)).unwrap();
        let n: Vec<u8> = GroupOrder::M.iter().rev().flat_map(|l| l.to_be_bytes()).collect();
        let one = {
            let mut one = [0u8; 32];
            one[31] = 1;
            one
        };
        for (r, s) in [(&[0u8; 32][..], &one[..]), (&one, &[0; 32]), (&n, &one), (&one, &n)] {
            assert!(!key.verify(b"", &[r, s].concat()));
        }
        assert!(!key.verify(b"", &[0; 63]) && !key.verify(b"", &[1; 65]));
    }
}
