//! Metrics by hand: counters, gauges and fixed-bucket histograms that any thread updates with
//! atomics, grouped in labelled families, and written in the Prometheus text exposition
//! format (version 0.0.4).
// Built ahead of its wiring into the HTTP layer (issue 30): until then only tests use it.
#![cfg_attr(not(test), allow(dead_code))]

use std::fmt::{Display, Write as _};
use std::hash::Hasher;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, PoisonError};

use crate::util::fnv::Fnv;

/// The most label sets one family holds. Label values come from requests, so past this every
/// new set is counted in one series whose values are all `_OTHER`: memory stays bounded.
const MAX_SERIES: usize = 1000;
/// The label value of the overflow series, and of anything a caller cannot name.
pub(crate) const OTHER: &str = "_OTHER";

/// A value that only goes up.
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    pub fn inc(&self) {
        self.add(1);
    }

    pub fn add(&self, n: u64) {
        self.0.fetch_add(n, Relaxed);
    }

    pub fn get(&self) -> u64 {
        self.0.load(Relaxed)
    }
}

/// A value that goes up and down: what is open or held now.
#[derive(Default)]
pub(crate) struct Gauge(AtomicI64);

impl Gauge {
    pub fn add(&self, n: i64) {
        self.0.fetch_add(n, Relaxed);
    }

    pub fn set(&self, n: i64) {
        self.0.store(n, Relaxed);
    }

    pub fn get(&self) -> i64 {
        self.0.load(Relaxed)
    }
}

/// Observations counted in fixed buckets, with their sum. Each bucket counts only its own
/// observations; they are added up when written, so `+Inf` always equals `_count`.
pub(crate) struct Histogram {
    /// Upper bounds, ascending; the last bucket (`+Inf`) has none.
    bounds: &'static [f64],
    buckets: Box<[AtomicU64]>,
    /// The sum of observations, as `f64` bits.
    sum: AtomicU64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Histogram {
        debug_assert!(bounds.windows(2).all(|pair| pair[0] < pair[1]), "bounds must ascend");
        let buckets = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Histogram { bounds, buckets, sum: AtomicU64::new(0f64.to_bits()) }
    }

    /// Counts `value` in the first bucket whose bound is at least `value` (Prometheus's `le`).
    pub fn observe(&self, value: f64) {
        let bucket = self.bounds.partition_point(|bound| *bound < value);
        self.buckets[bucket].fetch_add(1, Relaxed);
        let add = |bits: u64| Some((f64::from_bits(bits) + value).to_bits());
        let _ = self.sum.fetch_update(Relaxed, Relaxed, add);
    }

    /// How many observations there were.
    pub fn count(&self) -> u64 {
        self.buckets.iter().map(|b| b.load(Relaxed)).sum()
    }
}

/// One kind of metric, as the exposition format writes it.
pub(crate) trait Metric {
    /// The `# TYPE` word.
    const KIND: &'static str;
    /// Writes this series' sample lines.
    fn write(&self, name: &str, labels: &Labels, out: &mut String);
}

impl Metric for Counter {
    const KIND: &'static str = "counter";
    fn write(&self, name: &str, labels: &Labels, out: &mut String) {
        sample(out, name, labels, None, self.get());
    }
}

impl Metric for Gauge {
    const KIND: &'static str = "gauge";
    fn write(&self, name: &str, labels: &Labels, out: &mut String) {
        sample(out, name, labels, None, self.get());
    }
}

impl Metric for Histogram {
    const KIND: &'static str = "histogram";
    fn write(&self, name: &str, labels: &Labels, out: &mut String) {
        let bucket = format!("{name}_bucket");
        let mut cumulative = 0;
        for (i, count) in self.buckets.iter().enumerate() {
            cumulative += count.load(Relaxed);
            let le = self.bounds.get(i).copied().unwrap_or(f64::INFINITY);
            sample(out, &bucket, labels, Some(Float(le)), cumulative);
        }
        sample(
            out,
            &format!("{name}_sum"),
            labels,
            None,
            Float(f64::from_bits(self.sum.load(Relaxed))),
        );
        sample(out, &format!("{name}_count"), labels, None, cumulative);
    }
}

/// A series' labels: the family's names and this series' values, an empty value meaning the
/// label is absent (as Prometheus reads it), so it is not written.
pub(crate) struct Labels<'a> {
    names: &'a [&'static str],
    values: &'a [Box<str>],
}

/// Metrics of one name and kind told apart by their labels' values.
pub(crate) struct Family<M> {
    name: &'static str,
    help: &'static str,
    labels: &'static [&'static str],
    make: fn() -> M,
    series: Mutex<Vec<Series<M>>>,
}

struct Series<M> {
    hash: u64,
    values: Box<[Box<str>]>,
    metric: M,
}

impl<M: Metric> Family<M> {
    /// A family named `name` (`[a-zA-Z_:][a-zA-Z0-9_:]*`) with label names `labels`, whose
    /// series `make` creates on first use.
    pub fn new(
        name: &'static str,
        help: &'static str,
        labels: &'static [&'static str],
        make: fn() -> M,
    ) -> Family<M> {
        debug_assert!(valid_name(name, true) && labels.iter().all(|l| valid_name(l, false)));
        Family { name, help, labels, make, series: Mutex::new(Vec::new()) }
    }

    /// Runs `update` on the series of `values` (one per label name, `""` for absent),
    /// creating it the first time. The lock is held for a lookup among hashes and the
    /// update; nothing is allocated once the series exists.
    pub fn with<R>(&self, values: &[&str], update: impl FnOnce(&M) -> R) -> R {
        debug_assert_eq!(values.len(), self.labels.len());
        let mut series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        let mut values = values;
        let others = [OTHER; 8];
        loop {
            let hash = hash(values);
            let same = |s: &Series<M>| {
                s.hash == hash && s.values.iter().zip(values).all(|(a, b)| **a == **b)
            };
            if let Some(found) = series.iter().position(same) {
                return update(&series[found].metric);
            }
            // One series past the bound: the one that counts everything else.
            if series.len() < MAX_SERIES || values.iter().all(|v| *v == OTHER) {
                let values = values.iter().map(|v| Box::from(*v)).collect();
                series.push(Series { hash, values, metric: (self.make)() });
                return update(&series[series.len() - 1].metric);
            }
            values = &others[..values.len()];
        }
    }

    /// Writes the family: `# HELP`, `# TYPE`, then each series in the order it was created.
    pub fn write(&self, out: &mut String) {
        header(out, self.name, self.help, M::KIND);
        let series = self.series.lock().unwrap_or_else(PoisonError::into_inner);
        for s in series.iter() {
            let labels = Labels { names: self.labels, values: &s.values };
            s.metric.write(self.name, &labels, out);
        }
    }
}

/// Writes a metric without labels.
pub(crate) fn write_single<M: Metric>(out: &mut String, name: &str, help: &str, metric: &M) {
    header(out, name, help, M::KIND);
    metric.write(name, &Labels { names: &[], values: &[] }, out);
}

fn header(out: &mut String, name: &str, help: &str, kind: &str) {
    let _ = write!(out, "# HELP {name} ");
    for c in help.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    let _ = writeln!(out, "\n# TYPE {name} {kind}");
}

/// One sample line: `name{labels,le="bound"} value`.
fn sample(out: &mut String, name: &str, labels: &Labels, le: Option<Float>, value: impl Display) {
    out.push_str(name);
    let mut first = true;
    let present = labels.names.iter().copied().zip(labels.values.iter().map(|v| &**v));
    let le = le.map(|bound| bound.to_string());
    let bound = le.as_deref().map(|v| ("le", v));
    for (label, value) in present.filter(|(_, v)| !v.is_empty()).chain(bound) {
        out.push(if first { '{' } else { ',' });
        first = false;
        let _ = write!(out, "{label}=\"");
        for c in value.chars() {
            match c {
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                '\n' => out.push_str("\\n"),
                c => out.push(c),
            }
        }
        out.push('"');
    }
    if !first {
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// A float as the exposition format spells it: `+Inf`, `-Inf`, `NaN`, or the shortest
/// decimal that reads back as the same number.
struct Float(f64);

impl Display for Float {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            v if v.is_nan() => f.write_str("NaN"),
            f64::INFINITY => f.write_str("+Inf"),
            f64::NEG_INFINITY => f.write_str("-Inf"),
            v => write!(f, "{v}"),
        }
    }
}

fn hash(values: &[&str]) -> u64 {
    let mut hasher = Fnv::default();
    for value in values {
        hasher.write(value.as_bytes());
        hasher.write_u8(0xff); // never in UTF-8: ("a", "bc") and ("ab", "c") differ
    }
    hasher.finish()
}

/// A metric name (`colons`) or a label name: a letter or `_` (or `:`), then also digits.
fn valid_name(name: &str, colons: bool) -> bool {
    let ok = |c: char, first: bool| {
        c.is_ascii_alphabetic()
            || c == '_'
            || (colons && c == ':')
            || (!first && c.is_ascii_digit())
    };
    let mut chars = name.chars();
    chars.next().is_some_and(|c| ok(c, true)) && chars.all(|c| ok(c, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_the_exposition_format() {
        let calls = Family::new(
            "demo_calls_total",
            "Calls by method.\nEscaped: \\ and newline",
            &["method", "tool"],
            Counter::default,
        );
        calls.with(&["tools/call", "hello"], |c| c.add(2));
        calls.with(&["ping", ""], Counter::inc);
        calls.with(&["say \"hi\"\\\n", ""], Counter::inc);
        calls.with(&["tools/call", "hello"], Counter::inc);
        let open = Gauge::default();
        open.add(3);
        open.add(-1);
        let took = Family::new("demo_seconds", "Durations.", &["method"], || {
            Histogram::new(&[0.01, 0.5, 1.0])
        });
        for value in [0.005, 0.01, 0.2, 0.75, 7.0] {
            took.with(&["tools/call"], |h| h.observe(value));
        }
        let mut out = String::new();
        calls.write(&mut out);
        write_single(&mut out, "demo_open", "Open now.", &open);
        took.write(&mut out);
        assert_eq!(
            out,
            r#"# HELP demo_calls_total Calls by method.\nEscaped: \\ and newline
# TYPE demo_calls_total counter
demo_calls_total{method="tools/call",tool="hello"} 3
demo_calls_total{method="ping"} 1
demo_calls_total{method="say \"hi\"\\\n"} 1
# HELP demo_open Open now.
# TYPE demo_open gauge
demo_open 2
# HELP demo_seconds Durations.
# TYPE demo_seconds histogram
demo_seconds_bucket{method="tools/call",le="0.01"} 2
demo_seconds_bucket{method="tools/call",le="0.5"} 3
demo_seconds_bucket{method="tools/call",le="1"} 4
demo_seconds_bucket{method="tools/call",le="+Inf"} 5
demo_seconds_sum{method="tools/call"} 7.965
demo_seconds_count{method="tools/call"} 5
"#
        );
    }

    #[test]
    fn an_empty_family_writes_its_header_only_and_floats_are_spelled_as_prometheus_reads_them() {
        let none: Family<Counter> =
            Family::new("demo_total", "Nothing yet.", &[], Counter::default);
        let mut out = String::new();
        none.write(&mut out);
        assert_eq!(out, "# HELP demo_total Nothing yet.\n# TYPE demo_total counter\n");
        let spelled: Vec<String> = [f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 0.1, 300.0, 1e-7]
            .map(|v| Float(v).to_string())
            .into();
        assert_eq!(spelled, ["+Inf", "-Inf", "NaN", "0.1", "300", "0.0000001"]);
    }

    #[test]
    fn label_sets_past_the_bound_are_counted_as_other() {
        let family = Family::new("demo_total", "Bounded.", &["name"], Counter::default);
        for i in 0..MAX_SERIES + 50 {
            family.with(&[&format!("n{i}")], Counter::inc);
        }
        family.with(&["n3"], Counter::inc);
        let series = family.series.lock().unwrap();
        assert_eq!(series.len(), MAX_SERIES + 1);
        let other = series.iter().find(|s| &*s.values[0] == OTHER).unwrap();
        assert_eq!(other.metric.get(), 50);
        assert_eq!(series[3].metric.get(), 2);
    }

    #[test]
    fn counts_from_many_threads_add_up() {
        let family = Family::new("demo_seconds", "Durations.", &["m"], || Histogram::new(&[1.0]));
        std::thread::scope(|scope| {
            for t in 0..4 {
                let family = &family;
                scope.spawn(move || {
                    for _ in 0..1000 {
                        family.with(&[if t % 2 == 0 { "a" } else { "b" }], |h| h.observe(0.5));
                    }
                });
            }
        });
        assert_eq!(family.with(&["a"], Histogram::count), 2000);
        assert_eq!(family.with(&["b"], Histogram::count), 2000);
    }
}
