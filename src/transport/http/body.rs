//! Reading a request's body, as its head frames it: a `Content-Length` or chunks, within the
//! head's deadline, and within the budget of the bodies being read as it grows.

use std::io::BufRead;
use std::time::Instant;

use crate::transport::http::body_budget::{self, BodyBudget, FREE_BYTES, Hold};
use crate::transport::http::grammar::chunk_size;
use crate::transport::http::parser::{
    BodyKind, Head, Limits, LineError, MAX_HEAD_BYTES, ReadError, Reader, bad,
};

impl Reader {
    /// Reads the body `head` announced, within the same deadline as its head, and within
    /// `budget` as it grows.
    pub fn body(
        &mut self,
        head: &Head,
        limits: &Limits,
        budget: &BodyBudget,
    ) -> Result<Vec<u8>, ReadError> {
        let deadline = head.started + limits.deadline;
        let hold = &mut budget.hold();
        match head.body {
            BodyKind::None => Ok(Vec::new()),
            BodyKind::Length(n) => {
                let mut body = Vec::with_capacity(n.min(FREE_BYTES));
                self.exact(&mut body, n, n, deadline, hold)?;
                Ok(body)
            }
            BodyKind::Chunked => {
                let mut body = Vec::new();
                let mut line = Vec::new();
                loop {
                    self.line(&mut line, 1024, deadline).map_err(LineError::in_body)?;
                    let size = chunk_size(&line).ok_or_else(|| bad("malformed chunk size"))?;
                    if size == 0 {
                        break;
                    }
                    if body.len().saturating_add(size) > limits.max_body {
                        return Err(ReadError::Status(413, "body larger than --max-message-bytes"));
                    }
                    self.exact(&mut body, size, limits.max_body, deadline, hold)?;
                    self.line(&mut line, 2, deadline).map_err(LineError::in_body)?;
                    if !line.is_empty() {
                        return Err(bad("chunk data not followed by a line end"));
                    }
                }
                // Trailer fields are read and ignored, within the head's size limit.
                let mut room = MAX_HEAD_BYTES;
                loop {
                    let read = self.line(&mut line, room, deadline).map_err(LineError::status)?;
                    if line.is_empty() {
                        return Ok(body);
                    }
                    room -= read;
                }
            }
        }
    }

    /// Reads `n` bytes onto `into`, as far as `hold` can count them. It grows as they arrive
    /// (a length announced is not allocated before it is sent), doubling, but never past
    /// `most`, the length it can reach.
    fn exact(
        &mut self,
        into: &mut Vec<u8>,
        mut n: usize,
        most: usize,
        deadline: Instant,
        hold: &mut Hold,
    ) -> Result<(), ReadError> {
        while n > 0 {
            match self.fill(deadline, None) {
                Ok(true) => {}
                Ok(false) => return Err(ReadError::Closed),
                Err(_) => return Err(ReadError::Status(408, "the request was not sent in time")),
            }
            let buf = self.inner.buffer();
            let take = buf.len().min(n);
            if !hold.grow_to(into.len() + take) {
                return Err(ReadError::Status(503, body_budget::REFUSED));
            }
            if into.capacity() - into.len() < take {
                let grown = (into.capacity() * 2).min(most).max(into.len() + take);
                into.reserve_exact(grown - into.len());
            }
            into.extend_from_slice(&buf[..take]);
            self.inner.consume(take);
            n -= take;
        }
        Ok(())
    }
}
