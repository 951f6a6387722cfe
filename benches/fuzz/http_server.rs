//! The server the HTTP fuzzer drives: `baremcp --http 127.0.0.1:0` started once and kept
//! across cases (started again when it dies or stops answering), its address read from its
//! log line, its stderr kept (a panic is looked for after each case), and its memory and CPU
//! read from `/proc`: peak resident memory is reset before a case and read after it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::http_reply::{Reply, read_replies};

/// How long the sentinel asks again when refused for want of descriptors (see
/// [`Server::sentinel`]).
const FD_GRACE: Duration = Duration::from_secs(1);

/// How a server is started.
#[derive(Clone, Debug)]
pub struct Launch {
    pub bin: PathBuf,
    /// Flags after `--http 127.0.0.1:0`.
    pub args: Vec<String>,
    /// `ulimit -n`, when set: descriptors run out before the connection cap.
    pub files: Option<u32>,
}

/// A running server.
pub struct Server {
    child: Child,
    pub addr: SocketAddr,
    pub pid: u32,
    /// Its stderr so far, and where the last look at it stopped.
    log: Arc<Mutex<Vec<u8>>>,
    looked: usize,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the server and waits for its address.
    pub fn start(launch: &Launch) -> Result<Server, String> {
        let limit = launch.files.map_or(String::new(), |n| format!("ulimit -n {n} && "));
        let mut child = Command::new("sh")
            .args(["-c", &format!("{limit}exec \"$0\" \"$@\"")])
            .arg(&launch.bin)
            .args(["--http", "127.0.0.1:0"])
            .args(&launch.args)
            // The address line, and warnings (a given-up stream, a refused connection).
            .env("RUST_LOG", "warn,baremcp::http=info,baremcp::http::connection=warn")
            .env_remove("BAREMCP_STATE_SECRET")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("{}: {e}", launch.bin.display()))?;
        let mut stderr = BufReader::new(child.stderr.take().ok_or("no stderr")?);
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut line = String::new();
        let addr = loop {
            line.clear();
            if stderr.read_line(&mut line).unwrap_or(0) == 0 {
                let _ = child.kill();
                return Err(format!("the server exited before serving: {:?}", child.wait()));
            }
            log.lock().unwrap().extend_from_slice(line.as_bytes());
            if let Some(rest) = line.split("serving MCP at http://").nth(1) {
                let addr = rest.trim_end().trim_end_matches("/mcp");
                break addr.parse().map_err(|e| format!("bad address {addr:?}: {e}"))?;
            }
        };
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut log = kept.lock().unwrap();
                // Keep the first 4 MiB; a panic is looked for as it comes.
                if log.len() < 4 << 20 {
                    log.extend_from_slice(&buf[..n]);
                }
            }
        });
        let pid = child.id();
        Ok(Server { child, addr, pid, log, looked: 0 })
    }

    /// `Err` with its exit status when it is no longer running.
    pub fn alive(&mut self) -> Result<(), String> {
        match self.child.try_wait() {
            Ok(None) => Ok(()),
            Ok(Some(status)) => Err(format!("the server exited: {status}")),
            Err(e) => Err(format!("cannot wait for the server: {e}")),
        }
    }

    /// What stderr said since the last look, when it says a thread panicked.
    pub fn panic_since(&mut self) -> Option<String> {
        let log = self.log.lock().unwrap();
        let new = &log[self.looked.min(log.len())..];
        let found = new.windows(8).position(|w| w == b"panicked").map(|at| {
            let from = at.saturating_sub(200);
            String::from_utf8_lossy(&new[from..(at + 600).min(new.len())]).into_owned()
        });
        self.looked = log.len();
        found
    }

    /// The last lines of stderr, for a report.
    pub fn log_tail(&self) -> String {
        let log = self.log.lock().unwrap();
        let text = String::from_utf8_lossy(&log[log.len().saturating_sub(2000)..]).into_owned();
        text.lines()
            .rev()
            .take(12)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Resets peak resident memory to what is resident now (`/proc/PID/clear_refs`).
    pub fn reset_peak(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.pid), "5");
    }

    /// Peak resident memory since the last reset, in KiB (`VmHWM`).
    pub fn peak_kib(&self) -> Option<u64> {
        status_kib(self.pid, "VmHWM:")
    }

    /// CPU time used so far (user and system), in clock ticks.
    pub fn cpu_ticks(&self) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)).ok()?;
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        Some(fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?)
    }

    /// A plain 2026-07-28 `tools/list` on a connection of its own: answered `200` with its
    /// id within `patience`, or why not. A `503` for want of descriptors is asked again for
    /// [`FD_GRACE`]: after a burst that used them up, the server gives them back a moment
    /// after its clients see their connections end (a server that keeps them still fails).
    pub fn sentinel(&self, patience: Duration) -> Result<(), String> {
        let body = r#"{"jsonrpc":"2.0","id":"sentinel","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let fields = "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/list\r\n";
        let started = Instant::now();
        loop {
            let reply = self.exchange(body, fields, patience)?;
            let said = String::from_utf8_lossy(&reply.body);
            let short = reply.status == 503 && said.contains("out of file descriptors");
            if short && started.elapsed() < FD_GRACE {
                std::thread::sleep(Duration::from_millis(5));
                continue;
            }
            if reply.status != 200 || !said.contains(r#""id":"sentinel""#) {
                return Err(format!("the sentinel got {} {said}", reply.status));
            }
            return Ok(());
        }
    }

    /// Opens a legacy session speaking `version`: its id.
    pub fn open_session(&self, version: &str) -> Result<String, String> {
        let init = super::http_gen::INITIALIZE.replace("VERSION", version);
        let reply = self.exchange(&init, "", Duration::from_secs(10))?;
        let id = reply.header("mcp-session-id").map(str::to_string);
        let id = id.filter(|_| reply.status == 200).ok_or_else(|| {
            format!(
                "initialize got {} without a session id: {}",
                reply.status,
                String::from_utf8_lossy(&reply.body)
            )
        })?;
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        let reply =
            self.exchange(note, &format!("Mcp-Session-Id: {id}\r\n"), Duration::from_secs(10))?;
        if reply.status != 202 {
            return Err(format!("notifications/initialized got {}", reply.status));
        }
        Ok(id)
    }

    /// One POST of `body` with `fields` on a fresh connection, and its response.
    fn exchange(&self, body: &str, fields: &str, patience: Duration) -> Result<Reply, String> {
        let started = Instant::now();
        let mut conn = TcpStream::connect_timeout(&self.addr, Duration::from_secs(3))
            .map_err(|e| format!("cannot connect: {e}"))?;
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n{fields}Content-Length: {}\r\n\r\n{body}",
            body.len()
        );
        conn.write_all(request.as_bytes()).map_err(|e| format!("cannot write: {e}"))?;
        let _ = conn.set_read_timeout(Some(Duration::from_millis(100)));
        let mut received = Vec::new();
        let mut buf = [0u8; 16384];
        loop {
            let eof = match conn.read(&mut buf) {
                Ok(0) => true,
                Ok(n) => {
                    received.extend_from_slice(&buf[..n]);
                    false
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    false
                }
                Err(e) => return Err(format!("cannot read: {e}")),
            };
            let (mut replies, _) = read_replies(&received, &[false], eof);
            if let Some(reply) = replies.pop().filter(|r| !r.open) {
                return Ok(reply);
            }
            if eof || started.elapsed() > patience {
                return Err(format!(
                    "no whole response within {:.1} s: {:?}",
                    started.elapsed().as_secs_f64(),
                    String::from_utf8_lossy(&received[..received.len().min(300)])
                ));
            }
        }
    }
}

fn status_kib(pid: u32, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status.lines().find(|l| l.starts_with(key))?.split_whitespace().nth(1)?.parse().ok()
}
