//! What the OTLP exporter says of a collector that fails: a line when an outage begins, at
//! most one a minute while it lasts, and one when export resumes, never one per batch.

use std::time::{Duration, Instant};

/// At most one warning a minute while a collector keeps failing.
const WARN_EVERY: Duration = Duration::from_secs(60);

/// What the exporter says of a collector that fails, so that one down for an hour writes a
/// line a minute rather than one per batch: the first failed batch of an outage is warned
/// about with its reason; later ones are counted, and a warning at most every
/// [`WARN_EVERY`] says how many were dropped since the last; the first batch exported after
/// them says, at info, that export resumed and what the outage cost.
#[derive(Default)]
pub(super) struct Outage {
    /// When the last warning was written; `None` while the collector takes batches.
    warned: Option<Instant>,
    /// Batches and spans dropped since that warning, and since the outage began.
    untold: (u64, u64),
    lost: (u64, u64),
}

impl Outage {
    /// A batch of `spans` spans was dropped for `why` at `now`: the warning due, if one is.
    pub(super) fn failed(&mut self, why: &str, spans: usize, now: Instant) -> Option<String> {
        let spans = spans as u64;
        self.lost = (self.lost.0 + 1, self.lost.1 + spans);
        let Some(warned) = self.warned else {
            self.warned = Some(now);
            return Some(format!("{why}: {spans} spans dropped"));
        };
        self.untold = (self.untold.0 + 1, self.untold.1 + spans);
        if now.duration_since(warned) < WARN_EVERY {
            return None;
        }
        self.warned = Some(now);
        let (batches, spans) = std::mem::take(&mut self.untold);
        let since = now.duration_since(warned).as_secs();
        Some(format!("{why}: {batches} more batches ({spans} spans) dropped in the last {since} s"))
    }

    /// A batch was exported to `host`: the line that says so, when it ends an outage.
    pub(super) fn ended(&mut self, host: &str) -> Option<String> {
        self.warned?;
        let (batches, spans) = std::mem::take(self).lost;
        Some(format!("export to {host} resumed: {batches} batches ({spans} spans) were dropped"))
    }

    /// As the exporter stops, the warning for batches dropped since the last one, if any were.
    pub(super) fn untold(&self, host: &str) -> Option<String> {
        let (batches, spans) = self.untold;
        (batches > 0).then(|| {
            format!("stopping: {batches} more batches ({spans} spans) for {host} dropped since the last warning")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outage_is_warned_about_once_a_minute() {
        let (start, mut outage) = (Instant::now(), Outage::default());
        let second = |s: u64| start + Duration::from_secs(s);
        let warned: Vec<String> =
            (0..3600).filter_map(|s| outage.failed("down", 2, second(s))).collect();
        assert_eq!(warned.len(), 60, "an hour down: {warned:?}");
        assert_eq!(warned[0], "down: 2 spans dropped");
        assert_eq!(warned[1], "down: 60 more batches (120 spans) dropped in the last 60 s");
        let untold = "stopping: 59 more batches (118 spans) for h dropped since the last warning";
        assert_eq!(outage.untold("h").as_deref(), Some(untold));
        let resumed = "export to h resumed: 3600 batches (7200 spans) were dropped";
        assert_eq!(outage.ended("h").as_deref(), Some(resumed));
        assert_eq!((outage.ended("h"), outage.untold("h")), (None, None), "said once");
    }
}
