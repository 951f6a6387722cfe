//! The HTTP floor for the benchmark: the smallest std HTTP/1.1 responder that does the work
//! any MCP server must (a thread per keep-alive connection, the head read line by line, the
//! body by its `Content-Length` and parsed into a serde_json `Value`), then answers the
//! request's id with a fixed greeting. No checks, no sessions, no limits: the baseline the
//! `--http` mode of `benches/bench.rs` measures baremcp against, not a server to use.
//!
//! `floor_http --http ADDR` (port 0: any) says where it listens on stderr, as baremcp does.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};

use serde_json::{Value, json};

fn main() -> io::Result<()> {
    let addr = std::env::args()
        .skip_while(|a| a != "--http")
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:0".into());
    let listener = TcpListener::bind(&addr)?;
    eprintln!("serving MCP at http://{}/mcp", listener.local_addr()?);
    for stream in listener.incoming().flatten() {
        std::thread::spawn(move || serve(stream));
    }
    Ok(())
}

fn serve(stream: TcpStream) -> io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    loop {
        let mut length = 0;
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        loop {
            line.clear();
            reader.read_line(&mut line)?;
            let header = line.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let reply = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
            "content": [{"type": "text", "text": "Hello, World!"}]
        }});
        let reply = serde_json::to_vec(&reply)?;
        let head = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            reply.len()
        );
        let mut out = head.into_bytes();
        out.extend_from_slice(&reply);
        writer.write_all(&out)?;
    }
}
