//! `Principal`: who made a request, as the transport's authentication established it. Legacy
//! sessions and 2026-07-28 `requestState` are bound to it; handlers read it through
//! [`crate::Context::principal`].

/// Who made a request: over HTTP, the subject of a verified JWT or the name of a static
/// bearer token; nobody on stdio or without authentication.
///
/// Two principals are the same caller only when they came the same way: a static token named
/// `ann` is not a JWT whose `sub` is `ann`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    subject: String,
    /// A JWT's `iss` (empty when it has none); `None` for a static token.
    issuer: Option<String>,
}

impl Principal {
    /// The holder of the static bearer token named `name` in the token file.
    pub fn token(name: impl Into<String>) -> Principal {
        Principal { subject: name.into(), issuer: None }
    }

    /// The subject `sub` of a JWT issued by `issuer` (empty when the token names none).
    pub fn jwt(subject: impl Into<String>, issuer: impl Into<String>) -> Principal {
        Principal { subject: subject.into(), issuer: Some(issuer.into()) }
    }

    /// The name: a JWT's `sub`, or the static token's name (`token-` and 8 hex digits of its
    /// SHA-256 when the token file gives it none).
    pub fn subject(&self) -> &str {
        &self.subject
    }

    /// The issuer a JWT named (`iss`, empty when none); `None` for a static token.
    pub fn issuer(&self) -> Option<&str> {
        self.issuer.as_deref()
    }

    /// One text that differs between any two different principals: what state bound to a
    /// principal records (as a digest).
    pub(crate) fn binding(&self) -> String {
        match &self.issuer {
            None => format!("token\0{}", self.subject),
            Some(issuer) => format!("jwt\0{issuer}\0{}", self.subject),
        }
    }
}
