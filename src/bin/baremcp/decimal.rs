//! A JSON number's exact value, as written, for replay to compare numbers by: no float, no
//! bound on the digits or the exponent.

/// A JSON number's exact value: its sign, its significant digits and the power of ten they
/// are multiplied by, so `1`, `1.0` and `10e-1` are one value, and so are `0` and `-0`. The
/// power is a sign and decimal digits, added up as text: an exponent of any length is exact.
pub fn decimal(text: &str) -> (bool, String, (bool, String)) {
    let (negative, text) = text.strip_prefix('-').map_or((false, text), |t| (true, t));
    let (mantissa, exponent) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = format!("{whole}{fraction}");
    let digits = digits.trim_start_matches('0');
    let significant = digits.trim_end_matches('0');
    if significant.is_empty() {
        return (false, String::new(), (false, String::new()));
    }
    let exponent = exponent.strip_prefix('+').unwrap_or(exponent);
    let exponent = exponent.strip_prefix('-').map_or((false, exponent), |e| (true, e));
    let shift = (digits.len() - significant.len()) as i64 - fraction.len() as i64;
    let shift = (shift < 0, shift.unsigned_abs().to_string());
    (negative, significant.to_string(), add(exponent, (shift.0, &shift.1)))
}

/// `a + b` for integers written as a sign and decimal digits of any length; the sum has no
/// leading zeros, and zero has no sign.
fn add((a_negative, a): (bool, &str), (b_negative, b): (bool, &str)) -> (bool, String) {
    let (a, b) = (a.trim_start_matches('0'), b.trim_start_matches('0'));
    // The larger magnitude goes first: it gives the sign, and a difference never borrows
    // past its first digit.
    let ((negative, big), small) =
        if (a.len(), a) < (b.len(), b) { ((b_negative, b), a) } else { ((a_negative, a), b) };
    let sign = if a_negative == b_negative { 1 } else { -1 };
    let (mut small, mut carry) = (small.bytes().rev(), 0);
    let mut sum: Vec<u8> = (big.bytes().rev())
        .map(|digit| {
            let other = small.next().map_or(0, |d| d - b'0') as i8;
            let value = (digit - b'0') as i8 + carry + sign * other;
            carry = value.div_euclid(10);
            b'0' + value.rem_euclid(10) as u8
        })
        .collect();
    if carry > 0 {
        sum.push(b'1');
    }
    while sum.last() == Some(&b'0') {
        sum.pop();
    }
    sum.reverse();
    (negative && !sum.is_empty(), String::from_utf8(sum).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_of_any_length() {
        let sum = |a: (bool, &str), b: (bool, &str)| add(a, b);
        assert_eq!(sum((false, "999"), (false, "01")), (false, "1000".into()));
        assert_eq!(sum((false, "1000"), (true, "1")), (false, "999".into()));
        assert_eq!(sum((false, "3"), (true, "10")), (true, "7".into()));
        assert_eq!(sum((true, "5"), (false, "5")), (false, String::new()));
    }

    #[test]
    fn one_value_however_written() {
        assert_eq!(decimal("1"), decimal("1.0"));
        assert_eq!(decimal("1"), decimal("10e-1"));
        assert_eq!(decimal("0"), decimal("-0.0e5"));
        assert_ne!(decimal("1"), decimal("-1"));
        assert_ne!(decimal("1e-99999999999999999999"), decimal("1e-99999999999999999998"));
    }
}
