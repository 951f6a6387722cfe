//! Who may talk to the endpoint: `Host` and `Origin` checks (DNS rebinding, browsers), and
//! which credential a request carries: a static bearer token (`token_file.rs`), an HS256 JWT
//! signed with a shared secret (here), or a JWT signed by an authorization server's keys
//! (`jwks_file.rs`); then the scopes a JWT must grant.

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use serde_json::{Map, Value};

use crate::conn::principal::Principal;
use crate::crypto::{JwsError, refuse_extensions};
use crate::transport::http::claims::{check_claims, is_scope_token};
use crate::transport::http::jwks_file::JwksVerifier;
use crate::transport::http::options::HttpOptions;
use crate::transport::http::signals::RELOAD;
use crate::transport::http::token_file::TokenFile;
use crate::transport::http::verified::Verified;
use crate::util::encoding::base64url_decode as base64url;
use crate::util::encoding::unix_secs;
use crate::util::sha256::{hmac, same};

/// The checks every request goes through, from the command line.
pub struct Guard {
    /// Extra `Host` names (`name` or `name:port`); `*` allows any.
    hosts: Vec<String>,
    /// Extra origins, exactly (`scheme://host[:port]`, lowercase, no trailing slash): these
    /// get CORS headers.
    origins: Vec<String>,
    tokens: Option<TokenFile>,
    /// `--jwt-secret-file`: HS256 JWTs.
    jwt: Option<Jwt>,
    /// `--jwks-file`: JWTs signed by an authorization server's public keys.
    jwks: Option<JwksVerifier>,
    /// `--required-scope`: what every JWT must grant. Static tokens are not subject to it:
    /// they carry no scopes, and the operator handed each out.
    required_scopes: Vec<String>,
    /// The RFC 9728 metadata URL named in 401 and 403 challenges.
    resource_metadata: Option<String>,
    /// JWTs verified already, by either way.
    verified: Verified,
}

/// Who a request comes from (`None` without authentication), or why it is refused.
pub type Authorized = Result<Option<Arc<Principal>>, Denied>;

/// A refused request: its status, and what its `WWW-Authenticate` challenge says.
#[derive(Debug, PartialEq)]
pub enum Denied {
    /// No bearer token: `401` without an error code (RFC 6750 §3.1).
    Missing(&'static str),
    /// A token that is not accepted, and why (logged, never sent): `401 invalid_token`.
    Invalid(String),
    /// A valid JWT without every required scope, naming those it lacks:
    /// `403 insufficient_scope`.
    Scope(String),
}

impl Denied {
    /// The response's status.
    pub fn status(&self) -> u16 {
        match self {
            Denied::Scope(_) => 403,
            Denied::Missing(_) | Denied::Invalid(_) => 401,
        }
    }

    /// The response's message: the reason stays in the log.
    pub fn message(&self) -> &'static str {
        match self {
            Denied::Scope(_) => "insufficient scope",
            Denied::Missing(_) | Denied::Invalid(_) => "unauthorized",
        }
    }
}

/// The reason, for the log.
impl fmt::Display for Denied {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Denied::Missing(why) => f.write_str(why),
            Denied::Invalid(why) => f.write_str(why),
            Denied::Scope(missing) => write!(f, "token lacks scope {missing}"),
        }
    }
}

impl Guard {
    /// The checks `options` ask for. The token file, the JWT secret and the key set are read
    /// now, so a missing or unusable one stops the start with the flag's name; so do a bad
    /// scope, a key set without an audience, and a required scope, audience or issuer with no
    /// JWT to carry it.
    pub fn new(options: &HttpOptions) -> io::Result<Guard> {
        let invalid = |why: String| io::Error::new(io::ErrorKind::InvalidInput, why);
        let named = |flag: &str, e: io::Error| io::Error::new(e.kind(), format!("{flag} {e}"));
        if let Some(bad) = options.required_scopes.iter().find(|s| !is_scope_token(s)) {
            return Err(invalid(format!(
                "--required-scope {bad:?}: a scope is printable ASCII without spaces, quotes \
                 or backslashes (one scope a flag)"
            )));
        }
        let jwks = match (&options.jwks_file, &options.jwt_audience) {
            (Some(path), Some(audience)) => Some(
                JwksVerifier::open(path.clone(), audience.clone(), options.jwt_issuer.clone())
                    .map_err(|e| named("--jwks-file", e))?,
            ),
            (Some(_), None) => {
                return Err(invalid(
                    "--jwks-file needs --jwt-audience: the URL clients reach this server at, \
                     which a token must name in aud (else a token the provider issued for \
                     any of its APIs would be let in)"
                        .into(),
                ));
            }
            (None, _) => None,
        };
        let jwt = match &options.jwt_secret_file {
            Some(path) => Some(Jwt {
                secret: read_secret(path).map_err(|e| named("--jwt-secret-file", e))?,
                audience: options.jwt_audience.clone(),
                issuer: options.jwt_issuer.clone(),
            }),
            None => None,
        };
        // What a JWT must say, with no JWT to say it, would be ignored without a word.
        let jwt_flag = [
            (!options.required_scopes.is_empty(), "--required-scope"),
            (options.jwt_audience.is_some(), "--jwt-audience"),
            (options.jwt_issuer.is_some(), "--jwt-issuer"),
        ];
        if let Some((_, flag)) = jwt_flag.iter().find(|(given, _)| *given)
            && jwt.is_none()
            && jwks.is_none()
        {
            return Err(invalid(format!(
                "{flag} is a JWT's: give --jwks-file or --jwt-secret-file"
            )));
        }
        let tokens = match &options.auth_token_file {
            Some(path) => Some(TokenFile::open(path.clone()).map_err(|e| {
                named(
                    "--auth-token-file",
                    io::Error::new(e.kind(), format!("{}: {e}", path.display())),
                )
            })?),
            None => None,
        };
        let origins: Vec<String> = options
            .allow_origins
            .iter()
            .map(|o| o.trim_end_matches('/').to_ascii_lowercase())
            .collect();
        // An allowed origin's host is an allowed Host too: one flag admits a browser app.
        let mut hosts: Vec<String> =
            options.allow_hosts.iter().map(|h| h.to_ascii_lowercase()).collect();
        hosts
            .extend(origins.iter().filter_map(|o| o.split_once("://").map(|(_, h)| h.to_string())));
        Ok(Guard {
            hosts,
            origins,
            tokens,
            jwt,
            jwks,
            required_scopes: options.required_scopes.clone(),
            resource_metadata: options.resource_metadata_url.clone(),
            verified: Verified::default(),
        })
    }

    /// Whether authentication is configured at all.
    pub fn authenticates(&self) -> bool {
        self.tokens.is_some() || self.jwt.is_some() || self.jwks.is_some()
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
    /// it (a static token's principal, a JWT's), which legacy sessions and `requestState` are
    /// bound to and handlers read; `None` without authentication.
    pub fn authorize(&self, authorization: Option<&str>) -> Authorized {
        // Never `None` when it may verify.
        self.check(authorization, true).unwrap_or(Err(Denied::Missing("no bearer token")))
    }

    /// As [`Guard::authorize`], without checking a signature: `None` for a JWT that is not
    /// among those verified already. The dispatching loop asks this, and leaves such a
    /// request to its connection's thread, so that no client waits on another's signature.
    pub fn authorize_known(&self, authorization: Option<&str>) -> Option<Authorized> {
        self.check(authorization, false)
    }

    fn check(&self, authorization: Option<&str>, verify: bool) -> Option<Authorized> {
        if !self.authenticates() {
            return Some(Ok(None));
        }
        // SIGHUP is taken once and passed to every file it concerns, by a connection's thread:
        // the loop reads no file (a key set of big RSA keys takes seconds to check), and hands
        // the request to its thread instead.
        if RELOAD.load(Ordering::Relaxed) {
            if !verify {
                return None;
            }
            if RELOAD.swap(false, Ordering::Relaxed) {
                self.tokens.iter().for_each(TokenFile::reread);
                self.jwks.iter().for_each(JwksVerifier::reread);
            }
        }
        let Some(value) = authorization else {
            return Some(Err(Denied::Missing("no bearer token")));
        };
        let token = match value.split_once(' ') {
            Some((scheme, token)) if scheme.eq_ignore_ascii_case("bearer") => token.trim(),
            _ => return Some(Err(Denied::Missing("authorization is not a bearer token"))),
        };
        if let Some(tokens) = &self.tokens {
            // On the loop, a file due to be read again sends the request to its thread.
            if let Some(principal) = tokens.holder(token, verify)? {
                return Some(Ok(Some(principal)));
            }
        }
        let now = now_secs();
        // Read before the token is verified: a key set read meanwhile makes the token kept
        // under this one's generation, which the next look-up then passes over.
        let keys = match &self.jwks {
            None => 0,
            Some(jwks) if verify => jwks.generation(),
            // The loop: a key set due to be read again is its thread's to read.
            Some(jwks) => jwks.generation_if_read()?,
        };
        let principal = match self.verified.get(token, now, keys) {
            Some(principal) => principal,
            None if !verify => return None,
            None => match self.verify_jwt(token, now) {
                Ok(principal) => {
                    let principal = Arc::new(principal);
                    self.verified.keep(token, &principal, now, keys);
                    principal
                }
                Err(why) => return Some(Err(Denied::Invalid(why))),
            },
        };
        let missing = principal.missing_scopes(&self.required_scopes);
        if !missing.is_empty() {
            return Some(Err(Denied::Scope(missing.join(" "))));
        }
        Some(Ok(Some(principal)))
    }

    /// The caller a JWT names, when its signature and claims hold, at `now`.
    fn verify_jwt(&self, token: &str, now: u64) -> Result<Principal, String> {
        let hs256 = |jwt: &Jwt| jwt.verify(token, now).map_err(String::from);
        match (&self.jwt, &self.jwks) {
            _ if token.matches('.').count() != 2 => Err("unknown token".to_string()),
            (Some(jwt), None) => hs256(jwt),
            // With both, the header's `alg` routes: HS256 to the secret, the rest to the keys.
            (Some(jwt), Some(_)) if header_alg(token).as_deref() == Some("HS256") => hs256(jwt),
            (_, Some(jwks)) => jwks.verify(token, now).map_err(|refusal| refusal.to_string()),
            (None, None) => Err("unknown token".to_string()),
        }
    }

    /// The `WWW-Authenticate` value for a refusal: the error (RFC 6750 §3.1), every required
    /// scope (the MCP authorization spec asks for them in one challenge, on 401 and 403), and
    /// the metadata URL.
    pub fn challenge(&self, denied: &Denied) -> String {
        let mut value = String::from(r#"Bearer realm="baremcp""#);
        match denied {
            Denied::Missing(_) => {}
            Denied::Invalid(_) => value.push_str(r#", error="invalid_token""#),
            Denied::Scope(_) => value.push_str(r#", error="insufficient_scope""#),
        }
        if !self.required_scopes.is_empty() {
            value.push_str(&format!(r#", scope="{}""#, self.required_scopes.join(" ")));
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
/// follows a `]` must be a port, or the whole (`[::1]evil.example`) stays, naming no host. The
/// port may be empty (RFC 3986 §3.2.3: `port = *DIGIT`): `localhost:` is `localhost`.
fn strip_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

/// Whether a `Host` value is `uri-host [ ":" port ]` (RFC 9112 §3.2, RFC 3986 §3.2.2): an
/// IP-literal in brackets, or a non-empty reg-name (IPv4 addresses are among them), then an
/// optional port of digits, which may be empty. Anything else is a 400 (RFC 9112 §3.2), before
/// any allow-list is asked: `*` must not serve `Host: x@y`.
pub fn valid_host(value: &str) -> bool {
    if value.starts_with('[') {
        let literal = strip_port(value).strip_prefix('[').and_then(|l| l.strip_suffix(']'));
        return literal.is_some_and(ip_literal);
    }
    // One pass, as every request pays it: the name up to its first colon (a reg-name has
    // none), then the port's digits. Empty: an `http` URI without a host is invalid (RFC 9110
    // §4.2.1).
    let (bytes, mut i) = (value.as_bytes(), 0);
    while i < bytes.len() {
        match HOST_BYTES[bytes[i] as usize] {
            NAME => i += 1,
            PERCENT if crate::util::encoding::escape_at(bytes, i) => i += 3,
            COLON => break,
            _ => return false,
        }
    }
    i > 0 && bytes[i..].iter().skip(1).all(u8::is_ascii_digit)
}

/// What each byte is to [`valid_host`]'s one look a byte: [`reg_name_byte`]s as `NAME`, `%`
/// (an escape's start) and `:` (the name's end).
const HOST_BYTES: [u8; 256] = {
    let (mut table, mut b) = ([0u8; 256], 0usize);
    while b < 256 {
        table[b] = match b as u8 {
            b'%' => PERCENT,
            b':' => COLON,
            c if reg_name_byte(c) => NAME,
            _ => 0,
        };
        b += 1;
    }
    table
};
const NAME: u8 = 1;
const PERCENT: u8 = 2;
const COLON: u8 = 3;

/// RFC 3986 `unreserved / sub-delims` but `,`, byte by byte (`pct-encoded` is checked apart,
/// as a `%` and its two hex digits). A comma is a sub-delim, yet no name holds one: it is two
/// `Host` values joined, one of which a proxy in front may have read (RFC 9112 §3.2 refuses
/// two).
const fn reg_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(b, b'-' | b'.' | b'_' | b'~')
        || matches!(b, b'!' | b'$' | b'&' | b'\'' | b'(' | b')' | b'*' | b'+' | b';' | b'=')
}

/// What brackets hold: an IPv6 address, or `v` HEXDIG `.` then unreserved, sub-delims or `:`
/// (RFC 3986 §3.2.2 `IPvFuture`).
fn ip_literal(inside: &str) -> bool {
    if let Some(future) = inside.strip_prefix(['v', 'V']) {
        let Some((version, rest)) = future.split_once('.') else { return false };
        let rest_ok = |b: u8| b == b':' || reg_name_byte(b);
        return !version.is_empty()
            && version.bytes().all(|b| b.is_ascii_hexdigit())
            && !rest.is_empty()
            && rest.bytes().all(rest_ok);
    }
    inside.parse::<std::net::Ipv6Addr>().is_ok()
}

/// The HS256 secret: the file's bytes, less one final line ending (LF or CRLF) so that
/// `echo SECRET > FILE` works; at least 32 bytes (RFC 7518 §3.2), since a short key is one
/// anyone may guess and then sign tokens with. Errors name the file.
fn read_secret(path: &Path) -> io::Result<Vec<u8>> {
    let named = |kind, why: String| io::Error::new(kind, format!("{}: {why}", path.display()));
    let bytes = std::fs::read(path).map_err(|e| named(e.kind(), e.to_string()))?;
    let secret =
        bytes.strip_suffix(b"\n").map_or(&bytes[..], |b| b.strip_suffix(b"\r").unwrap_or(b));
    if secret.len() < 32 {
        let why = format!(
            "the secret is {} bytes: HS256 needs at least 32 (RFC 7518 §3.2), such as \
             `openssl rand -hex 32` writes",
            secret.len()
        );
        return Err(named(io::ErrorKind::InvalidData, why));
    }
    Ok(secret.to_vec())
}

fn now_secs() -> u64 {
    unix_secs(SystemTime::now())
}

/// A JWT's header, when it is a base64url JSON object.
fn header(encoded: &str) -> Option<Map<String, Value>> {
    base64url(encoded).and_then(|h| serde_json::from_slice(&h).ok())
}

/// The `alg` a token's header names.
fn header_alg(token: &str) -> Option<String> {
    let mut header = header(token.split('.').next()?)?;
    match header.remove("alg")? {
        Value::String(alg) => Some(alg),
        _ => None,
    }
}

/// HS256 JSON Web Tokens (RFC 7519) with a shared secret: the algorithm is pinned (a token
/// saying `none` or anything else is refused), `exp` is required, `nbf`, `aud` and `iss`
/// are checked.
struct Jwt {
    secret: Vec<u8>,
    audience: Option<String>,
    issuer: Option<String>,
}

impl Jwt {
    /// The token's principal, when it verifies.
    fn verify(&self, token: &str, now: u64) -> Result<Principal, &'static str> {
        let mut parts = token.split('.');
        let (Some(encoded_header), Some(payload), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err("malformed token");
        };
        let header = header(encoded_header).ok_or("malformed token")?;
        if header.get("alg").and_then(Value::as_str) != Some("HS256") {
            return Err("token algorithm is not HS256");
        }
        refuse_extensions(&header).map_err(|refused| match refused {
            JwsError::Critical(_) => "token has critical header extensions",
            JwsError::Type(_) => "token typ is not an access token",
            _ => "malformed token",
        })?;
        let mac = hmac(&self.secret, format!("{encoded_header}.{payload}").as_bytes());
        let signature = base64url(signature).ok_or("malformed token")?;
        if !same(&mac, &signature) {
            return Err("token signature does not verify");
        }
        let claims: Map<String, Value> = base64url(payload)
            .and_then(|p| serde_json::from_slice(&p).ok())
            .ok_or("malformed token")?;
        check_claims(&claims, now, self.audience.as_deref(), self.issuer.as_deref())?;
        Ok(Principal::from_claims(claims))
    }
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
