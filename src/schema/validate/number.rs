//! The keywords of numbers: `minimum`, `maximum`, the exclusive bounds and `multipleOf`,
//! exact for integers (up to 128 bits) and in floating point otherwise.

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

fn multiple_of(n: &Number, divisor: &Number) -> bool {
    if let (Some(x), Some(d)) = (as_i128(n), as_i128(divisor)) {
        return d != 0 && x % d == 0;
    }
    match (n.as_f64(), divisor.as_f64()) {
        (Some(x), Some(d)) => {
            let quotient = x / d;
            quotient.is_finite() && (quotient - quotient.round()).abs() < 1e-9
        }
        _ => false,
    }
}
