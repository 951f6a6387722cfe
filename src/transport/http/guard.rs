//! Who may talk to the endpoint: `Host` and `Origin` checks (DNS rebinding, browsers), bearer
//! tokens from a file (each with its principal, compared in constant time, re-read when the
//! file changes or on SIGHUP), and HS256 JWTs signed with a shared secret.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::{Map, Value};

use crate::conn::principal::Principal;
use crate::transport::http::claims::check_claims;
use crate::transport::http::signals::RELOAD;
use crate::util::encoding::base64url_decode as base64url;
use crate::util::sha256::{hex, hmac, same, sha256};

/// The log target: the name `RUST_LOG` filters by (README, Logging), kept when files move.
const LOG: &str = "baremcp::http::guard";

/// The checks every request goes through, from the command line.
pub struct Guard {
    /// Extra `Host` names (`name` or `name:port`); `*` allows any.
    hosts: Vec<String>,
    /// Extra origins, exactly (`scheme://host[:port]`, lowercase, no trailing slash): these
    /// get CORS headers.
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
        if self.cors_allowed(origin) {
            return true;
        }
        let origin = origin.trim_end_matches('/').to_ascii_lowercase();
        match origin.split_once("://") {
            Some(("http" | "https", host)) => is_loopback_name(strip_port(host)),
            _ => false,
        }
    }

    /// Whether `origin` is one `--allow-origin` named: only such pages get CORS headers (a
    /// loopback origin is accepted, but a browser lets its page read nothing cross-origin).
    pub fn cors_allowed(&self, origin: &str) -> bool {
        let origin = origin.trim_end_matches('/');
        self.origins.iter().any(|o| o.eq_ignore_ascii_case(origin))
    }

    /// Checks `Authorization` when authentication is configured. `Ok` carries who presented
    /// it (a static token's principal, a JWT's subject), which legacy sessions and
    /// `requestState` are bound to; `None` without authentication, or for a JWT without `sub`.
    pub fn authorize(&self, authorization: Option<&str>) -> Result<Option<Arc<Principal>>, Denied> {
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
        if let Some(principal) = self.tokens.as_ref().and_then(|tokens| tokens.holder(token)) {
            return Ok(Some(principal));
        }
        match &self.jwt {
            Some(jwt) if token.matches('.').count() == 2 => {
                jwt.verify(token, now_secs()).map(|p| p.map(Arc::new)).map_err(denied)
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

/// Tokens, one a line as `NAME TOKEN` or `TOKEN` (`#` comments and blank lines skipped), read
/// again when the file's size or modification time changes (looked at most once a second) or
/// after SIGHUP.
struct TokenFile {
    path: PathBuf,
    state: Mutex<Tokens>,
}

/// Each token with the principal its holder is.
type TokenList = Vec<(Vec<u8>, Arc<Principal>)>;

struct Tokens {
    list: TokenList,
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

    /// The principal of `token`, when the file lists it.
    fn holder(&self, token: &str) -> Option<Arc<Principal>> {
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
        // Every token is compared and the match is picked without a branch, so timing does not
        // tell which (or whether one) matched.
        let mut found = usize::MAX;
        for (at, (listed, _)) in state.list.iter().enumerate() {
            let mask = usize::from(same(listed, token.as_bytes())).wrapping_neg();
            found ^= (found ^ at) & mask;
        }
        state.list.get(found).map(|(_, principal)| principal.clone())
    }
}

/// A file's size and modification time: when either changes, it is read again.
type Stamp = (u64, SystemTime);

fn stamp_of(path: &PathBuf) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.len(), meta.modified().ok()?))
}

fn read_tokens(path: &PathBuf) -> std::io::Result<(TokenList, Option<Stamp>)> {
    let stamp = stamp_of(path);
    let text = std::fs::read_to_string(path)?;
    Ok((parse_tokens(&text)?, stamp))
}

/// The token file's lines: `NAME TOKEN` (whitespace between; a name is `[A-Za-z0-9._@-]+`),
/// or `TOKEN` alone, whose principal is `token-` and the first 8 hex digits of its SHA-256
/// (stable, and telling nothing of the token). Errors name the line, never the token.
fn parse_tokens(text: &str) -> std::io::Result<TokenList> {
    let mut list = Vec::new();
    for (at, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let bad = |why: &str| {
            let why = format!("line {}: {why}", at + 1);
            std::io::Error::new(std::io::ErrorKind::InvalidData, why)
        };
        let fields: Vec<&str> = line.split_whitespace().collect();
        let (name, token) = match fields[..] {
            [token] => (format!("token-{}", &hex(&sha256(token.as_bytes()))[..8]), token),
            [name, token] => {
                let valid = |b: u8| b.is_ascii_alphanumeric() || b"._@-".contains(&b);
                if !name.bytes().all(valid) {
                    return Err(bad("a token's name is letters, digits and ._@- only"));
                }
                (name.to_string(), token)
            }
            _ => return Err(bad("expected TOKEN, or NAME TOKEN")),
        };
        list.push((token.as_bytes().to_vec(), Arc::new(Principal::token(name))));
    }
    Ok(list)
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
    /// The token's principal (its `sub`, from its `iss`) when it verifies; `None` when it
    /// names no subject.
    pub fn verify(&self, token: &str, now: u64) -> Result<Option<Principal>, &'static str> {
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
        let issuer = claims.get("iss").and_then(Value::as_str).unwrap_or("");
        Ok(claims.get("sub").and_then(Value::as_str).map(|sub| Principal::jwt(sub, issuer)))
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

    /// What a verified token names: its subject, or `None`.
    fn subject(
        verified: Result<Option<Principal>, &'static str>,
    ) -> Result<Option<String>, &'static str> {
        verified.map(|p| p.map(|p| p.subject().to_string()))
    }

    #[test]
    fn token_lines_name_their_principal() {
        let list = parse_tokens("# c\n\n  ann   s3cret \nbare-token\nbob@x.y\tother\n").unwrap();
        let names: Vec<&str> = list.iter().map(|(_, p)| p.subject()).collect();
        let bare = format!("token-{}", &hex(&sha256(b"bare-token"))[..8]);
        assert_eq!(names, ["ann", bare.as_str(), "bob@x.y"]);
        assert_eq!(list[0].0, b"s3cret");
        for bad in ["a b c", "ann! tok"] {
            let why = parse_tokens(&format!("ok\n{bad}\n")).unwrap_err().to_string();
            assert!(why.starts_with("line 2: ") && !why.contains("tok\n"), "{why}");
        }
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
        assert_eq!(subject(jwt.verify(&token(b"s3cret", hs, good), 1000)), Ok(Some("ann".into())));
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
        assert_eq!(
            subject(jwt.verify(&token(b"s3cret", hs, forever), 1000)),
            Ok(Some("ann".into()))
        );
        // NumericDates may have a fraction; one that is not a number is no date.
        let fractional =
            r#"{"sub":"ann","exp":2000.5,"nbf":999.5,"aud":"https://mcp.example/mcp"}"#;
        assert_eq!(
            subject(jwt.verify(&token(b"s3cret", hs, fractional), 1000)),
            Ok(Some("ann".into()))
        );
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
