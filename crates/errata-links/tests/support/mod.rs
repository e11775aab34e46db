//! A real HTTP/1.1 server on 127.0.0.1 for the tests: each connection serves one request
//! (`Connection: close`), answered by a closure, and every request is recorded.

// Each test binary uses a different part of this module.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the server does with a request.
pub enum Reply {
    /// A status line and headers, no body.
    Status(u16, Vec<(&'static str, String)>),
    /// Answer nothing for this long (longer than any test timeout), then close.
    Hang(Duration),
    /// Close the connection without a word.
    Close,
    /// Wait, then answer with this status (for concurrency tests).
    Slow(Duration, u16),
}

/// One request the server saw.
#[derive(Debug, Clone)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub at: Instant,
}

type Handler = dyn Fn(&str, &str, usize) -> Reply + Send + Sync;

pub struct Server {
    pub port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    max_in_flight: Arc<AtomicUsize>,
}

impl Server {
    /// Starts a server; `handler(method, path, n)` gets `n`, the number of earlier
    /// requests for the same path.
    pub fn start(handler: impl Fn(&str, &str, usize) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let in_flight = Arc::new(AtomicUsize::new(0));
        let max_in_flight = Arc::new(AtomicUsize::new(0));
        let handler: Arc<Handler> = Arc::new(handler);
        let server = Server {
            port,
            seen: seen.clone(),
            max_in_flight: max_in_flight.clone(),
        };
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (handler, seen, in_flight, max) = (
                    handler.clone(),
                    seen.clone(),
                    in_flight.clone(),
                    max_in_flight.clone(),
                );
                std::thread::spawn(move || serve(stream, &*handler, &seen, &in_flight, &max));
            }
        });
        server
    }

    /// A URL on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Every request so far.
    pub fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// `METHOD /path` of every request to `path`, in order.
    pub fn requests(&self, path: &str) -> Vec<String> {
        self.seen()
            .iter()
            .filter(|s| s.path == path)
            .map(|s| format!("{} {}", s.method, s.path))
            .collect()
    }

    /// The most requests this server had in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.max_in_flight.load(Ordering::SeqCst)
    }
}

fn serve(
    stream: TcpStream,
    handler: &Handler,
    seen: &Mutex<Vec<Seen>>,
    in_flight: &AtomicUsize,
    max: &AtomicUsize,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let (method, path) = (
        parts.next().unwrap_or("").to_string(),
        parts.next().unwrap_or("").to_string(),
    );
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header).unwrap_or(0) == 0 || header == "\r\n" {
            break;
        }
    }
    let n = {
        let mut seen = seen.lock().unwrap();
        let n = seen.iter().filter(|s| s.path == path).count();
        seen.push(Seen {
            method: method.clone(),
            path: path.clone(),
            at: Instant::now(),
        });
        n
    };
    let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    max.fetch_max(now, Ordering::SeqCst);
    let reply = handler(&method, &path, n);
    let mut stream = stream;
    // A request stops being in flight just before its answer is written: once the client
    // has the answer it may start the next request, and that one must not be counted as
    // overlapping this one (on a loaded machine this thread can be descheduled between
    // writing and counting down).
    let answered = || {
        in_flight.fetch_sub(1, Ordering::SeqCst);
    };
    match reply {
        Reply::Close => answered(),
        Reply::Hang(d) => {
            std::thread::sleep(d);
            answered();
        }
        Reply::Status(code, headers) => {
            answered();
            write_status(&mut stream, code, &headers);
        }
        Reply::Slow(d, code) => {
            std::thread::sleep(d);
            answered();
            write_status(&mut stream, code, &[]);
        }
    }
}

fn write_status(stream: &mut TcpStream, code: u16, headers: &[(&'static str, String)]) {
    let mut head =
        format!("HTTP/1.1 {code} Whatever\r\nContent-Length: 0\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.flush();
}

/// A redirect reply.
pub fn redirect(code: u16, to: &str) -> Reply {
    Reply::Status(code, vec![("Location", to.to_string())])
}
