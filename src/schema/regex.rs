//! A regular-expression matcher for the ECMA-262 subset JSON Schema patterns use: literals,
//! `.`, classes and ranges, `\d \w \s \D \W \S \b \B`, escapes (a surrogate pair as one code
//! point), `^ $`, groups, alternation and greedy or lazy `* + ? {m} {m,} {m,n}`.
//!
//! Patterns compile to a Thompson NFA run by a Pike VM: every thread advances in lock step, so
//! matching takes at most (program length × input length) steps whatever the pattern, and
//! `(a*)*b` cannot backtrack catastrophically. A step budget, which the caller shares among all
//! the matches of one validation, bounds even that. Anything outside the subset (lookaround,
//! backreferences, named groups, `\p{..}`, `\u{..}`) is refused at compile time rather than
//! matched approximately. Character classes are `char_class.rs`'s.

use std::fmt;

use crate::schema::char_class::{Class, digit, is_word, space, word};

/// A compiled pattern.
#[derive(Debug, Clone)]
pub struct Regex {
    program: Vec<Inst>,
    classes: Vec<Class>,
}

/// Why a pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegexError(pub String);

impl fmt::Display for RegexError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The match ran out of steps before it could decide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetExhausted;

const MAX_REPEAT: u32 = 1000;
const MAX_PROGRAM: usize = 20_000;

#[derive(Debug, Clone, Copy)]
enum Inst {
    Char(char),
    Any,
    Class(usize),
    Split(usize, usize),
    Jmp(usize),
    Assert(Look),
    Match,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Look {
    Start,
    End,
    WordBoundary,
    NotWordBoundary,
}

#[derive(Debug, Clone)]
enum Node {
    Empty,
    Char(char),
    Any,
    Class(Class),
    Assert(Look),
    Concat(Vec<Node>),
    Alt(Vec<Node>),
    Repeat { node: Box<Node>, min: u32, max: Option<u32> },
}

impl Node {
    /// Whether the node matches only the empty string and compiles to no state at all.
    fn is_empty(&self) -> bool {
        match self {
            Node::Empty => true,
            // `sequence` leaves empty items out of a concatenation.
            Node::Concat(items) => items.is_empty(),
            _ => false,
        }
    }
}

struct Parser<'p> {
    chars: Vec<char>,
    pos: usize,
    pattern: &'p str,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> RegexError {
        RegexError(format!("pattern {:?}: {what} at position {}", self.pattern, self.pos))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, c: char) -> bool {
        let hit = self.peek() == Some(c);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn alternation(&mut self, depth: u32) -> Result<Node, RegexError> {
        if depth > 100 {
            return Err(self.error("groups nested too deeply"));
        }
        let mut branches = vec![self.sequence(depth)?];
        while self.eat('|') {
            branches.push(self.sequence(depth)?);
        }
        Ok(if branches.len() == 1 {
            branches.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alt(branches)
        })
    }

    fn sequence(&mut self, depth: u32) -> Result<Node, RegexError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            let item = self.quantified(atom)?;
            // An empty item changes nothing, and left out it lets `quantified` see an empty
            // group for what it is.
            if !item.is_empty() {
                items.push(item);
            }
        }
        Ok(Node::Concat(items))
    }

    fn atom(&mut self, depth: u32) -> Result<Node, RegexError> {
        let Some(c) = self.peek() else { return Err(self.error("unexpected end")) };
        self.pos += 1;
        Ok(match c {
            '.' => Node::Any,
            '^' => Node::Assert(Look::Start),
            '$' => Node::Assert(Look::End),
            '(' => {
                if self.eat('?') && !self.eat(':') {
                    return Err(self.error("lookaround and named groups are not supported"));
                }
                let inner = self.alternation(depth + 1)?;
                if !self.eat(')') {
                    return Err(self.error("missing )"));
                }
                inner
            }
            '[' => Node::Class(self.class()?),
            '\\' => self.escape(false)?,
            '*' | '+' | '?' => return Err(self.error("nothing to repeat")),
            '{' if self.quantifier_at(self.pos) => return Err(self.error("nothing to repeat")),
            _ => Node::Char(c),
        })
    }

    /// Whether the `{` just before `from` starts a well-formed `{m}`, `{m,}` or `{m,n}`;
    /// otherwise ECMA-262 (Annex B) reads it as a literal brace.
    fn quantifier_at(&self, from: usize) -> bool {
        let rest: String = self.chars[from..].iter().take_while(|&&c| c != '}').collect();
        self.chars.get(from + rest.chars().count()) == Some(&'}') && {
            let mut parts = rest.splitn(2, ',');
            let min_ok = parts
                .next()
                .is_some_and(|m| !m.is_empty() && m.bytes().all(|b| b.is_ascii_digit()));
            min_ok && parts.next().is_none_or(|n| n.bytes().all(|b| b.is_ascii_digit()))
        }
    }

    fn quantified(&mut self, atom: Node) -> Result<Node, RegexError> {
        let (min, max) = match self.peek() {
            Some('{') if self.quantifier_at(self.pos + 1) => self.braces()?,
            Some(c @ ('*' | '+' | '?')) => {
                self.pos += 1;
                match c {
                    '*' => (0, None),
                    '+' => (1, None),
                    _ => (0, Some(1)),
                }
            }
            _ => return Ok(atom),
        };
        if matches!(atom, Node::Assert(_)) {
            return Err(self.error("an assertion cannot be repeated"));
        }
        self.eat('?'); // lazy: the same language, and a Pike VM only asks whether a match exists
        if matches!(self.peek(), Some('*' | '+' | '?'))
            || (self.peek() == Some('{') && self.quantifier_at(self.pos + 1))
        {
            return Err(self.error("nothing to repeat"));
        }
        // Any number of copies of the empty string, or no copy of anything, is the empty
        // string. Kept as one empty node: copies of it would emit no state, so the program's
        // size cap would never stop their work (`(?:(?:(?:){1000}){1000}){1000}` nested on).
        if atom.is_empty() || max == Some(0) {
            return Ok(Node::Empty);
        }
        Ok(Node::Repeat { node: Box::new(atom), min, max })
    }

    fn braces(&mut self) -> Result<(u32, Option<u32>), RegexError> {
        self.pos += 1; // '{'
        let number = |p: &mut Self| -> Result<Option<u32>, RegexError> {
            let start = p.pos;
            while p.peek().is_some_and(|c| c.is_ascii_digit()) {
                p.pos += 1;
            }
            if start == p.pos {
                return Ok(None);
            }
            let text: String = p.chars[start..p.pos].iter().collect();
            match text.parse::<u32>() {
                Ok(n) if n <= MAX_REPEAT => Ok(Some(n)),
                _ => Err(p.error(&format!("repetition count above {MAX_REPEAT}"))),
            }
        };
        let min = number(self)?.unwrap_or(0);
        let max = if self.eat(',') { number(self)? } else { Some(min) };
        self.eat('}');
        if max.is_some_and(|max| max < min) {
            return Err(self.error("repetition range out of order"));
        }
        Ok((min, max))
    }

    fn class(&mut self) -> Result<Class, RegexError> {
        let negated = self.eat('^');
        let mut ranges = Vec::new();
        loop {
            let Some(c) = self.peek() else { return Err(self.error("missing ]")) };
            self.pos += 1;
            let lo = match c {
                ']' => return Ok(Class::new(ranges, negated)),
                '\\' => match self.escape(true)? {
                    Node::Char(c) => c,
                    Node::Class(class) => {
                        ranges.extend(class.ranges);
                        continue;
                    }
                    _ => return Err(self.error("unsupported escape in a class")),
                },
                c => c,
            };
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|&c| c != ']') {
                self.pos += 1;
                let hi = match self.peek() {
                    Some('\\') => {
                        self.pos += 1;
                        match self.escape(true)? {
                            Node::Char(c) => c,
                            _ => return Err(self.error("a class escape cannot end a range")),
                        }
                    }
                    Some(c) => {
                        self.pos += 1;
                        c
                    }
                    None => return Err(self.error("missing ]")),
                };
                if hi < lo {
                    return Err(self.error("class range out of order"));
                }
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
    }

    fn escape(&mut self, in_class: bool) -> Result<Node, RegexError> {
        let Some(c) = self.peek() else { return Err(self.error("pattern ends with \\")) };
        self.pos += 1;
        let class = |ranges, negated| Ok(Node::Class(Class::new(ranges, negated)));
        match c {
            'd' => class(digit(), false),
            'D' => class(digit(), true),
            'w' => class(word(), false),
            'W' => class(word(), true),
            's' => class(space(), false),
            'S' => class(space(), true),
            'b' if in_class => Ok(Node::Char('\u{8}')),
            'b' => Ok(Node::Assert(Look::WordBoundary)),
            'B' if !in_class => Ok(Node::Assert(Look::NotWordBoundary)),
            't' => Ok(Node::Char('\t')),
            'n' => Ok(Node::Char('\n')),
            'r' => Ok(Node::Char('\r')),
            'f' => Ok(Node::Char('\u{c}')),
            'v' => Ok(Node::Char('\u{b}')),
            '0' if !self.peek().is_some_and(|c| c.is_ascii_digit()) => Ok(Node::Char('\0')),
            'x' => self.hex(2).map(|value| Node::Char(char::from(value as u8))),
            'u' => self.unicode().map(Node::Char),
            c if c.is_ascii_alphanumeric() => Err(self.error(&format!(
                "\\{c} is not supported (backreferences, \\p and \\k are outside the subset)"
            ))),
            c => Ok(Node::Char(c)),
        }
    }

    /// The value of the `digits` hex digits at the cursor, which it moves past them.
    fn hex(&mut self, digits: usize) -> Result<u32, RegexError> {
        let text: String = self.chars.iter().skip(self.pos).take(digits).collect();
        // Hex digits only: `from_str_radix` alone would also take a sign (`\x+1`).
        let hex = text.len() == digits && text.chars().all(|c| c.is_ascii_hexdigit());
        let value = hex.then(|| u32::from_str_radix(&text, 16).ok()).flatten();
        let value = value.ok_or_else(|| self.error("invalid hex escape"))?;
        self.pos += digits;
        Ok(value)
    }

    /// `\uHHHH`. A high surrogate followed by `\u` and a low one is the pair's one code point,
    /// as ECMA-262 reads it with the `u` flag (ajv's). A lone surrogate cannot occur in a Rust
    /// string, so it could never match anything: refused.
    fn unicode(&mut self) -> Result<char, RegexError> {
        if self.peek() == Some('{') {
            return Err(self.error(
                "\\u{...} is not supported (write \\uHHHH, or a surrogate pair past U+FFFF)",
            ));
        }
        let value = self.hex(4)?;
        let low_follows = self.chars.get(self.pos..self.pos + 2) == Some(&['\\', 'u'][..]);
        if (0xD800..0xDC00).contains(&value) && low_follows {
            let after_high = self.pos;
            self.pos += 2;
            if let Ok(low) = self.hex(4)
                && (0xDC00..0xE000).contains(&low)
                && let Some(c) = char::from_u32(0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00))
            {
                return Ok(c);
            }
            self.pos = after_high;
        }
        char::from_u32(value).ok_or_else(|| {
            self.error(
                "lone surrogate escape (a \\uD800-\\uDBFF must be followed by a \\uDC00-\\uDFFF)",
            )
        })
    }
}

struct Compiler {
    program: Vec<Inst>,
    classes: Vec<Class>,
}

impl Compiler {
    fn emit(&mut self, inst: Inst) -> Result<usize, RegexError> {
        if self.program.len() >= MAX_PROGRAM {
            return Err(RegexError(format!("pattern too large (more than {MAX_PROGRAM} states)")));
        }
        self.program.push(inst);
        Ok(self.program.len() - 1)
    }

    fn node(&mut self, node: &Node) -> Result<(), RegexError> {
        match node {
            Node::Empty => {}
            Node::Char(c) => {
                self.emit(Inst::Char(*c))?;
            }
            Node::Any => {
                self.emit(Inst::Any)?;
            }
            Node::Class(class) => {
                self.classes.push(class.clone());
                self.emit(Inst::Class(self.classes.len() - 1))?;
            }
            Node::Assert(look) => {
                self.emit(Inst::Assert(*look))?;
            }
            Node::Concat(items) => {
                for item in items {
                    self.node(item)?;
                }
            }
            Node::Alt(branches) => {
                let mut jumps = Vec::new();
                for (i, branch) in branches.iter().enumerate() {
                    if i + 1 < branches.len() {
                        let split = self.emit(Inst::Split(0, 0))?;
                        self.node(branch)?;
                        jumps.push(self.emit(Inst::Jmp(0))?);
                        let next = self.program.len();
                        self.program[split] = Inst::Split(split + 1, next);
                    } else {
                        self.node(branch)?;
                    }
                }
                let end = self.program.len();
                for jump in jumps {
                    self.program[jump] = Inst::Jmp(end);
                }
            }
            Node::Repeat { node, min, max } => {
                for _ in 0..*min {
                    self.node(node)?;
                }
                match max {
                    None => {
                        let split = self.emit(Inst::Split(0, 0))?;
                        self.node(node)?;
                        self.emit(Inst::Jmp(split))?;
                        let end = self.program.len();
                        self.program[split] = Inst::Split(split + 1, end);
                    }
                    Some(max) => {
                        let mut splits = Vec::new();
                        for _ in *min..*max {
                            splits.push(self.emit(Inst::Split(0, 0))?);
                            self.node(node)?;
                        }
                        let end = self.program.len();
                        for split in splits {
                            self.program[split] = Inst::Split(split + 1, end);
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

impl Regex {
    /// Compiles `pattern`, refusing anything outside the supported subset.
    pub fn new(pattern: &str) -> Result<Regex, RegexError> {
        let mut parser = Parser { chars: pattern.chars().collect(), pos: 0, pattern };
        let ast = parser.alternation(0)?;
        if parser.pos < parser.chars.len() {
            return Err(parser.error("unmatched )"));
        }
        let mut compiler = Compiler { program: Vec::new(), classes: Vec::new() };
        compiler.node(&ast)?;
        compiler.emit(Inst::Match)?;
        Ok(Regex { program: compiler.program, classes: compiler.classes })
    }

    /// Whether the pattern matches anywhere in `text` (ECMA-262 patterns are not anchored),
    /// taking the steps it spends from `budget`: one for each state of the program (setting
    /// up its thread lists), and one for each thread a position adds. Every other piece of
    /// work is bounded by those, so the steps bound the time.
    pub fn is_match(&self, text: &str, budget: &mut u64) -> Result<bool, BudgetExhausted> {
        let mut steps = Steps { left: *budget };
        let result = steps.take_many(self.program.len()).and_then(|()| self.run(text, &mut steps));
        *budget = steps.left;
        result
    }

    fn run(&self, text: &str, steps: &mut Steps) -> Result<bool, BudgetExhausted> {
        let n = self.program.len();
        let mut current = Threads::new(n);
        let mut next = Threads::new(n);
        // One stack for every `add`, rather than one allocated for each.
        let mut stack = Vec::new();
        let mut prev: Option<char> = None;
        let mut chars = text.chars().peekable();
        loop {
            let here = chars.peek().copied();
            let at = Position { prev, next: here, start: prev.is_none(), end: here.is_none() };
            // A thread starts at every position: the search is unanchored.
            if self.add(&mut current, 0, at, steps, &mut stack)? {
                return Ok(true);
            }
            let Some(c) = chars.next() else { return Ok(false) };
            let after = Position {
                prev: Some(c),
                next: chars.peek().copied(),
                start: false,
                end: chars.peek().is_none(),
            };
            next.clear();
            for i in 0..current.list.len() {
                let pc = current.list[i];
                let advance = match self.program[pc] {
                    Inst::Char(want) => want == c,
                    Inst::Any => !matches!(c, '\n' | '\r' | '\u{2028}' | '\u{2029}'),
                    Inst::Class(k) => self.classes[k].contains(c),
                    _ => false,
                };
                if advance && self.add(&mut next, pc + 1, after, steps, &mut stack)? {
                    return Ok(true);
                }
            }
            std::mem::swap(&mut current, &mut next);
            prev = Some(c);
        }
    }

    /// Adds the thread at `pc` and everything reachable from it without reading a character.
    /// Returns whether a match state was reached.
    fn add(
        &self,
        threads: &mut Threads,
        pc: usize,
        at: Position,
        steps: &mut Steps,
        stack: &mut Vec<usize>,
    ) -> Result<bool, BudgetExhausted> {
        stack.clear();
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            if !threads.insert(pc) {
                continue;
            }
            steps.take()?;
            match self.program[pc] {
                Inst::Match => return Ok(true),
                Inst::Jmp(to) => stack.push(to),
                Inst::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Inst::Assert(look) => {
                    let holds = match look {
                        Look::Start => at.start,
                        Look::End => at.end,
                        Look::WordBoundary => is_word(at.prev) != is_word(at.next),
                        Look::NotWordBoundary => is_word(at.prev) == is_word(at.next),
                    };
                    if holds {
                        stack.push(pc + 1);
                    }
                }
                Inst::Char(_) | Inst::Any | Inst::Class(_) => {}
            }
        }
        Ok(false)
    }
}

/// What is left of a match's budget.
struct Steps {
    left: u64,
}

impl Steps {
    #[inline]
    fn take(&mut self) -> Result<(), BudgetExhausted> {
        self.take_many(1)
    }

    /// Takes `n` steps, or all there are left when they are fewer.
    #[inline]
    fn take_many(&mut self, n: usize) -> Result<(), BudgetExhausted> {
        match self.left.checked_sub(n as u64) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => {
                self.left = 0;
                Err(BudgetExhausted)
            }
        }
    }
}

#[derive(Clone, Copy)]
struct Position {
    prev: Option<char>,
    next: Option<char>,
    start: bool,
    end: bool,
}

/// A sparse set of program counters: O(1) insert, membership and clear.
struct Threads {
    list: Vec<usize>,
    seen: Vec<bool>,
}

impl Threads {
    fn new(n: usize) -> Threads {
        Threads { list: Vec::with_capacity(n), seen: vec![false; n] }
    }

    fn insert(&mut self, pc: usize) -> bool {
        if self.seen[pc] {
            return false;
        }
        self.seen[pc] = true;
        self.list.push(pc);
        true
    }

    fn clear(&mut self) {
        for &pc in &self.list {
            self.seen[pc] = false;
        }
        self.list.clear();
    }
}

#[cfg(test)]
#[path = "regex_tests.rs"]
mod tests;
