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
        if let Some(principal) = self.tokens.as_ref().and_then(|tokens| tokens.holder(token)) {
            return Some(Ok(Some(principal)));
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
/// follows a `]` must be a port, or the whole (`[::1]evil.example`) stays, naming no host.
fn strip_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
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
mod tests {
    use std::path::PathBuf;

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

    /// What a verified token names: its subject.
    fn subject(verified: Result<Principal, &'static str>) -> Result<String, &'static str> {
        verified.map(|p| p.subject().to_string())
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
        assert_eq!(subject(jwt.verify(&token(b"s3cret", hs, good), 1000)), Ok("ann".into()));
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
        assert_eq!(subject(jwt.verify(&token(b"s3cret", hs, forever), 1000)), Ok("ann".into()));
        // NumericDates may have a fraction; one that is not a number is no date.
        let fractional =
            r#"{"sub":"ann","exp":2000.5,"nbf":999.5,"aud":"https://mcp.example/mcp"}"#;
        assert_eq!(subject(jwt.verify(&token(b"s3cret", hs, fractional), 1000)), Ok("ann".into()));
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
        // The header is held to what a key set's tokens are: no critical extension, and an
        // access token's type or none.
        let crit = r#"{"alg":"HS256","crit":["x-unknown"],"x-unknown":1}"#;
        assert_eq!(
            jwt.verify(&token(b"s3cret", crit, good), 1000),
            Err("token has critical header extensions")
        );
        let dpop = r#"{"alg":"HS256","typ":"dpop+jwt"}"#;
        assert_eq!(
            jwt.verify(&token(b"s3cret", dpop, good), 1000),
            Err("token typ is not an access token")
        );
        let at = r#"{"alg":"HS256","typ":"at+jwt"}"#;
        assert_eq!(subject(jwt.verify(&token(b"s3cret", at, good), 1000)), Ok("ann".into()));
        let four = format!("{}.x", token(b"s3cret", hs, good));
        assert_eq!(jwt.verify(&four, 1000), Err("malformed token"));
    }

    #[test]
    fn hosts_and_origins() {
        let guard = Guard::new(&HttpOptions {
            allow_hosts: vec!["mcp.example".into()],
            allow_origins: vec!["https://app.example".into()],
            ..HttpOptions::default()
        })
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

    /// A fixture token minted by npm jose (`fixtures/jwt/tokens.json`), valid until 2100.
    fn minted(name: &str) -> String {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jwt/tokens.json");
        let doc: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
        let case = doc["tokens"].as_array().unwrap().iter().find(|c| c["name"] == name);
        case.unwrap()["token"].as_str().unwrap().to_string()
    }

    /// An HS256 secret of the 32 bytes RFC 7518 asks at least.
    const SECRET: &[u8] = b"s3cret-of-at-least-thirty-two-bytes";

    /// A guard with every kind of authentication: a static token, an HS256 secret, the
    /// fixtures' key set, and a required scope.
    fn guard_of_all_kinds(dir: &Path) -> Guard {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("tokens"), "ops static-token\n").unwrap();
        std::fs::write(dir.join("secret"), [SECRET, b"\n"].concat()).unwrap();
        let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jwt");
        Guard::new(&HttpOptions {
            auth_token_file: Some(dir.join("tokens")),
            jwt_secret_file: Some(dir.join("secret")),
            jwks_file: Some(fixtures.join("jwks.json")),
            jwt_audience: Some("https://mcp.example/mcp".into()),
            jwt_issuer: Some("https://issuer.example".into()),
            required_scopes: vec!["mcp:write".into()],
            resource_metadata_url: Some("https://mcp.example/.well-known/x".into()),
            ..HttpOptions::default()
        })
        .unwrap()
    }

    #[test]
    fn the_header_routes_a_jwt_and_scopes_are_required_of_jwts_alone() {
        let dir = std::env::temp_dir().join(format!("baremcp-guard-{}", std::process::id()));
        let guard = guard_of_all_kinds(&dir);
        let bearer = |token: &str| guard.authorize(Some(&format!("Bearer {token}")));
        let hs = r#"{"alg":"HS256"}"#;
        let claims = |scope: &str| {
            let exp = now_secs() + 600;
            format!(
                r#"{{"sub":"ann","iss":"https://issuer.example","aud":"https://mcp.example/mcp","exp":{exp},"scope":"{scope}"}}"#
            )
        };
        // A JWKS-signed token and an HS256 one, each to its verifier.
        let rs256 = bearer(&minted("rs256")).unwrap().unwrap();
        assert_eq!((rs256.subject(), rs256.client_id()), ("user-ann", Some("client-1")));
        assert_eq!(rs256.scopes(), ["mcp:read", "mcp:write"]);
        let hs256 = bearer(&token(SECRET, hs, &claims("mcp:write"))).unwrap().unwrap();
        assert_eq!((hs256.subject(), hs256.issuer()), ("ann", Some("https://issuer.example")));
        // A static token carries no scope and needs none.
        let ops = bearer("static-token").unwrap().unwrap();
        assert_eq!((ops.subject(), ops.issuer(), ops.scopes().len()), ("ops", None, 0));

        let invalid = |why: &str| Err(Denied::Invalid(why.into()));
        assert_eq!(
            bearer(&token(b"other", hs, &claims("mcp:write"))),
            invalid("token signature does not verify")
        );
        // HMAC keyed with the public key goes to the secret, which it was not signed with.
        assert_eq!(bearer(&minted("hs256_public_pem")), invalid("token signature does not verify"));
        assert_eq!(bearer(&minted("alg_none")), invalid("token is unsigned (alg none)"));
        assert_eq!(bearer(&minted("foreign_issuer")), invalid("token issuer is not trusted"));
        assert_eq!(bearer("other-token"), invalid("unknown token"));
        assert_eq!(guard.authorize(None), Err(Denied::Missing("no bearer token")));

        // Valid, but without the scope: 403, naming every required scope.
        let scoped = bearer(&minted("es256_scp_array")).unwrap_err();
        assert_eq!(scoped, Denied::Scope("mcp:write".into()));
        assert_eq!(
            (scoped.status(), scoped.to_string()),
            (403, "token lacks scope mcp:write".into())
        );
        assert_eq!(
            bearer(&token(SECRET, hs, &claims("mcp:read"))),
            Err(Denied::Scope("mcp:write".into()))
        );
        let metadata = r#"resource_metadata="https://mcp.example/.well-known/x""#;
        assert_eq!(
            guard.challenge(&scoped),
            format!(
                r#"Bearer realm="baremcp", error="insufficient_scope", scope="mcp:write", {metadata}"#
            )
        );
        // 401s name the scope too, so a client asks for it the first time.
        let missing = guard.authorize(None).unwrap_err();
        assert_eq!(
            guard.challenge(&missing),
            format!(r#"Bearer realm="baremcp", scope="mcp:write", {metadata}"#)
        );
        assert_eq!((missing.status(), missing.message()), (401, "unauthorized"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_verified_token_is_let_in_again_only_while_its_key_is_in_the_file() {
        let dir = std::env::temp_dir().join(format!("baremcp-guard-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jwt");
        let all: Value =
            serde_json::from_slice(&std::fs::read(fixtures.join("jwks.json")).unwrap()).unwrap();
        let file = dir.join("jwks.json");
        std::fs::write(&file, all.to_string()).unwrap();
        let guard = Guard::new(&HttpOptions {
            jwks_file: Some(file.clone()),
            jwt_audience: Some("https://mcp.example/mcp".into()),
            ..HttpOptions::default()
        })
        .unwrap();
        let bearer = |token: &str| guard.authorize(Some(&format!("Bearer {token}")));
        let known = |token: &str| guard.authorize_known(Some(&format!("Bearer {token}")));
        let (rs256, es256) = (minted("rs256"), minted("es256_scp_array"));
        // What the loop asks: a signature to check is not its to check.
        assert!(known(&rs256).is_none());
        assert_eq!(guard.authorize_known(None), Some(Err(Denied::Missing("no bearer token"))));
        let first = bearer(&rs256).unwrap().unwrap();
        // Taken from the verified tokens: the same principal, not a second one like it.
        assert!(Arc::ptr_eq(&first, &bearer(&rs256).unwrap().unwrap()));
        assert!(Arc::ptr_eq(&first, &known(&rs256).unwrap().unwrap().unwrap()));
        assert!(bearer(&es256).is_ok());
        // The RSA key leaves the file: its token is refused at once (a reload, as SIGHUP or
        // the file's new stamp bring), while the other key's still verifies.
        let mut keys = all.clone();
        keys["keys"].as_array_mut().unwrap().retain(|key| key["kid"] != "rsa-1");
        std::fs::write(&file, keys.to_string()).unwrap();
        guard.jwks.as_ref().unwrap().reread();
        assert!(known(&rs256).is_none());
        let refused = bearer(&rs256).unwrap_err();
        assert!(matches!(refused, Denied::Invalid(_)), "{refused:?}");
        assert!(bearer(&es256).is_ok());
        // A new file the loop sees is not read there (a big key set takes seconds): the
        // request goes to its thread, which reads it.
        let jwks = guard.jwks.as_ref().unwrap();
        let before = jwks.generation();
        std::fs::write(&file, all.to_string()).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(1100));
        assert!(known(&es256).is_none(), "a read due is its thread's");
        assert_eq!(jwks.generation_if_read(), None);
        assert!(bearer(&rs256).is_ok(), "read on the thread: the RSA key is back");
        assert_eq!(jwks.generation_if_read(), Some(before + 1));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn flags_that_cannot_work_stop_the_start() {
        let refused = |options: HttpOptions| Guard::new(&options).err().unwrap().to_string();
        let jwks = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jwt/jwks.json");
        let without_audience =
            HttpOptions { jwks_file: Some(jwks.clone()), ..HttpOptions::default() };
        assert!(refused(without_audience).starts_with("--jwks-file needs --jwt-audience: "));
        let missing = HttpOptions {
            jwks_file: Some("/nonexistent/jwks.json".into()),
            jwt_audience: Some("a".into()),
            ..HttpOptions::default()
        };
        assert!(refused(missing).starts_with("--jwks-file /nonexistent/jwks.json: "));
        let scope_alone = HttpOptions {
            required_scopes: vec!["mcp:tools".into()],
            auth_token_file: Some("/nonexistent/tokens".into()),
            ..HttpOptions::default()
        };
        assert_eq!(
            refused(scope_alone),
            "--required-scope is a JWT's: give --jwks-file or --jwt-secret-file"
        );
        let two_in_one = HttpOptions {
            required_scopes: vec!["a b".into()],
            jwks_file: Some(jwks),
            jwt_audience: Some("a".into()),
            ..HttpOptions::default()
        };
        assert!(refused(two_in_one).starts_with("--required-scope \"a b\": "));
        let secret = HttpOptions {
            jwt_secret_file: Some("/nonexistent/s".into()),
            ..HttpOptions::default()
        };
        assert!(refused(secret).starts_with("--jwt-secret-file /nonexistent/s: "));
    }
}
