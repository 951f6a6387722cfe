//! Authentication: bearer tokens from a file (re-read when it changes, or on SIGHUP), HS256
//! JWTs, RFC 9728 metadata, and no non-loopback address without it.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use baremcp::HttpOptions;
use serde_json::{Value, json};

use crate::http_harness::{everything, modern, post, raw, spawn_http, start};

/// Unpadded base64url, as JWTs write their parts.
fn b64url(bytes: &[u8]) -> String {
    baremcp::encoding::base64(bytes).trim_end_matches('=').replace('+', "-").replace('/', "_")
}

/// The HS256 secret: 32 bytes at least, with spaces around it that are part of it.
const KEY: &[u8] = b"  a jwt secret of thirty-two bytes or more ";

#[test]
fn bearer_tokens_and_jwts_guard_the_endpoint() {
    let dir = crate::scratch("http-auth");
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "# comment\nfirst-token\n").unwrap();
    let secret = dir.join("secret");
    // The secret is the file's bytes, spaces and all, less one final line ending.
    std::fs::write(&secret, [KEY, b"\r\n"].concat()).unwrap();
    let server = start(HttpOptions {
        auth_token_file: Some(tokens.clone()),
        jwt_secret_file: Some(secret),
        jwt_audience: Some("https://mcp.example/mcp".into()),
        resource_metadata_url: Some(
            "https://mcp.example/.well-known/oauth-protected-resource/mcp".into(),
        ),
        authorization_servers: vec!["https://auth.example".into()],
        ..HttpOptions::default()
    });
    let addr = server.addr;
    let list = modern("tools/list", json!({}));
    let v = "MCP-Protocol-Version: 2026-07-28";
    let m = "Mcp-Method: tools/list";
    let none = post(addr, &list, &[v, m]);
    assert_eq!(none.status, 401);
    let challenge = none.header("www-authenticate").unwrap();
    assert!(
        challenge.starts_with("Bearer ") && !challenge.contains("invalid_token"),
        "{challenge}"
    );
    assert!(challenge.contains(
        r#"resource_metadata="https://mcp.example/.well-known/oauth-protected-resource/mcp""#
    ));
    let wrong = post(addr, &list, &[v, m, "Authorization: Bearer second-token"]);
    assert!(wrong.header("www-authenticate").unwrap().contains(r#"error="invalid_token""#));
    assert_eq!(post(addr, &list, &[v, m, "Authorization: Bearer first-token"]).status, 200);
    // The file is read again when it changes.
    std::thread::sleep(Duration::from_millis(1100));
    std::fs::write(&tokens, "second-token\n").unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(post(addr, &list, &[v, m, "Authorization: Bearer second-token"]).status, 200);
    assert_eq!(post(addr, &list, &[v, m, "Authorization: Bearer first-token"]).status, 401);
    // HS256 JWTs: good, expired, wrong audience, alg none.
    let jwt = |claims: Value, alg: &str, key: &[u8]| {
        let signing = format!(
            "{}.{}",
            b64url(json!({"alg": alg}).to_string().as_bytes()),
            b64url(claims.to_string().as_bytes())
        );
        let mac = baremcp::__private::hs256(key, signing.as_bytes());
        format!("Authorization: Bearer {signing}.{}", b64url(&mac))
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let aud = "https://mcp.example/mcp";
    let good = jwt(json!({"sub": "ann", "exp": now + 600, "aud": aud}), "HS256", KEY);
    assert_eq!(post(addr, &list, &[v, m, &good]).status, 200);
    for bad in [
        jwt(json!({"exp": now - 600, "aud": aud}), "HS256", KEY),
        jwt(json!({"exp": now + 600, "aud": "https://other/mcp"}), "HS256", KEY),
        jwt(json!({"exp": now + 600, "aud": aud}), "none", KEY),
        jwt(json!({"exp": now + 600, "aud": aud}), "HS256", b"other-secret"),
        jwt(json!({"exp": now + 600, "aud": aud}), "HS256", KEY.trim_ascii()),
    ] {
        assert_eq!(post(addr, &list, &[v, m, &bad]).status, 401, "{bad}");
    }
    // RFC 9728 metadata, served without a token.
    let metadata = raw(
        addr,
        format!("GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\n\r\n")
            .as_bytes(),
    )
    .unwrap();
    assert_eq!(metadata.status, 200);
    assert_eq!(metadata.json()["resource"], "https://mcp.example/mcp");
    assert_eq!(metadata.json()["authorization_servers"], json!(["https://auth.example"]));
    // Public: a page of any origin reads it, but its Host is checked still.
    let get = |headers: &str| {
        let path = "/.well-known/oauth-protected-resource/mcp";
        raw(addr, format!("GET {path} HTTP/1.1\r\n{headers}\r\n").as_bytes()).unwrap()
    };
    let foreign = get(&format!("Host: {addr}\r\nOrigin: https://page.example\r\n"));
    assert_eq!(foreign.status, 200);
    assert_eq!(foreign.header("access-control-allow-origin"), Some("*"));
    assert_eq!(get("Host: evil.example\r\nOrigin: https://page.example\r\n").status, 403);
}

#[test]
fn a_non_loopback_address_needs_authentication() {
    let server = everything();
    let options = HttpOptions { listen: vec!["0.0.0.0:0".into()], ..HttpOptions::default() };
    let error = server.serve_http(&options).unwrap_err();
    assert!(
        error.to_string().contains("refusing to listen on 0.0.0.0:0 without authentication"),
        "{error}"
    );
}

/// Why serving with `options` does not start; a server that starts is stopped at once.
fn refusal(options: &HttpOptions) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let stop = Arc::new(AtomicBool::new(true));
    let options = HttpOptions { drain_secs: 0, ..options.clone() };
    match everything().serve_http_on(vec![listener], &options, stop) {
        Ok(()) => "started".to_string(),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_jwt_secret_shorter_than_32_bytes_stops_the_start() {
    let dir = crate::scratch("http-short-secret");
    let secret = dir.join("secret");
    // A line ending is not part of the secret: 31 bytes and a newline are 31.
    for short in ["", " \n", "\r\n", "x", "0123456789012345678901234567890\n"] {
        std::fs::write(&secret, short).unwrap();
        let options =
            HttpOptions { jwt_secret_file: Some(secret.clone()), ..HttpOptions::default() };
        let error = refusal(&options);
        assert!(error.contains("HS256 needs at least 32 (RFC 7518 §3.2)"), "{short:?}: {error}");
    }
}

#[test]
fn a_token_file_renamed_over_or_deleted_is_noticed() {
    let dir = crate::scratch("http-token-rotation");
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "token-aaa\n").unwrap();
    let server = start(HttpOptions { auth_token_file: Some(tokens.clone()), ..Default::default() });
    let list = modern("tools/list", json!({}));
    let call = |token: &str| {
        let auth = format!("Authorization: Bearer {token}");
        let v = "MCP-Protocol-Version: 2026-07-28";
        post(server.addr, &list, &[v, "Mcp-Method: tools/list", &auth]).status
    };
    assert_eq!(call("token-aaa"), 200);
    // A rotation by rename, the new file of the same size and modification time (`cp -p`,
    // `touch -r`): its inode tells it apart.
    let stamp = std::fs::metadata(&tokens).unwrap().modified().unwrap();
    let new = dir.join("tokens.new");
    std::fs::write(&new, "token-bbb\n").unwrap();
    std::fs::File::options().write(true).open(&new).unwrap().set_modified(stamp).unwrap();
    std::fs::rename(&new, &tokens).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(call("token-bbb"), 200);
    assert_eq!(call("token-aaa"), 401);
    // A file deleted holds no tokens: the last ones are revoked, until it is back.
    std::fs::remove_file(&tokens).unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(call("token-bbb"), 401);
    std::fs::write(&tokens, "token-ccc\n").unwrap();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(call("token-ccc"), 200);
}

#[test]
fn metadata_flags_that_cannot_work_stop_the_start() {
    let url = "https://mcp.example/.well-known/oauth-protected-resource/mcp";
    let metadata = |url: &str, servers: &[&str]| HttpOptions {
        resource_metadata_url: (!url.is_empty()).then(|| url.to_string()),
        authorization_servers: servers.iter().map(|s| s.to_string()).collect(),
        ..HttpOptions::default()
    };
    assert_eq!(refusal(&metadata(url, &["https://auth.example"])), "started");
    // The metadata must name an authorization server, and a server is listed nowhere else.
    assert!(refusal(&metadata(url, &[])).starts_with("--resource-metadata-url needs "));
    let alone = refusal(&metadata("", &["https://auth.example"]));
    assert!(alone.starts_with("--authorization-server is listed in the RFC 9728 metadata"));
    // A URL no client can fetch, or that would break the quoted challenge, is refused.
    for bad in [
        "/.well-known/oauth-protected-resource",
        "mcp.example/.well-known/oauth-protected-resource",
        "ftp://mcp.example/.well-known/oauth-protected-resource",
        "https:///.well-known/oauth-protected-resource",
        "https://mcp.example/.well-known/x\", error=\"injected",
        "https://mcp.example/.well-known/x y",
    ] {
        let why = refusal(&metadata(bad, &["https://auth.example"]));
        assert!(
            why.starts_with(&format!("--resource-metadata-url {bad:?}: an absolute ")),
            "{why}"
        );
    }
    let relative = refusal(&metadata(url, &["https://auth.example", "/issuer"]));
    assert!(relative.starts_with("--authorization-server \"/issuer\": an absolute "));
}

#[test]
fn what_a_jwt_must_say_needs_a_jwt() {
    for flag in ["--jwt-audience", "--jwt-issuer"] {
        let value = Some("https://mcp.example".to_string());
        let options = match flag {
            "--jwt-audience" => HttpOptions { jwt_audience: value, ..HttpOptions::default() },
            _ => HttpOptions { jwt_issuer: value, ..HttpOptions::default() },
        };
        let why = refusal(&options);
        assert_eq!(why, format!("{flag} is a JWT's: give --jwks-file or --jwt-secret-file"));
    }
}

#[test]
fn sighup_rereads_the_token_file_at_once() {
    let dir = crate::scratch("http-sighup");
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, "token-aaa\n").unwrap();
    let (mut child, addr) =
        spawn_http(env!("CARGO_BIN_EXE_baremcp"), &["--auth-token-file".as_ref(), tokens.as_ref()]);
    let list = modern("tools/list", json!({}));
    let call = |token: &str| {
        let auth = format!("Authorization: Bearer {token}");
        post(addr, &list, &["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list", &auth])
            .status
    };
    assert_eq!(call("token-aaa"), 200);
    // Looked at a moment ago, the file would not be looked at again for a second: SIGHUP
    // has it read now. (Any write changes its stamp: its status-change time at least.)
    std::fs::write(&tokens, "token-bbb\n").unwrap();
    std::process::Command::new("kill").args(["-HUP", &child.id().to_string()]).status().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(call("token-bbb"), 200);
    assert_eq!(call("token-aaa"), 401);
    child.kill().unwrap();
    child.wait().unwrap();
}
