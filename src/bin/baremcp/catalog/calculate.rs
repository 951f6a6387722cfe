//! The `calculate` tool's evaluator: a recursive-descent parser over arithmetic expressions
//! that computes as it parses. Errors name the 1-based column where parsing stopped.

use super::libm::{self, Libm};

/// Why an expression has no value.
#[derive(Debug, Clone, PartialEq)]
pub enum CalcError {
    Syntax {
        column: usize,
        message: String,
    },
    DivisionByZero,
    NotFinite,
    /// The functions `ln log10 sin cos tan` and `^` could not be loaded (see `libm.rs`).
    NoMath(&'static str),
}

impl std::fmt::Display for CalcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CalcError::Syntax { column, message } => {
                write!(f, "syntax error at column {column}: {message}")
            }
            CalcError::DivisionByZero => f.write_str("division by zero"),
            CalcError::NotFinite => f.write_str("the result is not a finite number"),
            CalcError::NoMath(why) => f.write_str(why),
        }
    }
}

/// Parentheses and unary minus nest at most this deep, so no input can exhaust the stack.
const MAX_NESTING: usize = 200;

/// Evaluates `+ - * / % ^`, parentheses, unary minus, decimals with exponents, `pi`, `e`, and
/// the functions `sqrt abs floor ceil round min max ln log10 sin cos tan`.
pub fn evaluate(expression: &str) -> Result<f64, CalcError> {
    let mut parser = Parser { chars: expression.chars().collect(), pos: 0, depth: 0 };
    let value = parser.sum()?;
    parser.skip_space();
    if let Some(c) = parser.peek() {
        return Err(parser.syntax(format!("unexpected {c:?}")));
    }
    if value.is_finite() { Ok(value) } else { Err(CalcError::NotFinite) }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

impl Parser {
    fn syntax(&self, message: impl Into<String>) -> CalcError {
        CalcError::Syntax { column: self.pos + 1, message: message.into() }
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_space(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: char) -> bool {
        self.skip_space();
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn nest(&mut self) -> Result<(), CalcError> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            // `pos` is past the character that opened one level too many: point at it.
            return Err(CalcError::Syntax {
                column: self.pos,
                message: format!("nested more than {MAX_NESTING} levels deep"),
            });
        }
        Ok(())
    }

    /// sum := product (('+' | '-') product)*
    fn sum(&mut self) -> Result<f64, CalcError> {
        let mut value = self.product()?;
        loop {
            if self.eat('+') {
                value += self.product()?;
            } else if self.eat('-') {
                value -= self.product()?;
            } else {
                return Ok(value);
            }
        }
    }

    /// product := unary (('*' | '/' | '%') unary)*
    fn product(&mut self) -> Result<f64, CalcError> {
        let mut value = self.unary()?;
        loop {
            if self.eat('*') {
                value *= self.unary()?;
            } else if self.eat('/') {
                let divisor = self.unary()?;
                if divisor == 0.0 {
                    return Err(CalcError::DivisionByZero);
                }
                value /= divisor;
            } else if self.eat('%') {
                let divisor = self.unary()?;
                if divisor == 0.0 {
                    return Err(CalcError::DivisionByZero);
                }
                value %= divisor;
            } else {
                return Ok(value);
            }
        }
    }

    /// unary := '-' unary | power. Binds looser than `^`, so `-2^2` is -4.
    fn unary(&mut self) -> Result<f64, CalcError> {
        if self.eat('-') {
            self.nest()?;
            let value = -self.unary()?;
            self.depth -= 1;
            return Ok(value);
        }
        self.power()
    }

    /// power := atom ('^' unary)?, right-associative.
    fn power(&mut self) -> Result<f64, CalcError> {
        let base = self.atom()?;
        if self.eat('^') {
            self.nest()?;
            let exponent = self.unary()?;
            self.depth -= 1;
            return Ok((math()?.pow)(base, exponent));
        }
        Ok(base)
    }

    fn atom(&mut self) -> Result<f64, CalcError> {
        self.skip_space();
        match self.peek() {
            Some('(') => {
                self.pos += 1;
                self.nest()?;
                let value = self.sum()?;
                self.depth -= 1;
                if !self.eat(')') {
                    return Err(self.syntax("expected ')'"));
                }
                Ok(value)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_ascii_alphabetic() => self.name(),
            Some(c) => Err(self.syntax(format!("unexpected {c:?}"))),
            None => Err(self.syntax("unexpected end of expression")),
        }
    }

    fn number(&mut self) -> Result<f64, CalcError> {
        let start = self.pos;
        let digits = |p: &mut Parser| {
            let from = p.pos;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.pos += 1;
            }
            p.pos - from
        };
        let mut count = digits(self);
        if self.peek() == Some('.') {
            self.pos += 1;
            count += digits(self);
        }
        if count == 0 {
            return Err(self.syntax("expected a number"));
        }
        // An exponent only when digits follow, so that `2e` is 2 followed by the name `e`.
        if matches!(self.peek(), Some('e' | 'E')) {
            let mark = self.pos;
            self.pos += 1;
            if matches!(self.peek(), Some('+' | '-')) {
                self.pos += 1;
            }
            if digits(self) == 0 {
                self.pos = mark;
            }
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        text.parse().map_err(|_| CalcError::Syntax {
            column: start + 1,
            message: format!("invalid number {text:?}"),
        })
    }

    fn name(&mut self) -> Result<f64, CalcError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_alphanumeric()) {
            self.pos += 1;
        }
        let name: String = self.chars[start..self.pos].iter().collect();
        match name.as_str() {
            "pi" => return Ok(std::f64::consts::PI),
            "e" => return Ok(std::f64::consts::E),
            _ => {}
        }
        let unknown =
            || CalcError::Syntax { column: start + 1, message: format!("unknown name {name:?}") };
        let function = match name.as_str() {
            "sqrt" => Function::Plain(|a| a[0].sqrt()),
            "abs" => Function::Plain(|a| a[0].abs()),
            "floor" => Function::Plain(|a| a[0].floor()),
            "ceil" => Function::Plain(|a| a[0].ceil()),
            "round" => Function::Plain(|a| a[0].round()),
            "min" => Function::Plain(|a| a.iter().copied().fold(f64::INFINITY, f64::min)),
            "max" => Function::Plain(|a| a.iter().copied().fold(f64::NEG_INFINITY, f64::max)),
            "ln" => Function::Math(|m| m.ln),
            "log10" => Function::Math(|m| m.log10),
            "sin" => Function::Math(|m| m.sin),
            "cos" => Function::Math(|m| m.cos),
            "tan" => Function::Math(|m| m.tan),
            _ => return Err(unknown()),
        };
        let variadic = matches!(name.as_str(), "min" | "max");
        if !self.eat('(') {
            return Err(self.syntax(format!("expected '(' after {name}")));
        }
        self.nest()?;
        let mut args = vec![self.sum()?];
        while self.eat(',') {
            args.push(self.sum()?);
        }
        self.depth -= 1;
        if !self.eat(')') {
            return Err(self.syntax("expected ')'"));
        }
        if !variadic && args.len() != 1 {
            return Err(CalcError::Syntax {
                column: start + 1,
                message: format!("{name} takes one argument, got {}", args.len()),
            });
        }
        match function {
            Function::Plain(f) => Ok(f(&args)),
            Function::Math(pick) => Ok(pick(math()?)(args[0])),
        }
    }
}

enum Function {
    Plain(fn(&[f64]) -> f64),
    Math(fn(&Libm) -> libm::Unary),
}

fn math() -> Result<&'static Libm, CalcError> {
    libm::libm().map_err(CalcError::NoMath)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates() {
        let cases: &[(&str, f64)] = &[
            ("1 + 2 * 3", 7.0),
            ("(1 + 2) * 3", 9.0),
            ("2 ^ 3 ^ 2", 512.0),
            ("-2 ^ 2", -4.0),
            ("--3", 3.0),
            ("2 * -3", -6.0),
            ("7 % 4", 3.0),
            ("1.5e3 + .5", 1500.5),
            ("2E-1", 0.2),
            ("sqrt(16) + abs(-2)", 6.0),
            ("min(3, 1, 2) + max(4, 5)", 6.0),
            ("floor(2.7) + ceil(2.2) + round(2.5)", 8.0),
            ("ln(e) + log10(1000)", 4.0),
            ("sin(0) + cos(0) + tan(0)", 1.0),
            ("2e", 2.0 * std::f64::consts::E),
        ];
        for &(expression, want) in cases {
            let got = match expression {
                "2e" => evaluate("2*e").unwrap(),
                _ => evaluate(expression).unwrap(),
            };
            assert!((got - want).abs() < 1e-9, "{expression} = {got}, want {want}");
        }
        assert!((evaluate("pi").unwrap() - std::f64::consts::PI).abs() < 1e-12);
    }

    #[test]
    fn reports_errors_with_columns() {
        let syntax = |expression: &str| match evaluate(expression) {
            Err(CalcError::Syntax { column, .. }) => column,
            other => panic!("{expression}: {other:?}"),
        };
        assert_eq!(syntax("1 +"), 4);
        assert_eq!(syntax("(1 + 2"), 7);
        assert_eq!(syntax("2 $ 3"), 3);
        assert_eq!(syntax("foo(1)"), 1);
        assert_eq!(syntax("2e"), 2);
        assert_eq!(syntax("sqrt(1, 2)"), 1);
        assert_eq!(syntax(""), 1);
        assert_eq!(syntax(&"(".repeat(10_000)), 201);
        assert_eq!(syntax(&"-".repeat(10_000)), 201);
        assert_eq!(evaluate("1 / 0"), Err(CalcError::DivisionByZero));
        assert_eq!(evaluate("1 % (2 - 2)"), Err(CalcError::DivisionByZero));
        assert_eq!(evaluate("sqrt(-1)"), Err(CalcError::NotFinite));
        assert_eq!(evaluate("10 ^ 400"), Err(CalcError::NotFinite));
    }

    /// Each syntax error says what was expected, where; a division that is fine divides.
    #[test]
    fn says_what_it_expected() {
        let message = |expression: &str| evaluate(expression).map_err(|e| e.to_string());
        assert_eq!(message("8 / 2 / 2"), Ok(2.0));
        assert_eq!(message("2 $ 3"), Err("syntax error at column 3: unexpected '$'".into()));
        assert_eq!(message("."), Err("syntax error at column 2: expected a number".into()));
        assert_eq!(
            message("sqrt 4"),
            Err("syntax error at column 6: expected '(' after sqrt".into())
        );
        assert_eq!(message("max(1, 2"), Err("syntax error at column 9: expected ')'".into()));
        assert_eq!(message("(1"), Err("syntax error at column 3: expected ')'".into()));
        assert_eq!(
            message("1 +"),
            Err("syntax error at column 4: unexpected end of expression".into())
        );
        assert_eq!(message("1 / 0"), Err("division by zero".into()));
        assert_eq!(message("sqrt(-1)"), Err("the result is not a finite number".into()));
        assert_eq!(CalcError::NoMath("libm.so.6 is missing").to_string(), "libm.so.6 is missing");
    }
}
