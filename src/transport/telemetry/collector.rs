//! The HTTP/1.1 client side of an OTLP export: the collector's address as `--otlp-endpoint`
//! names it, and one POST on a connection of its own.

use std::io::{self, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// How long the exporter waits on a collector: to connect, then for each read or write.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
const IO_TIMEOUT: Duration = Duration::from_secs(2);

/// Where spans go: `--otlp-endpoint http://HOST:PORT/PATH`, plain HTTP to an IP address or
/// `localhost` (no name is resolved, and no TLS: the collector runs beside the server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Endpoint {
    pub(super) addr: SocketAddr,
    /// The `Host` header: the URL's authority as written.
    pub(super) host: String,
    /// The request target: the path (`/v1/traces` when left out) and the query, if any.
    path: String,
}

impl Endpoint {
    pub fn parse(url: &str) -> Result<Endpoint, String> {
        let bad = |why: &str| format!("--otlp-endpoint {url}: {why}");
        let rest = url.strip_prefix("http://").ok_or_else(|| bad("must start with http://"))?;
        // A fragment is never sent (RFC 9110 §7.1); the authority ends where the path or the
        // query begins (RFC 3986 §3.2).
        let rest = rest.split('#').next().unwrap_or_default();
        let (authority, target) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
        let path = match target.starts_with('/') {
            true => target.to_string(),
            false => format!("/v1/traces{target}"),
        };
        let (ip, port) = host_and_port(authority).map_err(|why| bad(&why))?;
        if path.bytes().any(|b| b.is_ascii_control() || b == b' ') {
            return Err(bad("the path must not hold spaces or control characters"));
        }
        Ok(Endpoint { addr: SocketAddr::new(ip, port), host: authority.to_string(), path })
    }
}

/// The address of an authority: `[IPv6]`, an IPv4 address or `localhost`, then `:PORT` or
/// not (4318).
fn host_and_port(authority: &str) -> Result<(IpAddr, u16), String> {
    let (ip, port) = match authority.strip_prefix('[') {
        Some(bracketed) => {
            let (literal, after) =
                bracketed.split_once(']').ok_or("a [ without its closing ]".to_string())?;
            let ip = literal.parse::<Ipv6Addr>().map_err(|_| {
                format!("a host in brackets must be an IPv6 address, not {literal:?}")
            })?;
            let port = match after {
                "" => None,
                after => Some(after.strip_prefix(':').ok_or("after ] comes :PORT or the path")?),
            };
            (IpAddr::V6(ip), port)
        }
        None => {
            let (host, port) = match authority.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            };
            let ip = match host {
                "localhost" => Ipv4Addr::LOCALHOST,
                literal => literal.parse::<Ipv4Addr>().map_err(|_| {
                    format!(
                        "the host must be an IPv4 address, an IPv6 address in brackets or \
                         localhost, not {literal:?}"
                    )
                })?,
            };
            (IpAddr::V4(ip), port)
        }
    };
    Ok((ip, port.map_or(Ok(4318), port_number)?))
}

/// A port: 1 to 5 ASCII digits (no sign, no space), 1 to 65535.
fn port_number(text: &str) -> Result<u16, String> {
    if text.is_empty() || text.len() > 5 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("the port must be 1 to 5 digits, not {text:?}"));
    }
    match text.parse::<u32>() {
        Ok(port @ 1..=65535) => Ok(port as u16),
        _ => Err(format!("the port {text} is out of range (1 to 65535)")),
    }
}

/// One POST of `body` on a connection of its own; the response's status.
pub(super) fn post(endpoint: &Endpoint, body: &str) -> io::Result<u16> {
    let mut stream = TcpStream::connect_timeout(&endpoint.addr, CONNECT_TIMEOUT)?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        endpoint.path,
        endpoint.host,
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    // Read the answer to its end (the collector closes), or its first 64 KiB: closing with
    // bytes unread would reset the connection under the collector's feet. Only the status
    // line, `HTTP/1.1 200 OK`, matters.
    let mut answer = Vec::new();
    stream.take(64 * 1024).read_to_end(&mut answer)?;
    let status = answer
        .strip_prefix(b"HTTP/1.")
        .and_then(|rest| rest.get(2..5))
        .and_then(|code| std::str::from_utf8(code).ok()?.parse().ok());
    status.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "not an HTTP response"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_an_endpoint_url() {
        let endpoint = Endpoint::parse("http://127.0.0.1:4318/v1/traces").unwrap();
        assert_eq!(endpoint.addr, "127.0.0.1:4318".parse().unwrap());
        assert_eq!(
            (endpoint.host.as_str(), endpoint.path.as_str()),
            ("127.0.0.1:4318", "/v1/traces")
        );
        let v6 = Endpoint::parse("http://[::1]:9999/otlp").unwrap();
        assert_eq!((v6.addr, v6.path.as_str()), ("[::1]:9999".parse().unwrap(), "/otlp"));
        let short = Endpoint::parse("http://localhost").unwrap();
        assert_eq!(
            (short.addr, short.path.as_str()),
            ("127.0.0.1:4318".parse().unwrap(), "/v1/traces")
        );
        // A query goes with the path (the default one when left out); a fragment is not sent.
        let query = Endpoint::parse("http://127.0.0.1:4318?x#y").unwrap();
        assert_eq!((query.host.as_str(), query.path.as_str()), ("127.0.0.1:4318", "/v1/traces?x"));
        let top = Endpoint::parse("http://[::1]:65535").unwrap();
        assert_eq!(top.addr, "[::1]:65535".parse().unwrap());
        for (url, said) in [
            ("https://127.0.0.1:4318/v1/traces", "must start with http://"),
            ("http://collector.example:4318/v1/traces", "the host must be an IPv4 address"),
            ("http://127.0.0.1:port/v1/traces", "the port must be 1 to 5 digits, not \"port\""),
            ("http://127.0.0.1:4318/v1/tr aces", "the path must not hold spaces"),
            ("127.0.0.1:4318", "must start with http://"),
            ("http://127.0.0.1:99999/v1/traces", "the port 99999 is out of range (1 to 65535)"),
            ("http://127.0.0.1:0", "the port 0 is out of range"),
            ("http://127.0.0.1:+4318", "the port must be 1 to 5 digits, not \"+4318\""),
            ("http://127.0.0.1:004318", "the port must be 1 to 5 digits"),
            ("http://127.0.0.1:", "the port must be 1 to 5 digits, not \"\""),
            ("http://[127.0.0.1]:4318", "a host in brackets must be an IPv6 address"),
            ("http://[::1:4318", "a [ without its closing ]"),
            ("http://[::1]x/v1", "after ] comes :PORT or the path"),
            ("http://::1/v1/traces", "the host must be an IPv4 address"),
        ] {
            let error = Endpoint::parse(url).unwrap_err();
            assert!(error.starts_with(&format!("--otlp-endpoint {url}: ")), "{error}");
            assert!(error.contains(said), "{url}: {error}");
        }
    }
}
