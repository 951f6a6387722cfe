//! The HTTP/1.1 client side of an OTLP export: the collector's address as `--otlp-endpoint`
//! names it, and one POST on a connection of its own, read back to the collector's final
//! answer (its interim `1xx` answers skipped, its body read by its framing).

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::time::Duration;

/// How long the exporter waits on a collector: to connect, then for each read or write.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// The most of a collector's answer (its heads and body) read; the rest is left unread.
const MAX_ANSWER: u64 = 64 * 1024;

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

/// One POST of `body` on a connection of its own: the status of the collector's final answer,
/// or why there is none, said as a log line says it.
pub(super) fn post(endpoint: &Endpoint, body: &str) -> Result<u16, String> {
    // A timeout shows as `WouldBlock` ("Resource temporarily unavailable") on Unix: named.
    let failed = |doing: &str, e: io::Error| match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
            let waited = if doing == "connecting" { CONNECT_TIMEOUT } else { IO_TIMEOUT };
            format!("timed out {doing} (after {} s)", waited.as_secs())
        }
        _ => format!("{doing}: {e}"),
    };
    let mut stream = TcpStream::connect_timeout(&endpoint.addr, CONNECT_TIMEOUT)
        .map_err(|e| failed("connecting", e))?;
    let timeouts = stream
        .set_write_timeout(Some(IO_TIMEOUT))
        .and_then(|()| stream.set_read_timeout(Some(IO_TIMEOUT)));
    timeouts.map_err(|e| failed("connecting", e))?;
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        endpoint.path,
        endpoint.host,
        body.len()
    );
    let sent = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes()));
    sent.map_err(|e| failed("sending the spans", e))?;
    let mut answer = BufReader::new(stream.take(MAX_ANSWER));
    final_status(&mut answer).map_err(|e| failed("waiting for the collector's answer", e))
}

/// The status of the final answer in `answer`: interim `1xx` ones are skipped, as a client
/// must (RFC 9110 §15.2). Its body is then read as its framing says (not to the connection's
/// end, which a collector may keep open): closing with bytes unread would reset the
/// connection under the collector's feet. Only the status matters.
fn final_status(answer: &mut impl BufRead) -> io::Result<u16> {
    let not_http = || io::Error::new(io::ErrorKind::InvalidData, "not an HTTP response");
    let mut line = Vec::new();
    loop {
        if read_line(answer, &mut line)? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed without an answer"));
        }
        let status: u16 = line
            .strip_prefix(b"HTTP/1.")
            .and_then(|rest| std::str::from_utf8(rest.get(2..5)?).ok()?.parse().ok())
            .ok_or_else(not_http)?;
        // Its fields: only how the body is framed matters.
        let (mut chunked, mut length) = (false, None);
        loop {
            if read_line(answer, &mut line)? == 0 {
                return Err(not_http());
            }
            let text = String::from_utf8_lossy(&line);
            let Some((name, value)) = text.split_once(':') else {
                if text.trim().is_empty() {
                    break;
                }
                return Err(not_http());
            };
            if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked |= value.to_ascii_lowercase().contains("chunked");
            } else if name.eq_ignore_ascii_case("content-length") {
                length = value.trim().parse::<u64>().ok();
            }
        }
        // `101 Switching Protocols` ends the HTTP exchange: it is final here (not asked for).
        if (100..200).contains(&status) && status != 101 {
            continue;
        }
        let _ = match (status, chunked, length) {
            (204 | 304, _, _) => Ok(()),
            (_, true, _) => skip_chunks(answer, &mut line),
            (_, false, Some(length)) => skip(answer, length),
            (_, false, None) => skip(answer, u64::MAX),
        };
        return Ok(status);
    }
}

/// Reads one line of `answer` into `line` (emptied first), its end included; 0 at the end.
fn read_line(answer: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<usize> {
    line.clear();
    answer.read_until(b'\n', line)
}

/// Reads and drops `n` bytes of `answer`, or what is left of it if fewer.
fn skip(answer: &mut impl BufRead, mut n: u64) -> io::Result<()> {
    while n > 0 {
        let available = answer.fill_buf()?.len();
        if available == 0 {
            break;
        }
        let taken = usize::try_from(n).map_or(available, |n| n.min(available));
        answer.consume(taken);
        n -= taken as u64;
    }
    Ok(())
}

/// Reads a chunked body to its last chunk and trailers (RFC 9112 §7.1).
fn skip_chunks(answer: &mut impl BufRead, line: &mut Vec<u8>) -> io::Result<()> {
    loop {
        read_line(answer, line)?;
        let text = String::from_utf8_lossy(line);
        let size = text.split(';').next().map(str::trim).unwrap_or_default();
        match u64::from_str_radix(size, 16) {
            Ok(0) => break,
            // The chunk and the CRLF after it.
            Ok(size) => skip(answer, size.saturating_add(2))?,
            Err(_) => return Ok(()),
        }
    }
    while read_line(answer, line)? > 0 && !line.trim_ascii().is_empty() {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::net::TcpListener;
    use std::time::Instant;

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

    /// A collector on loopback that takes one request and answers `answer`, then keeps the
    /// connection open for `hold` (`None`: never answers, and holds it 5 s).
    fn sink(answer: Option<&'static [u8]>, hold: Duration) -> Endpoint {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1/traces", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut request = Vec::new();
            let mut chunk = [0u8; 4096];
            while !request.ends_with(b"\r\n\r\n{}") {
                let Ok(n @ 1..) = stream.read(&mut chunk) else { return };
                request.extend_from_slice(&chunk[..n]);
            }
            if let Some(answer) = answer {
                stream.write_all(answer).unwrap();
            }
            std::thread::sleep(hold);
        });
        Endpoint::parse(&url).unwrap()
    }

    #[test]
    fn the_final_answer_counts_read_by_its_framing() {
        let hold = Duration::from_secs(5);
        for (answer, status) in [
            // Interim answers come first and are skipped (RFC 9110 §15.2).
            (&b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"[..], 200),
            (b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\nHTTP/1.1 503 No\r\nContent-Length: 0\r\n\r\n", 503),
            // A complete answer on a connection left open is read without waiting.
            (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", 200),
            (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\n\r\n", 200),
        ] {
            let started = Instant::now();
            assert_eq!(post(&sink(Some(answer), hold), "{}"), Ok(status));
            assert!(started.elapsed() < IO_TIMEOUT, "{:?}", String::from_utf8_lossy(answer));
        }
    }

    #[test]
    fn a_collector_that_never_answers_timed_out() {
        let error = post(&sink(None, Duration::from_secs(5)), "{}").unwrap_err();
        assert_eq!(error, "timed out waiting for the collector's answer (after 2 s)");
    }
}
