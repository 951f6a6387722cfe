//! JWTs signed by an authorization server's keys (`--jwks-file`), end to end over HTTP: the
//! tokens npm jose minted (`fixtures/jwt/`, valid until 2100) accepted or refused through the
//! binary, `403 insufficient_scope`, a rotated key set in force without a restart, and the
//! caller as handlers and hooks see it.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use baremcp::{ErrorCode, ErrorObject, HttpOptions, Tool, ToolOutput};
use serde_json::{Value, json};

use crate::http_harness::{INITIALIZE, Killed, modern, post, raw, spawn_http, start_with};

const AUDIENCE: &str = "https://mcp.example/mcp";
const ISSUER: &str = "https://issuer.example";
const METADATA: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/jwt").join(name)
}

/// The minted tokens, each with its name and the verdict the verifier must reach.
fn minted() -> Vec<Value> {
    let doc: Value =
        serde_json::from_slice(&std::fs::read(fixture("tokens.json")).unwrap()).unwrap();
    doc["tokens"].as_array().unwrap().clone()
}

fn token(name: &str) -> String {
    let tokens = minted();
    let case = tokens.iter().find(|case| case["name"] == name).unwrap();
    case["token"].as_str().unwrap().to_string()
}

/// Writes the fixture key set holding only the keys with these kids to `path`, aside and
/// renamed, as an operator's cron does.
fn key_set(path: &Path, kids: &[&str]) {
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(fixture("jwks.json")).unwrap()).unwrap();
    doc["keys"].as_array_mut().unwrap().retain(|k| kids.iter().any(|kid| k["kid"] == *kid));
    let aside = path.with_extension("tmp");
    std::fs::write(&aside, doc.to_string()).unwrap();
    std::fs::rename(&aside, path).unwrap();
}

/// A 2026-07-28 `tools/list` with `Authorization: Bearer token`.
fn list_with(addr: std::net::SocketAddr, token: &str) -> crate::http_harness::Reply {
    let auth = format!("Authorization: Bearer {token}");
    let headers = ["MCP-Protocol-Version: 2026-07-28", "Mcp-Method: tools/list", &auth];
    post(addr, &modern("tools/list", json!({})), &headers)
}

#[test]
fn every_minted_token_gets_its_verdict_through_the_binary() {
    let dir = crate::scratch("http-jwks-verdicts");
    let jwks = dir.join("jwks.json");
    std::fs::copy(fixture("jwks.json"), &jwks).unwrap();
    let args = [
        "--jwks-file",
        jwks.to_str().unwrap(),
        "--jwt-audience",
        AUDIENCE,
        "--jwt-issuer",
        ISSUER,
        "--required-scope",
        "mcp:write",
        "--resource-metadata-url",
        METADATA,
        "--authorization-server",
        ISSUER,
    ];
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    let (child, addr) = spawn_http(env!("CARGO_BIN_EXE_baremcp"), &args);
    let _child = Killed(child);
    let mut accepted = Vec::new();
    for case in minted() {
        let (name, expect) = (case["name"].as_str().unwrap(), case["expect"].as_str().unwrap());
        let reply = list_with(addr, case["token"].as_str().unwrap());
        let challenge = reply.header("www-authenticate").unwrap_or_default().to_string();
        match (name, expect) {
            // Valid, but granted mcp:read alone.
            ("es256_scp_array", _) => {
                assert_eq!(reply.status, 403, "{name}: {reply:?}");
                assert_eq!(
                    challenge,
                    format!(
                        r#"Bearer realm="baremcp", error="insufficient_scope", scope="mcp:write", resource_metadata="{METADATA}""#
                    )
                );
                assert_eq!(reply.json()["error"]["message"], "insufficient scope");
            }
            (_, "accept") => {
                assert_eq!(reply.status, 200, "{name}: {reply:?}");
                assert!(reply.json()["result"]["tools"].is_array(), "{name}");
                accepted.push(name.to_string());
            }
            // Longer than a request head may be: refused before any token is read.
            ("oversized", _) => assert_eq!(reply.status, 431, "{name}"),
            _ => {
                assert_eq!(reply.status, 401, "{name} ({expect}): {reply:?}");
                assert!(challenge.contains(r#"error="invalid_token""#), "{name}: {challenge}");
            }
        }
    }
    // Each algorithm (RS256 at 2048 and 4096 bits, PS256, ES256, EdDSA), with and without kid.
    let want = ["rs256", "rs256_4096", "ps256", "eddsa_at_jwt", "es256_no_kid", "rs256_no_kid"];
    assert_eq!(accepted, want);
    // Without a token, the challenge names the scope to ask for; the metadata lists it.
    let bare = list_with(addr, "").header("www-authenticate").unwrap().to_string();
    assert!(bare.contains(r#"scope="mcp:write""#) && !bare.contains("error="), "{bare}");
    let request =
        format!("GET /.well-known/oauth-protected-resource/mcp HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    let metadata = raw(addr, request.as_bytes()).unwrap().json();
    assert_eq!(metadata["scopes_supported"], json!(["mcp:write"]));
    assert_eq!(metadata["authorization_servers"], json!([ISSUER]));
}

#[test]
fn a_rotated_key_set_is_in_force_without_a_restart() {
    let dir = crate::scratch("http-jwks-rotation");
    let jwks = dir.join("jwks.json");
    key_set(&jwks, &["rsa-1"]);
    let args =
        ["--jwks-file".as_ref(), jwks.as_os_str(), "--jwt-audience".as_ref(), AUDIENCE.as_ref()];
    let (child, addr) = spawn_http(env!("CARGO_BIN_EXE_baremcp"), &args);
    let child = Killed(child);
    let (rsa, ec) = (token("rs256"), token("es256_no_kid"));
    assert_eq!(list_with(addr, &rsa).status, 200);
    assert_eq!(list_with(addr, &ec).status, 401);

    // The provider rotates to the EC key: the new file is noticed by itself, within seconds.
    key_set(&jwks, &["ec-1"]);
    let started = Instant::now();
    while list_with(addr, &ec).status != 200 {
        assert!(started.elapsed() < Duration::from_secs(10), "the new key set is not in force");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(list_with(addr, &rsa).status, 401, "the old key is gone");

    // SIGHUP reads it at once, though the file was looked at a moment ago.
    key_set(&jwks, &["rsa-1"]);
    let pid = child.0.id().to_string();
    std::process::Command::new("kill").args(["-HUP", &pid]).status().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(list_with(addr, &rsa).status, 200);
    assert_eq!(list_with(addr, &ec).status, 401);
}

/// A server whose `whoami` tool answers what `Context::principal()` says, and whose
/// `on_request` hook refuses a static token's calls to it.
fn whoami() -> baremcp::Server {
    let tool = Tool::new("whoami", "Who is calling", json!({"type": "object"}), |_, cx| {
        let caller = cx.principal().map(|p| {
            json!({
                "subject": p.subject(),
                "issuer": p.issuer(),
                "scopes": p.scopes(),
                "client_id": p.client_id(),
                "aud": p.claims().get("aud"),
            })
        });
        Ok(ToolOutput::text(json!(caller).to_string()))
    });
    let mut server =
        baremcp::Server::new("whoami", "1.0.0").on_request(|request| match request.principal {
            Some(caller) if caller.issuer().is_none() && request.method == "tools/call" => {
                Err(ErrorObject::new(
                    ErrorCode::INVALID_REQUEST,
                    format!("{} may not call", caller.subject()),
                ))
            }
            _ => Ok(()),
        });
    server.add_tool(tool).unwrap();
    server
}

#[test]
fn handlers_and_hooks_see_the_caller_and_sessions_follow_it() {
    let dir = crate::scratch("http-jwks-caller");
    std::fs::write(dir.join("tokens"), "ops static-token\n").unwrap();
    let server = start_with(
        HttpOptions {
            auth_token_file: Some(dir.join("tokens")),
            jwks_file: Some(fixture("jwks.json")),
            jwt_audience: Some(AUDIENCE.into()),
            jwt_issuer: Some(ISSUER.into()),
            ..HttpOptions::default()
        },
        whoami,
    );
    let addr = server.addr;
    let call = |auth: &str| {
        let headers = [
            "MCP-Protocol-Version: 2026-07-28",
            "Mcp-Method: tools/call",
            "Mcp-Name: whoami",
            auth,
        ];
        let reply =
            post(addr, &modern("tools/call", json!({"name": "whoami", "arguments": {}})), &headers);
        reply.json()
    };
    let entra = call(&format!("Authorization: Bearer {}", token("eddsa_at_jwt")));
    let text = entra["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(text).unwrap(),
        json!({
            "subject": "user-ann",
            "issuer": ISSUER,
            "scopes": ["mcp:write"],
            "client_id": "client-2",
            "aud": [AUDIENCE, "https://x"],
        })
    );
    let refused = call("Authorization: Bearer static-token");
    assert_eq!(refused["error"]["message"], "ops may not call", "{refused}");

    // A legacy session follows its caller: another token of the same subject and issuer (as a
    // refreshed one is) may use it; the static token may not.
    let as_rsa = format!("Authorization: Bearer {}", token("rs256"));
    let opened = post(addr, INITIALIZE, &[&as_rsa]);
    assert_eq!(opened.status, 200, "{opened:?}");
    let session = format!("Mcp-Session-Id: {}", opened.header("mcp-session-id").unwrap());
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let as_ed = format!("Authorization: Bearer {}", token("eddsa_at_jwt"));
    let pinged = post(addr, ping, &[&as_ed, &session]);
    assert_eq!((pinged.status, &pinged.json()["result"]), (200, &json!({})), "{pinged:?}");
    assert_eq!(post(addr, ping, &["Authorization: Bearer static-token", &session]).status, 404);
}

#[test]
fn a_key_set_without_an_audience_does_not_start() {
    let jwks = fixture("jwks.json");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_baremcp"))
        .args(["--http", "127.0.0.1:0", "--jwks-file"])
        .arg(&jwks)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.starts_with("baremcp: --jwks-file needs --jwt-audience: "), "{said}");
}
