//! JSON equality as the keywords `enum`, `const` and `uniqueItems` mean it: numbers by value
//! (`1 == 1.0`), objects regardless of member order; and a hash that equal values share.

use std::cmp::Ordering;
use std::hash::{BuildHasher, Hasher, RandomState};

use serde_json::{Number, Value};

/// JSON equality: numbers by value (`1 == 1.0`), objects regardless of key order.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    equal(a, b, &mut 0)
}

/// [`json_eq`], adding to `work` what it cost: one for each pair of values compared, and one
/// for each 64 bytes of two strings of the same length (others differ at once), so that the
/// step budget can pay for it.
pub(super) fn equal(a: &Value, b: &Value, work: &mut u64) -> bool {
    *work += 1;
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y) == Some(Ordering::Equal),
        (Value::String(x), Value::String(y)) => {
            if x.len() == y.len() {
                *work += x.len() as u64 / 64;
            }
            x == y
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b, work))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(key, a)| y.get(key).is_some_and(|b| equal(a, b, work)))
        }
        _ => a == b,
    }
}

/// Compares two JSON numbers by their mathematical values: exactly, also an integer of up to
/// 64 bits with a double (as floats, `1e19` and `10000000000000000001` were equal).
pub(super) fn compare(a: &Number, b: &Number) -> Option<Ordering> {
    match (as_i128(a), as_i128(b)) {
        (Some(x), Some(y)) => Some(x.cmp(&y)),
        (Some(x), None) => integer_vs_double(x, b.as_f64()?),
        (None, Some(y)) => integer_vs_double(y, a.as_f64()?).map(Ordering::reverse),
        (None, None) => a.as_f64()?.partial_cmp(&b.as_f64()?),
    }
}

/// How integer `x` (below 2^64 in magnitude) compares with double `f`. `f as i128` is `f`'s
/// whole part, exact (a double's whole part is a double), or ±2^127 past that, beyond any
/// such `x`: when `x` differs from it, that decides; when `x` is it, `x` as a double is
/// exact, and the fraction of `f` decides.
fn integer_vs_double(x: i128, f: f64) -> Option<Ordering> {
    let whole = f as i128;
    match x.cmp(&whole) {
        Ordering::Equal => (whole as f64).partial_cmp(&f),
        unequal => Some(unequal),
    }
}

pub(super) fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from))
}

/// A hash that values equal by [`json_eq`] share; adds the number of values it visited to
/// `size`. Numbers hash by their value as a float: `1` and `1.0` alike, and so do integers too
/// large for a float to tell apart (which `json_eq` then tells apart). Object members are
/// hashed apart and summed, so member order does not count.
pub(super) fn canonical_hash(value: &Value, keys: &RandomState, size: &mut u64) -> u64 {
    *size += 1;
    let mut hasher = keys.build_hasher();
    match value {
        Value::Null => hasher.write_u8(0),
        Value::Bool(b) => hasher.write_u8(1 + u8::from(*b)),
        Value::Number(n) => {
            // 0.0 and -0.0 are equal; every other float has one bit pattern.
            let float = n.as_f64().unwrap_or(0.0);
            hasher.write_u8(3);
            hasher.write_u64(if float == 0.0 { 0 } else { float.to_bits() });
        }
        Value::String(text) => {
            hasher.write_u8(4);
            hasher.write(text.as_bytes());
        }
        Value::Array(items) => {
            hasher.write_u8(5);
            for item in items {
                hasher.write_u64(canonical_hash(item, keys, size));
            }
        }
        Value::Object(members) => {
            let mut sum = 0u64;
            for (key, member) in members {
                let mut pair = keys.build_hasher();
                pair.write(key.as_bytes());
                pair.write_u64(canonical_hash(member, keys, size));
                sum = sum.wrapping_add(pair.finish());
            }
            hasher.write_u8(6);
            hasher.write_u64(sum);
        }
    }
    hasher.finish()
}
