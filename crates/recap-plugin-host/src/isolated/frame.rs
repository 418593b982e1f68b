//! The worker protocol's frames: the plugin's own JSON requests and answers, each
//! behind a fixed little-endian header, over the worker's stdin and stdout pipes.
//!
//! ```text
//! request:  op u8 | handle u64 | len u64 | len bytes (the plugin's request)
//! response: kind u8 | status i32 | value u64 | len u64 | len bytes
//! ```
//!
//! The worker answers every request with one response, in order, and opens with a
//! `Hello` (a JSON object: the library's name, version, ABI minor and functions, or why
//! it did not load). `value` is the session handle of an `Open`, and the length of an
//! answer over the response cap (`Oversize`, no bytes follow).

use crate::call::MAX_RESPONSE_BYTES;
use std::io::{self, Read, Write};

/// What the host asks the worker to call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Op {
    Describe = 1,
    Render = 2,
    Open = 3,
    SessionRender = 4,
    Close = 5,
}

impl Op {
    fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            1 => Op::Describe,
            2 => Op::Render,
            3 => Op::Open,
            4 => Op::SessionRender,
            5 => Op::Close,
            _ => return None,
        })
    }
}

/// What a response frame carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// The worker's first frame: JSON about the library.
    Hello = 1,
    /// The plugin's status and answer bytes (`value`: the handle of an `Open`).
    Answer = 2,
    /// The plugin's answer exceeded the cap: `value` is its length; no bytes.
    Oversize = 3,
    /// The worker refused the request (an unknown handle, say): UTF-8 text.
    Fault = 4,
}

impl Kind {
    fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            1 => Kind::Hello,
            2 => Kind::Answer,
            3 => Kind::Oversize,
            4 => Kind::Fault,
            _ => return None,
        })
    }
}

const REQUEST_HEADER: usize = 17;
const RESPONSE_HEADER: usize = 21;
/// The largest frame either side reads: an answer at the cap, with room for a header's
/// worth of JSON around it. Anything larger is garbage.
const MAX_FRAME: u64 = MAX_RESPONSE_BYTES as u64 + (1 << 20);
/// A `Hello` or a `Fault` is a line of text or a small object.
const MAX_SMALL_FRAME: u64 = 1 << 20;

pub(crate) fn write_request(
    out: &mut impl Write,
    op: Op,
    handle: u64,
    payload: &[u8],
) -> io::Result<()> {
    let mut header = [0u8; REQUEST_HEADER];
    header[0] = op as u8;
    header[1..9].copy_from_slice(&handle.to_le_bytes());
    header[9..17].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    out.write_all(&header)?;
    out.write_all(payload)?;
    out.flush()
}

/// The next request, its payload in `payload`; `Ok(None)` at the end of the input
/// (the host closed the pipe). A request that is not a frame is an `InvalidData` error.
pub(crate) fn read_request(
    input: &mut impl Read,
    payload: &mut Vec<u8>,
) -> io::Result<Option<(Op, u64)>> {
    let mut header = [0u8; REQUEST_HEADER];
    match input.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let bad = |what: String| io::Error::new(io::ErrorKind::InvalidData, what);
    let op = Op::from_byte(header[0]).ok_or_else(|| bad(format!("unknown op {}", header[0])))?;
    let handle = u64::from_le_bytes(header[1..9].try_into().unwrap_or_default());
    let len = u64::from_le_bytes(header[9..17].try_into().unwrap_or_default());
    // A request is as large as the session it carries; only the address space bounds it.
    let len = usize::try_from(len).map_err(|_| bad(format!("a request of {len} bytes")))?;
    payload.clear();
    payload.resize(len, 0);
    input.read_exact(payload)?;
    Ok(Some((op, handle)))
}

pub(crate) fn write_response(
    out: &mut impl Write,
    kind: Kind,
    status: i32,
    value: u64,
    payload: &[u8],
) -> io::Result<()> {
    let mut header = [0u8; RESPONSE_HEADER];
    header[0] = kind as u8;
    header[1..5].copy_from_slice(&status.to_le_bytes());
    header[5..13].copy_from_slice(&value.to_le_bytes());
    header[13..21].copy_from_slice(&(payload.len() as u64).to_le_bytes());
    out.write_all(&header)?;
    out.write_all(payload)?;
    out.flush()
}

/// A response frame as the host read it.
#[derive(Debug)]
pub(crate) struct Response {
    pub kind: Kind,
    pub status: i32,
    pub value: u64,
    pub payload: Vec<u8>,
}

/// Why no response frame could be read.
#[derive(Debug)]
pub(crate) enum ReadError {
    /// The pipe ended or broke: the worker is gone (or closed its output).
    Closed,
    /// The bytes are not a frame.
    Garbage(String),
}

/// Reads one response frame, reusing `payload`'s allocation.
pub(crate) fn read_response(
    input: &mut impl Read,
    mut payload: Vec<u8>,
) -> Result<Response, ReadError> {
    let mut header = [0u8; RESPONSE_HEADER];
    input
        .read_exact(&mut header)
        .map_err(|_| ReadError::Closed)?;
    let shown = || format!("a header starting {:02x?}", &header[..8]);
    let kind = Kind::from_byte(header[0])
        .ok_or_else(|| ReadError::Garbage(format!("unknown frame kind in {}", shown())))?;
    let status = i32::from_le_bytes(header[1..5].try_into().unwrap_or_default());
    let value = u64::from_le_bytes(header[5..13].try_into().unwrap_or_default());
    let len = u64::from_le_bytes(header[13..21].try_into().unwrap_or_default());
    let max = match kind {
        Kind::Answer => MAX_FRAME,
        Kind::Oversize => 0,
        Kind::Hello | Kind::Fault => MAX_SMALL_FRAME,
    };
    if len > max {
        return Err(ReadError::Garbage(format!(
            "a frame of {len} bytes (at most {max} for this kind) in {}",
            shown()
        )));
    }
    payload.clear();
    payload.resize(len as usize, 0);
    input
        .read_exact(&mut payload)
        .map_err(|_| ReadError::Closed)?;
    Ok(Response {
        kind,
        status,
        value,
        payload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_garbage_is_named() {
        let mut wire = Vec::new();
        write_request(&mut wire, Op::SessionRender, 42, b"{\"turns\":[]}").unwrap();
        let mut payload = Vec::new();
        let got = read_request(&mut wire.as_slice(), &mut payload).unwrap();
        assert_eq!(got, Some((Op::SessionRender, 42)));
        assert_eq!(payload, b"{\"turns\":[]}");
        assert_eq!(read_request(&mut &b""[..], &mut payload).unwrap(), None);

        let mut wire = Vec::new();
        write_response(&mut wire, Kind::Answer, 1, 7, b"{}").unwrap();
        let r = read_response(&mut wire.as_slice(), Vec::new()).unwrap();
        assert_eq!((r.kind, r.status, r.value), (Kind::Answer, 1, 7));
        assert_eq!(r.payload, b"{}");

        let garbage = b"Hello from a plugin that prints!\n".repeat(3);
        match read_response(&mut garbage.as_slice(), Vec::new()) {
            Err(ReadError::Garbage(what)) => assert!(what.contains("unknown frame kind"), "{what}"),
            other => panic!("{other:?}"),
        }
        let mut huge = vec![Kind::Answer as u8, 0, 0, 0, 0];
        huge.extend(0u64.to_le_bytes());
        huge.extend(u64::MAX.to_le_bytes());
        match read_response(&mut huge.as_slice(), Vec::new()) {
            Err(ReadError::Garbage(what)) => assert!(what.contains("a frame of"), "{what}"),
            other => panic!("{other:?}"),
        }
        match read_response(&mut &b"\x02\x00"[..], Vec::new()) {
            Err(ReadError::Closed) => {}
            other => panic!("{other:?}"),
        }
    }
}
