//! The keywords of numbers: `minimum`, `maximum`, the exclusive bounds (exact, also between
//! an integer and a double) and `multipleOf`, exact in decimal.

use std::cmp::Ordering;

use serde_json::Number;

use super::equal::{as_i128, compare};
use super::{Cx, Flow, Frame, Walk};

/// A numeric bound: its value, keyword, operator as written in messages, and the test.
type Bound<'k> = (&'k Option<Number>, &'static str, &'static str, fn(Ordering) -> bool);

impl Walk<'_> {
    pub(super) fn number(&self, frame: &mut Frame, n: &Number, cx: &mut Cx) -> Flow {
        let k = frame.k;
        let bounds: [Bound; 4] = [
            (&k.minimum, "minimum", ">=", |o| o != Ordering::Less),
            (&k.maximum, "maximum", "<=", |o| o != Ordering::Greater),
            (&k.exclusive_minimum, "exclusiveMinimum", ">", |o| o == Ordering::Greater),
            (&k.exclusive_maximum, "exclusiveMaximum", "<", |o| o == Ordering::Less),
        ];
        for (bound, keyword, op, holds) in bounds {
            if let Some(bound) = bound
                && !compare(n, bound).is_some_and(holds)
            {
                self.fail(frame, cx, keyword, || format!("must be {op} {bound}, got {n}"))?;
            }
        }
        if let Some(divisor) = &k.multiple_of
            && !multiple_of(n, divisor)
        {
            self.fail(frame, cx, "multipleOf", || {
                format!("must be a multiple of {divisor}, got {n}")
            })?;
        }
        Ok(())
    }
}

pub(super) fn is_integer(n: &Number) -> bool {
    n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// Whether `n` is an integer multiple of `divisor`, in exact decimal arithmetic on the values
/// [`decimal`] reads. Floating point would be wrong both ways: a tolerance calls
/// `5.0000000000001` a multiple of `0.001`, and a quotient that overflows (`1e308 / 0.5`) is
/// no integer.
fn multiple_of(n: &Number, divisor: &Number) -> bool {
    if let (Some(x), Some(d)) = (as_i128(n), as_i128(divisor)) {
        return d != 0 && x % d == 0;
    }
    let (x, d) = (decimal(n), decimal(divisor));
    if x.digits == 0 {
        return true;
    }
    if d.digits == 0 {
        return false;
    }
    // x / d = (x.digits / d.digits) * 10^shift. Without trailing zeros, `x.digits` is no
    // multiple of 10, so with a negative shift the quotient cannot be an integer; otherwise
    // it is one when what is left of `d.digits` once their common factors are gone divides
    // 10^shift: it is 2^a * 5^b with a and b at most the shift.
    let shift = i64::from(x.exponent) - i64::from(d.exponent);
    if shift < 0 {
        return false;
    }
    let mut rest = d.digits / gcd(x.digits, d.digits);
    for prime in [2, 5] {
        let mut times = 0;
        while rest.is_multiple_of(prime) {
            rest /= prime;
            times += 1;
        }
        if times > shift {
            return false;
        }
    }
    rest == 1
}

/// A number's absolute value as `digits * 10^exponent`, `digits` without trailing zeros.
struct Decimal {
    digits: u128,
    exponent: i32,
}

/// The exact decimal a number stands for: an integer of up to 64 bits as itself, any other
/// number as the shortest decimal that reads back as the same double (as serde_json writes
/// it, and JavaScript: `0.001`, `1e20`; written by serde_json, so that the static binary
/// links no float formatting of its own). Every spelling of a number that reads as the same
/// double has the same decimal, and a decimal of up to 15 digits is its own.
fn decimal(n: &Number) -> Decimal {
    let (mut digits, mut exponent) = match as_i128(n) {
        Some(integer) => (integer.unsigned_abs(), 0),
        None => {
            let double = n.as_f64().unwrap_or(0.0).abs();
            let text = Number::from_f64(double).map(|n| n.to_string()).unwrap_or_default();
            let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
            let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
            // At most 17 significant digits, and an exponent within about 330 of 0.
            let digits = format!("{whole}{fraction}").parse::<u128>().unwrap_or(0);
            (digits, exponent.parse::<i32>().unwrap_or(0) - fraction.len() as i32)
        }
    };
    while digits != 0 && digits % 10 == 0 {
        digits /= 10;
        exponent += 1;
    }
    Decimal { digits, exponent }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use serde_json::Number;

    use super::multiple_of;

    fn number(text: &str) -> Number {
        serde_json::from_str(text).unwrap()
    }

    /// Every verdict is the exact decimal one, whatever the magnitudes and however the
    /// number is spelled (`1e19` and `10000000000000000000` are one number).
    #[test]
    fn multiple_of_is_exact_in_decimal() {
        let table: &[(&str, &str, bool)] = &[
            ("5.0000000000001", "0.001", false),
            ("0.0010000000001", "0.001", false),
            ("5", "0.001", true),
            ("0.003", "0.001", true),
            ("0.3", "0.1", true),
            ("0.30000000000000004", "0.1", false),
            ("4.5", "1.5", true),
            ("35", "1.5", false),
            ("0.0075", "0.0001", true),
            ("0.00751", "0.0001", false),
            ("1e20", "3", false),
            ("1e19", "3", false),
            ("10000000000000000000", "3", false),
            ("1e19", "5", true),
            ("10000000000000000000", "5", true),
            ("1e2", "4", true),
            ("100.0", "4", true),
            ("1e308", "0.5", true),
            ("1e308", "0.123456789", false),
            ("-1e308", "3", false),
            ("1.7976931348623157e308", "1e-300", true),
            ("12391239123", "1e-8", true),
            ("0", "0.7", true),
            ("-0.0", "0.7", true),
            ("-2.1", "0.7", true),
            ("-9223372036854775808", "2", true),
            ("18446744073709551615", "5", true),
            ("18446744073709551615", "2", false),
            ("5e-324", "5e-324", true),
            ("1e-323", "5e-324", true),
            ("0.001", "5.0000000000001", false),
        ];
        for &(x, d, want) in table {
            assert_eq!(multiple_of(&number(x), &number(d)), want, "{x} multipleOf {d}");
        }
    }
}
