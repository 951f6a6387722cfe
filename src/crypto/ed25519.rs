//! EdDSA over Ed25519 (RFC 8032 §5.1, RFC 8037): verification only. Encodings of `A` and `R`
//! must be canonical points, `S` must be below the group order `L`, and the check is the
//! cofactorless `[S]B = R + [k]A` of RFC 8032 §5.1.7, as Wycheproof expects.

use super::key_error::KeyError;
use super::montgomery::less;
use super::residue::{Modulus, Residue, le_limbs, limbs_from_hex};
use super::sha512::sha512;
use super::straus::{Group, sum_of_multiples};

/// The field prime `p = 2^255 - 19`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct FieldPrime;
impl Modulus for FieldPrime {
    const M: [u64; 4] =
        limbs_from_hex("7fffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffed");
}

/// The prime order `L = 2^252 + 27742317777372353535851937790883648493` of the base point.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
struct GroupOrder;
impl Modulus for GroupOrder {
    const M: [u64; 4] =
        limbs_from_hex("1000000000000000000000000000000014def9dea2f79cd65812631a5cf5d3ed");
}

type Fe = Residue<FieldPrime>;
type Scalar = Residue<GroupOrder>;

/// `d = -121665/121666` of the curve `-x² + y² = 1 + d·x²·y²`, and `2d`.
const D: Fe = Fe::from_hex("52036cee2b6ffe738cc740797779e89800700a4d4141d8ab75eb4dca135978a3");
const D2: Fe = Fe::from_hex("2406d9dc56dffce7198e80f2eef3d13000e0149a8283b156ebd69b9426b2f159");
/// `2^((p-1)/4)`, a square root of -1.
const SQRT_M1: Fe =
    Fe::from_hex("2b8324804fc1df0b2b4d00993dfbd7a72f431806ad2fe478c4ee1b274a0ea0b0");
/// `(p-5)/8`, the exponent of the square root in decoding.
const P_MINUS_5_OVER_8: [u64; 4] =
    limbs_from_hex("0ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffd");
/// The base point's affine coordinates.
const BX: Fe = Fe::from_hex("216936d3cd6e53fec0a4e231fdd6dc5c692cc7609525a7b2c9562d608f25d51a");
const BY: Fe = Fe::from_hex("6666666666666666666666666666666666666666666666666666666666666658");

/// An Ed25519 public key: its encoding (hashed into every `k`) and the point it decodes to.
#[derive(Clone, Debug)]
pub(crate) struct Ed25519Key {
    encoded: [u8; 32],
    point: Point,
}

impl Ed25519Key {
    /// The key of the 32 bytes `x` (what JWK `x` decodes to, RFC 8037 §2), refused unless
    /// they encode a point canonically, of more than small order.
    pub(crate) fn new(x: &[u8]) -> Result<Ed25519Key, KeyError> {
        let encoded: [u8; 32] =
            x.try_into().map_err(|_| KeyError::Ed25519Length { len: x.len() })?;
        let point = decode(&encoded).ok_or(KeyError::Ed25519Encoding)?;
        // A key of order dividing the cofactor 8 (the identity, the point of order 2, ...)
        // makes `[k]A` one of 8 points whatever the message: R = identity and S = 0 then
        // verify often enough that anyone can forge one. `[8]A` is the identity exactly then
        // (and `x = 0` only there, as no point has order 16).
        if point.double().double().double().x.is_zero() {
            return Err(KeyError::Ed25519SmallOrder);
        }
        Ok(Ed25519Key { encoded, point })
    }

    /// RFC 8032 §5.1.7: split the 64 bytes into `R ‖ S`, refuse `S ≥ L` and an `R` that is
    /// no point, then check `[S]B - [k]A = R` with `k = SHA-512(R ‖ A ‖ M) mod L`.
    pub(crate) fn verify(&self, message: &[u8], signature: &[u8]) -> bool {
        if signature.len() != 64 {
            return false;
        }
        let Some((r_bytes, s_bytes)) = signature.split_first_chunk::<32>() else { return false };
        let s = le_limbs(s_bytes);
        if !less(&s, &GroupOrder::M) {
            return false;
        }
        let Some(r) = decode(r_bytes) else { return false };
        let hash = sha512(&[r_bytes, &self.encoded, message]);
        let (low, high) = hash.split_at(32);
        let k = Scalar::reduce_wide(le_limbs(low), le_limbs(high));
        let a = self.point;
        let minus_a = Point { x: -a.x, y: a.y, z: a.z, t: -a.t };
        let sum = sum_of_multiples(&s, &base(), &k.value(), &minus_a);
        sum.x * r.z == r.x * sum.z && sum.y * r.z == r.y * sum.z
    }
}

/// The base point `B`.
fn base() -> Point {
    Point { x: BX, y: BY, z: Fe::ONE, t: BX * BY }
}

/// RFC 8032 §5.1.3: `y` in the low 255 bits (little-endian, refused unless below `p`), the
/// sign of `x` in the top bit; `x` is recovered as a square root, refused if there is none
/// or if `x = 0` comes with the sign bit set.
fn decode(bytes: &[u8; 32]) -> Option<Point> {
    let mut y_bytes = *bytes;
    let sign = u64::from(y_bytes[31] >> 7);
    y_bytes[31] &= 0x7f;
    let y = Fe::new(le_limbs(&y_bytes))?;
    let yy = y.square();
    let (u, v) = (yy - Fe::ONE, D * yy + Fe::ONE);
    let v3 = v.square() * v;
    let mut x = u * v3 * (u * v3.square() * v).pow(&P_MINUS_5_OVER_8);
    let vxx = v * x.square();
    if vxx == -u {
        x = x * SQRT_M1;
    } else if vxx != u {
        return None;
    }
    if x.is_zero() && sign == 1 {
        return None;
    }
    if x.value()[0] & 1 != sign {
        x = -x;
    }
    Some(Point { x, y, z: Fe::ONE, t: x * y })
}

/// A point in extended coordinates `(X : Y : Z : T)`, standing for `(X/Z, Y/Z)` with
/// `X·Y = Z·T` (Hisil, Wong, Carter and Dawson, 2008).
#[derive(Clone, Copy, Debug)]
struct Point {
    x: Fe,
    y: Fe,
    z: Fe,
    t: Fe,
}

/// The formulas of RFC 8032 §5.1.4. The addition is complete on this curve (`d` is not a
/// square), so small-order points and doubling through `add` need no special case.
impl Group for Point {
    fn identity() -> Point {
        Point { x: Fe::ZERO, y: Fe::ONE, z: Fe::ONE, t: Fe::ZERO }
    }

    fn add(&self, q: &Point) -> Point {
        let p = self;
        let a = (p.y - p.x) * (q.y - q.x);
        let b = (p.y + p.x) * (q.y + q.x);
        let c = p.t * D2 * q.t;
        let d = (p.z * q.z).double();
        let (e, f, g, h) = (b - a, d - c, d + c, b + a);
        Point { x: e * f, y: g * h, z: f * g, t: e * h }
    }

    fn double(&self) -> Point {
        let p = self;
        let (a, b, c) = (p.x.square(), p.y.square(), p.z.square().double());
        let h = a + b;
        let e = h - (p.x + p.y).square();
        let g = a - b;
        let f = c + g;
        Point { x: e * f, y: g * h, z: f * g, t: e * h }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::wycheproof::unhex;

    /// A point's RFC 8032 encoding, for the tests' round trips.
    fn encode(p: &Point) -> [u8; 32] {
        let z = p.z.invert();
        let (x, y) = (p.x * z, p.y * z);
        let mut out = [0u8; 32];
        for (chunk, limb) in out.chunks_mut(8).zip(y.value()) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        out[31] |= ((x.value()[0] & 1) as u8) << 7;
        out
    }

    #[test]
    fn the_constants_are_what_they_claim() {
        let small = |n: u64| Fe::new([n, 0, 0, 0]).unwrap();
        assert_eq!(D * small(121_666), -small(121_665));
        assert_eq!(D2, D.double());
        assert_eq!(SQRT_M1.square(), -Fe::ONE);
        let (xx, yy) = (BX.square(), BY.square());
        assert_eq!(yy - xx, Fe::ONE + D * xx * yy, "B is on the curve");
        assert_eq!(hex32(&encode(&base())), format!("58{}", "66".repeat(31)));
        assert!(sum_of_multiples(&GroupOrder::M, &base(), &[0; 4], &base()).x.is_zero());
    }

    fn hex32(bytes: &[u8; 32]) -> String {
        crate::util::sha256::hex(bytes)
    }

    /// RFC 8032 §7.1, TEST 1 to TEST 3: public key, message, signature.
    #[test]
    fn the_rfc_8032_vectors_verify() {
        let vectors = [
            (
                "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
                "",
                "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
            ),
            (
                "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
                "72",
                "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
            ),
            (
                "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
                "af82",
                "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
            ),
        ];
        for (public, message, signature) in vectors {
            let key = Ed25519Key::new(&unhex(public)).unwrap();
            let (message, mut signature) = (unhex(message), unhex(signature));
            assert!(key.verify(&message, &signature), "key {public}");
            // S + L is the same scalar but not canonical: refused (RFC 8032 §8.4).
            let mut s = le_limbs(&signature[32..]);
            crate::crypto::montgomery::add_assign(&mut s, &GroupOrder::M);
            let bytes: Vec<u8> = s.iter().flat_map(|limb| limb.to_le_bytes()).collect();
            signature[32..].copy_from_slice(&bytes);
            assert!(!key.verify(&message, &signature), "key {public}, S + L");
        }
    }

    #[test]
    fn decoding_round_trips_and_refuses_non_canonical_encodings() {
        let b = encode(&base());
        assert_eq!(decode(&b).map(|p| encode(&p)), Some(b));
        let doubled = base().double();
        assert_eq!(encode(&decode(&encode(&doubled)).unwrap()), encode(&doubled));
        assert_eq!(encode(&base().add(&base())), encode(&doubled));
        // y = p (all ones but the low byte ed) is not below p.
        let mut y_is_p = [0xff; 32];
        y_is_p[0] = 0xed;
        y_is_p[31] = 0x7f;
        assert!(decode(&y_is_p).is_none());
        // y = 1 is the identity, x = 0: with the sign bit set it is no canonical encoding.
        let mut one = [0u8; 32];
        one[0] = 1;
        assert!(decode(&one).is_some());
        one[31] = 0x80;
        assert!(decode(&one).is_none());
        // y = 2 has no x on the curve.
        assert!(decode(&unhex(&format!("02{}", "00".repeat(31))).try_into().unwrap()).is_none());
        assert_eq!(Ed25519Key::new(&[0; 31]).err(), Some(KeyError::Ed25519Length { len: 31 }));
    }

    /// The identity (y = 1), the point of order 2 (y = p - 1), one of order 4 (y = 0) and one
    /// of order 8 (RFC 8032 and the Ed25519 "small order" lists) are keys anyone can sign for.
    #[test]
    fn small_order_keys_are_refused() {
        for small in [
            format!("01{}", "00".repeat(31)),
            format!("ec{}7f", "ff".repeat(30)),
            "00".repeat(32),
            "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a".to_string(),
        ] {
            let key = Ed25519Key::new(&unhex(&small));
            assert_eq!(key.err(), Some(KeyError::Ed25519SmallOrder), "{small}");
        }
        // R = identity and S = 0 verify under the identity's key for every message: refused
        // above, while the base point of prime order stays a key.
        assert!(Ed25519Key::new(&encode(&base())).is_ok());
    }
}
