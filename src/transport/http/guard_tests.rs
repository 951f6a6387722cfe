//! The guard's tests: tokens, JWTs and their keys, scopes and challenges, as requests meet them.

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
    let fractional = r#"{"sub":"ann","exp":2000.5,"nbf":999.5,"aud":"https://mcp.example/mcp"}"#;
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
    for ok in
        ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]:9", "mcp.example:443", "app.example"]
    {
        assert!(guard.host_allowed(ok), "{ok}");
    }
    for ok in ["[::1]", "[::1]:9", "LOCALHOST"] {
        assert!(guard.host_allowed(ok), "{ok}");
    }
    // An empty port is a port (RFC 3986 §3.2.3: `port = *DIGIT`): the name alone is judged.
    for ok in ["localhost:", "[::1]:", "127.0.0.1:", "mcp.example:"] {
        assert!(guard.host_allowed(ok), "{ok}");
    }
    for bad in
        ["evil.example.com", "evil.example.com:8080", "127.0.0.1.evil.example", "localhost.evil"]
    {
        assert!(!guard.host_allowed(bad), "{bad}");
    }
    // After a bracketed literal comes nothing or a port: `[::1]evil.com` is not loopback.
    for bad in
        ["[::1]evil.com", "[::1].evil.com", "[::1]:9x", "[::1", "localhost.evil.com", "evil.com:"]
    {
        assert!(!guard.host_allowed(bad), "{bad}");
    }
    for bad in ["127.0.0.1evil", "localhost:80x", "localhost::", "::1"] {
        assert!(!guard.host_allowed(bad), "{bad}");
    }
    for ok in
        ["http://localhost:3000", "https://127.0.0.1", "http://[::1]:5", "https://app.example/"]
    {
        assert!(guard.origin_allowed(ok), "{ok}");
    }
    for bad in ["null", "http://evil.example.com", "file://localhost", "https://app.example:8443"] {
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
    assert_eq!((scoped.status(), scoped.to_string()), (403, "token lacks scope mcp:write".into()));
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

/// The loop reads no token file: one due to be read again sends the request to its thread,
/// which reads it.
#[test]
fn the_loop_leaves_a_changed_token_file_to_a_thread() {
    let dir = std::env::temp_dir().join(format!("baremcp-guard-tokens-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("tokens");
    std::fs::write(&file, "alice old-token\n").unwrap();
    let options = HttpOptions { auth_token_file: Some(file.clone()), ..HttpOptions::default() };
    let guard = Guard::new(&options).unwrap();
    let known = |token: &str| guard.authorize_known(Some(&format!("Bearer {token}")));
    assert!(matches!(known("old-token"), Some(Ok(Some(_)))));
    std::fs::write(&file, "alice new-token-written\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    assert!(known("old-token").is_none(), "a read due is its thread's");
    assert!(known("new-token-written").is_none(), "not read on the loop");
    assert!(guard.authorize(Some("Bearer new-token-written")).is_ok());
    assert!(guard.authorize(Some("Bearer old-token")).is_err(), "read: the old token is gone");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn flags_that_cannot_work_stop_the_start() {
    let refused = |options: HttpOptions| Guard::new(&options).err().unwrap().to_string();
    let jwks = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jwt/jwks.json");
    let without_audience = HttpOptions { jwks_file: Some(jwks.clone()), ..HttpOptions::default() };
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
    let secret =
        HttpOptions { jwt_secret_file: Some("/nonexistent/s".into()), ..HttpOptions::default() };
    assert!(refused(secret).starts_with("--jwt-secret-file /nonexistent/s: "));
}
