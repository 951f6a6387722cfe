//! The binary's logger: `env_logger` filters (`RUST_LOG`, or `--log-level`), one line per
//! record with an RFC 3339 UTC timestamp, written to stderr or to `--log-file`.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Starts logging: `level` (a `--log-level` value) wins over `RUST_LOG`; warnings and errors
/// otherwise. Records go to `file` (appended to) when given, else to stderr.
pub fn init(level: Option<&str>, file: Option<&Path>) -> io::Result<()> {
    let mut builder = env_logger::Builder::new();
    match (level, std::env::var("RUST_LOG")) {
        (Some(level), _) => builder.parse_filters(level),
        (None, Ok(filters)) => builder.parse_filters(&filters),
        (None, Err(_)) => builder.parse_filters("warn"),
    };
    if let Some(path) = file {
        let log = OpenOptions::new().create(true).append(true).open(path).map_err(|e| super::named(path, e))?;
        builder.target(env_logger::Target::Pipe(Box::new(log)));
    }
    builder.format(|out, record| {
        writeln!(out, "{} {:<5} {}: {}", rfc3339(SystemTime::now()), record.level(), record.target(), record.args())
    });
    // A second init (tests, an embedding program) keeps the first logger.
    let _ = builder.try_init();
    Ok(())
}

/// `time` as `2026-11-23T12:05:47.123Z`: UTC, milliseconds.
fn rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (days, secs) = (since.as_secs() / 86_400, since.as_secs() % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let at = |secs: u64, millis: u64| rfc3339(UNIX_EPOCH + Duration::from_millis(secs * 1000 + millis));
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z"); // a leap day
        assert_eq!(at(1_795_431_947, 123), "2026-11-23T11:05:47.123Z");
        assert_eq!(at(4_107_542_399, 999), "2100-02-28T23:59:59.999Z"); // 2100 is not a leap year
    }
}
