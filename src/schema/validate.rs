//! Checking an instance against a compiled schema: the walk over subschemas, errors with the
//! instance's JSON Pointer, and the depth and step budgets. The keywords of each instance type
//! live in the submodules; the ones every value has (`$ref`, `type`, `enum`, `const`) are here.

mod applicators;
mod array;
mod equal;
mod messages;
mod number;
mod object;
mod string;

use serde_json::Value;

use super::node::{Keywords, Node, types};
use super::regex::{BudgetExhausted, Regex};
use super::{Errors, Schema, ValidationError, escape_token};
use equal::equal;
pub use equal::json_eq;
use messages::{describe, either, list, short};

/// Subschema applications deeper than this end validation (a `$ref` cycle, or a hostile
/// instance nested as deep as the parser allows).
const MAX_DEPTH: usize = 256;
/// Units of work one validation may do: a keyword evaluation is one, and so is each value
/// `uniqueItems` looks at or `enum` and `const` compare (and 64 bytes of two strings they
/// compare), and every [`REGEX_STEPS_PER_STEP`] steps of the pattern matcher.
/// One budget for all of it, so that no instance (many long strings against a pattern, each
/// match within any bound of its own) makes one validation take long: a fraction of a second.
const MAX_STEPS: u64 = 2_000_000;
/// Pattern-matcher steps (a thread added at one position) per step of [`MAX_STEPS`]. A matcher
/// step costs a few nanoseconds (all 16 million about 0.1 s in a release build), and 8 leaves
/// one match room for a 500 000-character string against a 30-state pattern, which a budget
/// of 10 million steps per match allowed before.
const REGEX_STEPS_PER_STEP: u64 = 8;

pub(super) fn validate(schema: &Schema, instance: &Value) -> Result<(), Errors> {
    let mut cx = Cx::new(true);
    let ok = Walk { schema }.eval(0, instance, &Path::ROOT, &mut cx);
    if let Some(stopped) = cx.stopped.take() {
        cx.errors.insert(
            0,
            ValidationError {
                instance_path: "/".into(),
                keyword_path: String::new(),
                message: stopped,
            },
        );
        cx.total += 1;
    }
    if ok && cx.total == 0 {
        return Ok(());
    }
    cx.errors.truncate(Errors::CAP);
    Err(Errors { errors: cx.errors, total: cx.total.max(1) })
}

pub(super) fn is_valid(schema: &Schema, instance: &Value) -> bool {
    let mut cx = Cx::new(false);
    Walk { schema }.eval(0, instance, &Path::ROOT, &mut cx) && cx.stopped.is_none()
}

#[derive(Clone, Copy)]
enum Seg<'v> {
    Key(&'v str),
    Index(usize),
}

/// Where the walk is in the instance: a list linked through the stack, so descending into a
/// member costs nothing until an error needs the pointer.
#[derive(Clone, Copy)]
struct Path<'p, 'v> {
    parent: Option<&'p Path<'p, 'v>>,
    seg: Option<Seg<'v>>,
}

impl<'p, 'v> Path<'p, 'v> {
    const ROOT: Path<'static, 'static> = Path { parent: None, seg: None };

    fn child(&'p self, seg: Seg<'v>) -> Path<'p, 'v> {
        Path { parent: Some(self), seg: Some(seg) }
    }
}

/// The JSON Pointer of `path` (`/` for the root).
fn pointer(path: &Path) -> String {
    let mut segs = Vec::new();
    let mut at = Some(path);
    while let Some(p) = at {
        segs.extend(p.seg);
        at = p.parent;
    }
    if segs.is_empty() {
        return "/".into();
    }
    let mut out = String::new();
    for seg in segs.iter().rev() {
        out.push('/');
        match seg {
            Seg::Key(key) => out.push_str(&escape_token(key)),
            Seg::Index(i) => out.push_str(&i.to_string()),
        }
    }
    out
}

struct Cx {
    /// Collecting every error, or only asking "valid?" and stopping at the first failure.
    collect: bool,
    errors: Vec<ValidationError>,
    total: usize,
    steps: u64,
    depth: usize,
    stopped: Option<String>,
}

impl Cx {
    fn new(collect: bool) -> Cx {
        Cx { collect, errors: Vec::new(), total: 0, steps: 0, depth: 0, stopped: None }
    }

    /// Counts an error, and keeps it while fewer than [`Errors::CAP`] are kept: `texts` (its
    /// keyword path and message) is called only then, so that the errors past the cap (as
    /// many as an instance has members) cost no text, however long a message would be.
    fn error(&mut self, path: &Path, texts: impl FnOnce() -> (String, String)) {
        // Once stopped, subschemas fail unchecked: what their parents would conclude from
        // that (a string that "does not match", an `anyOf` none of whose branches holds) is
        // not known, and is not said.
        if self.stopped.is_some() {
            return;
        }
        self.total += 1;
        if self.keeps() {
            let (keyword_path, message) = texts();
            self.errors.push(ValidationError {
                instance_path: pointer(path),
                keyword_path,
                message,
            });
        }
    }

    /// Whether the next error would be kept, so that its message is worth working out.
    fn keeps(&self) -> bool {
        self.stopped.is_none() && self.errors.len() < Errors::CAP
    }

    fn stop(&mut self, why: String) {
        self.stopped.get_or_insert(why);
    }

    /// Spends `units` of the step budget; false (and validation stopped) once it is gone.
    #[inline]
    fn spend(&mut self, units: u64) -> bool {
        self.steps += units;
        if self.steps > MAX_STEPS {
            self.stop(format!("validation stopped: more than {MAX_STEPS} steps"));
            return false;
        }
        true
    }
}

/// A failed check when only validity is asked: the answer is known, and `?` carries it out
/// to [`Walk::eval`]. When every error is collected, checks note their failure and go on.
struct Invalid;

type Flow = Result<(), Invalid>;

/// One schema object being applied to one value: its keywords, where the value is, and
/// whether every keyword checked so far held.
struct Frame<'a, 'p, 'v> {
    k: &'a Keywords,
    path: &'a Path<'p, 'v>,
    ok: bool,
}

struct Walk<'s> {
    schema: &'s Schema,
}

impl Walk<'_> {
    /// Whether `inst` satisfies node `node`; in collect mode, records why not.
    fn eval<'v>(&self, node: usize, inst: &'v Value, path: &Path<'_, 'v>, cx: &mut Cx) -> bool {
        if cx.stopped.is_some() || !cx.spend(1) {
            return false;
        }
        if cx.depth >= MAX_DEPTH {
            cx.stop(format!("validation stopped: schemas applied more than {MAX_DEPTH} levels deep (a $ref cycle?)"));
            return false;
        }
        cx.depth += 1;
        let ok = match &self.schema.nodes[node] {
            Node::Bool(true) => true,
            Node::Bool(false) => {
                if cx.collect {
                    cx.error(path, || (self.node_path(node), "no value is allowed here".into()));
                }
                false
            }
            Node::Keywords(k) => {
                let mut frame = Frame { k, path, ok: true };
                self.keywords(&mut frame, inst, cx).is_ok() && frame.ok
            }
        };
        cx.depth -= 1;
        ok
    }

    /// Every keyword of `frame`'s schema object that applies to `inst`.
    fn keywords<'v>(&self, frame: &mut Frame<'_, '_, 'v>, inst: &'v Value, cx: &mut Cx) -> Flow {
        let k = frame.k;
        if let Some(target) = k.reference {
            self.apply(frame, target, inst, frame.path, cx)?;
        }
        if k.types != 0 && !type_matches(k.types, inst) {
            self.fail(frame, cx, "type", || {
                format!("expected {}, got {}", either(&k.type_names), describe(inst))
            })?;
        }
        if let Some(allowed) = &k.enumeration
            && !self.equals_one(allowed, inst, cx)?
        {
            self.fail(frame, cx, "enum", || {
                format!("{} is not one of {}", short(inst), list(allowed))
            })?;
        }
        if let Some(constant) = &k.constant
            && !self.equals_one(std::slice::from_ref(constant), inst, cx)?
        {
            self.fail(frame, cx, "const", || {
                format!("must be {}, got {}", short(constant), short(inst))
            })?;
        }
        match inst {
            Value::Object(object) => self.object(frame, object, inst, cx)?,
            Value::Array(items) => self.array(frame, items, cx)?,
            Value::String(text) => self.string(frame, text, inst, cx)?,
            Value::Number(n) => self.number(frame, n, cx)?,
            Value::Null | Value::Bool(_) => {}
        }
        // Most schemas have no applicator: one test skips them all.
        if k.applicators {
            self.applicators(frame, inst, cx)?;
        }
        Ok(())
    }

    /// Notes that `keyword` failed: records `message` (built only when it is recorded) and
    /// goes on when collecting, else ends the check.
    #[inline]
    fn fail(
        &self,
        frame: &mut Frame,
        cx: &mut Cx,
        keyword: &str,
        message: impl FnOnce() -> String,
    ) -> Flow {
        frame.ok = false;
        if !cx.collect {
            return Err(Invalid);
        }
        let mut message = Some(message);
        let mut text = || message.take().map_or_else(String::new, |message| message());
        record(cx, frame.path, &frame.k.path, keyword, &mut text);
        Ok(())
    }

    /// Applies subschema `node` to `value` (at `path`): its errors are its own, and its
    /// failure is `frame`'s.
    #[inline]
    fn apply<'v>(
        &self,
        frame: &mut Frame,
        node: usize,
        value: &'v Value,
        path: &Path<'_, 'v>,
        cx: &mut Cx,
    ) -> Flow {
        if self.eval(node, value, path, cx) {
            return Ok(());
        }
        frame.ok = false;
        if cx.collect { Ok(()) } else { Err(Invalid) }
    }

    fn node_path(&self, node: usize) -> String {
        match &self.schema.nodes[node] {
            Node::Keywords(k) => k.path.clone(),
            Node::Bool(_) => String::new(),
        }
    }

    /// Runs `f` without recording errors, for keywords that only need a yes or no.
    fn probe(&self, cx: &mut Cx, f: impl FnOnce(&mut Cx) -> bool) -> bool {
        let collect = std::mem::replace(&mut cx.collect, false);
        let ok = f(cx);
        cx.collect = collect;
        ok
    }

    /// Runs `f` collecting its errors apart from the main list.
    fn collect_apart(&self, cx: &mut Cx, f: impl FnOnce(&mut Cx) -> bool) -> Vec<ValidationError> {
        let saved_errors = std::mem::take(&mut cx.errors);
        let (saved_total, collect) = (cx.total, std::mem::replace(&mut cx.collect, true));
        f(cx);
        cx.collect = collect;
        cx.total = saved_total;
        std::mem::replace(&mut cx.errors, saved_errors)
    }

    /// Whether `inst` equals one of `values` (`enum`, `const`), each comparison paid from the
    /// validation's budget: an `enum` of thousands checked against each item of a long array
    /// is a lot of work. When the budget runs out, validation stops without an answer.
    fn equals_one(&self, values: &[Value], inst: &Value, cx: &mut Cx) -> Result<bool, Invalid> {
        for value in values {
            let mut work = 0;
            let equal = equal(value, inst, &mut work);
            if !cx.spend(work) {
                return Err(Invalid);
            }
            if equal {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether `regex` matches `text`, its steps paid from the validation's budget; when
    /// that runs out, validation stops and the check ends without an answer.
    fn regex(&self, regex: &Regex, text: &str, cx: &mut Cx) -> Result<bool, Invalid> {
        let before = MAX_STEPS.saturating_sub(cx.steps) * REGEX_STEPS_PER_STEP;
        let mut left = before;
        let hit = regex.is_match(text, &mut left);
        cx.steps += (before - left).div_ceil(REGEX_STEPS_PER_STEP);
        hit.map_err(|BudgetExhausted| {
            cx.stop(format!(
                "validation stopped: more than {MAX_STEPS} steps (the last matching a pattern \
                 against a {}-character string)",
                text.chars().count()
            ));
            Invalid
        })
    }
}

/// The message is built in a closure called here: its temporaries then live in this frame,
/// not in the recursive ones, which keeps deep schemas off the stack. One copy for every
/// failing keyword (the message through `dyn`): a copy for each closure was 7.5 KB in all.
#[inline(never)]
#[cold]
fn record(
    cx: &mut Cx,
    path: &Path,
    base: &str,
    keyword: &str,
    message: &mut dyn FnMut() -> String,
) {
    cx.error(path, || (format!("{base}/{keyword}"), message()));
}

fn type_matches(bits: u8, value: &Value) -> bool {
    let bit = match value {
        Value::Null => types::NULL,
        Value::Bool(_) => types::BOOLEAN,
        Value::Object(_) => types::OBJECT,
        Value::Array(_) => types::ARRAY,
        Value::String(_) => types::STRING,
        Value::Number(n) if number::is_integer(n) => types::INTEGER | types::NUMBER,
        Value::Number(_) => types::NUMBER,
    };
    bits & bit != 0
}

#[cfg(test)]
mod tests;
