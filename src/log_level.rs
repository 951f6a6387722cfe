//! The log severities a client may ask for (RFC 5424), by name.

/// Log severities (RFC 5424), least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    const NAMES: [(&'static str, LogLevel); 8] = [
        ("debug", LogLevel::Debug),
        ("info", LogLevel::Info),
        ("notice", LogLevel::Notice),
        ("warning", LogLevel::Warning),
        ("error", LogLevel::Error),
        ("critical", LogLevel::Critical),
        ("alert", LogLevel::Alert),
        ("emergency", LogLevel::Emergency),
    ];

    pub fn parse(name: &str) -> Option<LogLevel> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, level)| *level)
    }

    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, level)| *level == self).map_or("info", |(n, _)| n)
    }
}
