//! The log severities a client may ask for (RFC 5424), by name.

/// Log severities (RFC 5424), least to most severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    /// `debug`: detailed information for debugging.
    Debug,
    /// `info`: informational messages.
    Info,
    /// `notice`: normal but significant events.
    Notice,
    /// `warning`: warning conditions.
    Warning,
    /// `error`: error conditions.
    Error,
    /// `critical`: critical conditions.
    Critical,
    /// `alert`: action must be taken immediately.
    Alert,
    /// `emergency`: the system is unusable.
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

    /// The level named as MCP names it (`"debug"` ... `"emergency"`), if it is one.
    pub fn parse(name: &str) -> Option<LogLevel> {
        Self::NAMES.iter().find(|(n, _)| *n == name).map(|(_, level)| *level)
    }

    /// The level's name in MCP messages, such as `"warning"`.
    pub fn name(self) -> &'static str {
        Self::NAMES.iter().find(|(_, level)| *level == self).map_or("info", |(n, _)| n)
    }
}
