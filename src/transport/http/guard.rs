//! Who may talk to the endpoint: `Host` and `Origin` checks (DNS rebinding, browsers), bearer
//! tokens from a file (compared in constant time, re-read when the file changes or on
//! SIGHUP), and HS256 JWTs signed with a shared secret.

use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::transport::http::claims::check_claims;
use crate::transport::http::signals::RELOAD;
use crate::util::encoding::base64url_decode as base64url;
use crate::util::sha256::{hmac, same};

/// The log target: the name `RUST_LOG` filters by (README, Logging), kept when files move.
const LOG: &str = "baremcp::http::guard";

/// The checks every request goes through, from the command line.
pub struct Guard {
    /// Extra `Host` names (`name` or `name:port`); `*` allows any.
    hosts: Vec<String>,
    /// Extra origins, exactly (`scheme://host[:port]`, lowercase, no trailing slash).
    origins: Vec<String>,
    tokens: Option<TokenFile>,
    jwt: Option<Jwt>,
    /// The RFC 9728 metadata URL named in 401 challenges.
    pub resource_metadata: Option<String>,
}

/// A failed authorization: what the 401 challenge says.
#[derive(Debug, PartialEq)]
pub struct Denied {
    /// A token was presented (then `error="invalid_token"`, RFC 6750 §3.1).
    pub presented: bool,
    pub why: &'static str,
}

impl Guard {
    pub fn new(
        hosts: &[String],
        origins: &[String],
        tokens: Option<PathBuf>,
        jwt: Option<Jwt>,
        resource_metadata: Option<String>,
    ) -> std::io::Result<Guard> {
        let origins: Vec<String> =
            origins.iter().map(|o| o.trim_end_matches('/').to_ascii_lowercase()).collect();
        // An allowed origin's host is an allowed Host too: one flag admits a browser app.
        let mut hosts: Vec<String> = hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
        hosts
            .extend(origins.iter().filter_map(|o| o.split_once("://").map(|(_, h)| h.to_string())));
        let tokens = tokens.map(TokenFile::open).transpose()?;
        Ok(Guard { hosts, origins, tokens, jwt, resource_metadata })
    }

    /// Whether authentication is configured at all.
    pub fn authenticates(&self) -> bool {
        self.tokens.is_some() || self.jwt.is_some()
    }

    /// `Host` must name this server: a loopback name (any port) or an allowed host. A page on
    /// `evil.example` that rebinds its name to 127.0.0.1 sends `Host: evil.example`.
    pub fn host_allowed(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        is_loopback_name(strip_port(&host))
            || self.hosts.iter().any(|h| h == "*" || *h == host || h == strip_port(&host))
    }

    /// An `Origin`, when sent, must be a loopback one or allowed. `null` (sandboxed frames,
    /// `file:` pages) is refused.
    pub fn origin_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        if self.origins.contains(&origin) {
            return true;
        }
        match origin.split_once("://") {
            Some(("http" | "https", host)) => is_loopback_name(strip_port(host)),
            _ => false,
        }
    }

    /// Checks `Authorization` when authentication is configured. `Ok` carries the token's
    /// subject (a JWT `sub`), which legacy sessions are bound to.
    pub fn authorize(&self, authorization: Option<&str>) -> Result<Option<String>, Denied> {
        if !self.authenticates() {
            return Ok(None);
        }
        let Some(value) = authorization else {
            return Err(Denied { presented: false, why: "no bearer token" });
        };
        let token = match value.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => {
                return Err(Denied {
                    presented: false,
                    why: "authorization is not a bearer token",
                });
            }
        };
        let denied = |why| Denied { presented: true, why };
        if let Some(tokens) = &self.tokens
            && tokens.contains(token)
        {
            return Ok(None);
        }
        match &self.jwt {
            Some(jwt) if token.matches('.').count() == 2 => {
                jwt.verify(token, now_secs()).map_err(denied)
            }
            _ => Err(denied("unknown token")),
        }
    }

    /// The `WWW-Authenticate` value for a 401.
    pub fn challenge(&self, denied: &Denied) -> String {
        let mut value = String::from(r#"Bearer realm="baremcp""#);
        if denied.presented {
            value.push_str(r#", error="invalid_token""#);
        }
        if let Some(url) = &self.resource_metadata {
            value.push_str(&format!(r#", resource_metadata="{url}""#));
        }
        value
    }
}

/// `localhost`, `127.0.0.1` and `::1` (bracketed or not), whatever the port.
pub fn is_loopback_name(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "::1")
}

/// `host:port` → `host`; `[v6]:port` → `[v6]`. Splitting at the last colon serves both: what
/// follows a `]` must be a port, or the whole (`[::1]evil.example`) stays, naming no host.
fn strip_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Tokens, one a line (`#` comments and blank lines skipped), read again when the file's
/// size or modification time changes (looked at most once a second) or after SIGHUP.
struct TokenFile {
    path: PathBuf,
    state: Mutex<Tokens>,
}

struct Tokens {
    list: Vec<Vec<u8>>,
    stamp: Option<Stamp>,
    looked: Instant,
}

impl TokenFile {
    fn open(path: PathBuf) -> std::io::Result<TokenFile> {
        let (list, stamp) = read_tokens(&path)?;
        if list.is_empty() {
            log::warn!(target: LOG, "{}: no tokens: every request will be refused", path.display());
        }
        Ok(TokenFile { path, state: Mutex::new(Tokens { list, stamp, looked: Instant::now() }) })
    }

    fn contains(&self, token: &str) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let hup = RELOAD.swap(false, Ordering::Relaxed);
        if hup || state.looked.elapsed() >= Duration::from_secs(1) {
            state.looked = Instant::now();
            let stamp = stamp_of(&self.path);
            if hup || stamp != state.stamp {
                match read_tokens(&self.path) {
                    Ok((list, stamp)) => {
                        log::info!(
                            target: LOG,
                            "{}: read {} token(s)",
                            self.path.display(),
                            list.len(),
                        );
                        state.list = list;
                        state.stamp = stamp;
                    }
                    // Keep the tokens we had: a half-written file must not lock everyone out.
                    Err(e) => {
                        log::warn!(target: LOG, "{}: {e}; keeping the previous tokens", self.path.display())
                    }
                }
            }
        }
        // Every token is compared, so timing does not tell which (or whether one) matched.
        state.list.iter().fold(false, |found, t| found | same(t, token.as_bytes()))
    }
}

/// A file's size and modification time: when either changes, it is read again.
type Stamp = (u64, SystemTime);

fn stamp_of(path: &PathBuf) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

fn read_tokens(path: &PathBuf) -> std::io::Result<(Vec<Vec<u8>>, Option<Stamp>)> {
    let stamp = stamp_of(path);
    let text = std::fs::read_to_string(path)?;
    let list = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| l.as_bytes().to_vec())
        .collect();
    Ok((list, stamp))
}

fn now_secs() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// HS256 JSON Web Tokens (RFC 7519) with a shared secret: the algorithm is pinned (a token
/// saying `none` or anything else is refused), `exp` is required, `nbf`, `aud` and `iss`
/// are checked.
pub struct Jwt {
    pub secret: Vec<u8>,
    pub audience: Option<String>,
    pub issuer: Option<String>,
}

impl Jwt {
    /// The token's `sub` when it verifies.
    pub fn verify(&self, token: &str, now: u64) -> Result<Option<String>, &'static str> {
        let mut parts = token.split('.');
        let (Some(encoded_header), Some(payload), Some(signature)) =
            (parts.next(), parts.next(), parts.next())
        else {
            return Err("malformed token");
        };
        let header: Value = base64url(encoded_header)
            .and_then(|h| serde_json::from_slice(&h).ok())
            .ok_or("malformed token")?;
        if header["alg"] != "HS256" {
            return Err("token algorithm is not HS256");
        }
        let mac = hmac(&self.secret, format!("{encoded_header}.{payload}").as_bytes());
        let signature = base64url(signature).ok_or("malformed token")?;
        if !same(&mac, &signature) {
            return Err("token signature does not verify");
        }
        let claims: Map<String, Value> = base64url(payload)
            .and_then(|p| serde_json::from_slice(&p).ok())
            .ok_or("malformed token")?;
        check_claims(&claims, now, self.audience.as_deref(), self.issuer.as_deref())?;
        Ok(claims.get("sub").and_then(Value::as_str).map(String::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::http::claims::LEEWAY_SECS;
    use crate::util::encoding::base64;

    fn b64url(bytes: &[u8]) -> String {
        base64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
    }

    fn token(secret: &[u8], header: &str, claims: &str) -> String {
        let signing = format!("{}.{}", b64url(header.as_bytes()), b64url(claims.as_bytes()));
        format!("{signing}.{}", b64url(&hmac(secret, signing.as_bytes())))
    }

    #[test]
    fn jwt_is_verified_strictly() {
        let jwt = Jwt {
            secret: b"s3cret".to_vec(),
            audience: Some("https://mcp.example/mcp".into()),
            issuer: None,
        };
        let hs = r#"{"alg":"HS256","typ":"JWT"}"#;
        let good = r#"{"sub":"ann","exp":2000,"aud":["https://mcp.example/mcp"]}"#;
        assert_eq!(jwt.verify(&token(b"s3cret", hs, good), 1000), Ok(Some("ann".into())));
        assert_eq!(
            jwt.verify(&token(b"other", hs, good), 1000),
            Err("token signature does not verify")
        );
        assert_eq!(jwt.verify(&token(b"s3cret", hs, good), 2100), Err("token expired"));
        let none = format!("{}.{}.", b64url(br#"{"alg":"none"}"#), b64url(good.as_bytes()));
        assert_eq!(jwt.verify(&none, 1000), Err("token algorithm is not HS256"));
        let wrong_aud = r#"{"exp":2000,"aud":"https://other/mcp"}"#;
        assert_eq!(
            jwt.verify(&token(b"s3cret", hs, wrong_aud), 1000),
            Err("token audience is not this server")
        );
        let early = r#"{"exp":5000,"nbf":3000,"aud":"https://mcp.example/mcp"}"#;
        assert_eq!(jwt.verify(&token(b"s3cret", hs, early), 1000), Err("token not yet valid"));
        assert_eq!(
            jwt.verify(&token(b"s3cret", hs, r#"{"aud":"https://mcp.example/mcp"}"#), 1),
            Err("token has no exp")
        );
        // The largest exp a token can say is far in the future, not an overflow.
        let forever = r#"{"sub":"ann","exp":18446744073709551615,"aud":"https://mcp.example/mcp"}"#;
        assert_eq!(jwt.verify(&token(b"s3cret", hs, forever), 1000), Ok(Some("ann".into())));
        // NumericDates may have a fraction; one that is not a number is no date.
        let fractional =
            r#"{"sub":"ann","exp":2000.5,"nbf":999.5,"aud":"https://mcp.example/mcp"}"#;
        assert_eq!(jwt.verify(&token(b"s3cret", hs, fractional), 1000), Ok(Some("ann".into())));
        assert_eq!(
            jwt.verify(&token(b"s3cret", hs, fractional), 2000 + LEEWAY_SECS + 1),
            Err("token expired")
        );
        let late = r#"{"exp":5000,"nbf":1000.5,"aud":"https://mcp.example/mcp"}"#;
        assert_eq!(
            jwt.verify(&token(b"s3cret", hs, late), 1000 - LEEWAY_SECS),
            Err("token not yet valid")
        );
        let text = r#"{"exp":"5000","aud":"https://mcp.example/mcp"}"#;
        assert_eq!(jwt.verify(&token(b"s3cret", hs, text), 1000), Err("token has no exp"));
    }

    #[test]
    fn hosts_and_origins() {
        let guard =
            Guard::new(&["mcp.example".into()], &["https://app.example".into()], None, None, None)
                .unwrap();
        for ok in [
            "localhost",
            "localhost:8080",
            "127.0.0.1:1",
            "[::1]:9",
            "mcp.example:443",
            "app.example",
        ] {
            assert!(guard.host_allowed(ok), "{ok}");
        }
        for ok in ["[::1]", "[::1]:9", "LOCALHOST"] {
            assert!(guard.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.example.com",
            "evil.example.com:8080",
            "127.0.0.1.evil.example",
            "localhost.evil",
        ] {
            assert!(!guard.host_allowed(bad), "{bad}");
        }
        // After a bracketed literal comes nothing or a port: `[::1]evil.com` is not loopback.
        for bad in
            ["[::1]evil.com", "[::1].evil.com", "[::1]:", "[::1]:9x", "[::1", "localhost.evil.com"]
        {
            assert!(!guard.host_allowed(bad), "{bad}");
        }
        for bad in ["127.0.0.1evil", "localhost:80x", "localhost:", "::1"] {
            assert!(!guard.host_allowed(bad), "{bad}");
        }
        for ok in
            ["http://localhost:3000", "https://127.0.0.1", "http://[::1]:5", "https://app.example/"]
        {
            assert!(guard.origin_allowed(ok), "{ok}");
        }
        for bad in
            ["null", "http://evil.example.com", "file://localhost", "https://app.example:8443"]
        {
            assert!(!guard.origin_allowed(bad), "{bad}");
        }
        for bad in [
            "http://[::1]evil.com",
            "http://[::1].evil.com:5",
            "http://localhost.evil.com",
            "http://127.0.0.1evil",
        ] {
            assert!(!guard.origin_allowed(bad), "{bad}");
        }
    }
}
