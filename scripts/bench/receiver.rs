//! The events bench's webhook receiver (`cargo build --release --example bench-receiver`;
//! scripts/bench/events.py starts it): answers 204 to every POST on keep-alive
//! connections and logs `<unix time received> <body>` lines, which the bench reads for the
//! commit-to-acknowledgement lag.
//!
//! Why not the Python receiver it replaces: on two cores the receiver shares the machine
//! with the server and PostgreSQL, and asyncio's 80-90 µs of CPU a delivery were a tenth of
//! what the bench charged to a subscribed write (issue 40). This one parses with
//! `httparse` on one thread. It checks nothing: the tests verify the signatures with the
//! Standard Webhooks reference library (tests/webhooks/).
//!
//!     bench-receiver LOG PORT_FILE

use std::{
    io::Write,
    sync::{Arc, Mutex},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

const ANSWER: &[u8] = b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n";
/// The most headers a request may carry.
const MAX_HEADERS: usize = 32;

type Lines = Arc<Mutex<Vec<u8>>>;

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(log), Some(port_file)) = (args.next(), args.next()) else {
        eprintln!("usage: bench-receiver LOG PORT_FILE");
        std::process::exit(2);
    };
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(serve(log, port_file))
}

async fn serve(log: String, port_file: String) -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    std::fs::write(&port_file, listener.local_addr()?.port().to_string())?;
    let lines: Lines = Arc::default();
    tokio::spawn(flush_every_200ms(log, lines.clone()));
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(answer(stream, lines.clone()));
    }
}

/// Writes the lines received so far to the log, five times a second.
async fn flush_every_200ms(log: String, lines: Lines) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)?;
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let batch = std::mem::take(&mut *lines.lock().unwrap_or_else(|e| e.into_inner()));
        file.write_all(&batch)?;
        file.flush()?;
    }
}

/// Answers one connection's requests until it closes (or sends something unparsable).
async fn answer(mut stream: TcpStream, lines: Lines) {
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    let mut chunk = [0u8; 8192];
    loop {
        loop {
            let used = match one_request(&buf, &lines) {
                Ok(Some(used)) => used,
                Ok(None) => break,
                Err(()) => return,
            };
            buf.drain(..used);
            if stream.write_all(ANSWER).await.is_err() {
                return;
            }
        }
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
        if buf.len() > 16 * 1024 * 1024 {
            return;
        }
    }
}

/// Takes one whole request from the front of `buf` (logging its body), answering the
/// bytes it used; `None` while it is incomplete, `Err` when it is not HTTP.
fn one_request(buf: &[u8], lines: &Lines) -> Result<Option<usize>, ()> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let head = match request.parse(buf) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(()),
    };
    let length = request
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("content-length"))
        .and_then(|h| {
            std::str::from_utf8(h.value)
                .ok()?
                .trim()
                .parse::<usize>()
                .ok()
        })
        .unwrap_or(0);
    let Some(body) = buf.get(head..head + length) else {
        return Ok(None);
    };
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    let mut lines = lines.lock().unwrap_or_else(|e| e.into_inner());
    lines.extend_from_slice(format!("{at:.6} ").as_bytes());
    lines.extend_from_slice(body);
    lines.push(b'\n');
    Ok(Some(head + length))
}
