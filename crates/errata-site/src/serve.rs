//! A small static file server for previews and tests (`errata serve`, browser tests).
//!
//! It serves one directory on a loopback address, answers `404.html` with status 404
//! for missing paths, and never serves anything outside the directory. With live reload
//! on, HTML responses get one extra `<script src="/__errata/reload.js">` (a file, so the
//! site's Content-Security-Policy allows it) that polls `/__errata/version` and reloads
//! the page when [`Server::bump`] was called after a rebuild. Nothing here is written
//! into the built site.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

const RELOAD_JS: &str = r#"// errata serve: reload the page after a rebuild.
(function () {
  var current = null;
  function poll() {
    fetch("/__errata/version", {cache: "no-store"}).then(function (r) { return r.text(); }).then(function (v) {
      if (current === null) current = v;
      else if (v !== current) { window.location.reload(); return; }
      setTimeout(poll, 700);
    }, function () { setTimeout(poll, 2000); });
  }
  poll();
})();
"#;

/// A running server. Dropping it stops accepting connections.
pub struct Server {
    addr: SocketAddr,
    version: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Serves `root` on `addr` (use port 0 for any free port) in a background thread.
    pub fn start(addr: &str, root: PathBuf, live_reload: bool) -> std::io::Result<Server> {
        let listener = TcpListener::bind(addr)?;
        let addr = listener.local_addr()?;
        let version = Arc::new(AtomicU64::new(1));
        let stop = Arc::new(AtomicBool::new(false));
        let (v, s) = (version.clone(), stop.clone());
        let root = Arc::new(root);
        let thread = std::thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (root, v) = (root.clone(), v.clone());
                std::thread::spawn(move || {
                    let _ = handle(stream, &root, live_reload.then_some(&*v));
                });
            }
        });
        Ok(Server {
            addr,
            version,
            stop,
            thread: Some(thread),
        })
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("http://{}/", self.addr)
    }

    /// Tells open pages to reload (after a rebuild).
    pub fn bump(&self) {
        self.version.fetch_add(1, Ordering::SeqCst);
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_millis(200));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn handle(mut stream: TcpStream, root: &Path, version: Option<&AtomicU64>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request_line = String::new();
    reader.by_ref().take(8192).read_line(&mut request_line)?;
    // Drain the headers; nothing in them matters here.
    loop {
        let mut line = String::new();
        if reader.by_ref().take(8192).read_line(&mut line)? == 0 || line == "\r\n" || line == "\n" {
            break;
        }
    }
    let mut parts = request_line.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            405,
            "text/plain; charset=utf-8",
            b"method not allowed",
            method == "HEAD",
        );
    }
    let head = method == "HEAD";
    let path = target.split(['?', '#']).next().unwrap_or("/");
    if let Some(v) = version {
        if path == "/__errata/version" {
            let body = v.load(Ordering::SeqCst).to_string();
            return respond(
                &mut stream,
                200,
                "text/plain; charset=utf-8",
                body.as_bytes(),
                head,
            );
        }
        if path == "/__errata/reload.js" {
            return respond(
                &mut stream,
                200,
                "text/javascript; charset=utf-8",
                RELOAD_JS.as_bytes(),
                head,
            );
        }
    }
    let (status, file) = match resolve(root, path) {
        Some(file) => (200, file),
        None => (404, root.join("404.html")),
    };
    let mut body = match std::fs::read(&file) {
        Ok(body) => body,
        Err(_) => {
            return respond(
                &mut stream,
                404,
                "text/plain; charset=utf-8",
                b"not found",
                head,
            );
        }
    };
    let ctype = content_type(&file);
    if version.is_some() && ctype.starts_with("text/html") {
        body = inject_reload(body);
    }
    respond(&mut stream, status, ctype, &body, head)
}

/// Maps a URL path to a file under `root`; `None` when missing or outside `root`.
pub fn resolve(root: &Path, url_path: &str) -> Option<PathBuf> {
    let decoded = percent_decode(url_path)?;
    let mut path = root.to_path_buf();
    for component in Path::new(decoded.trim_start_matches('/')).components() {
        match component {
            Component::Normal(part) => path.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    if path.is_dir() {
        path.push("index.html");
    }
    path.is_file().then_some(path)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let s = String::from_utf8(out).ok()?;
    (!s.contains('\0') && !s.contains('\\')).then_some(s)
}

fn inject_reload(body: Vec<u8>) -> Vec<u8> {
    let tag = b"<script src=\"/__errata/reload.js\"></script>";
    match body.windows(7).rposition(|w| w == b"</body>") {
        Some(at) => [&body[..at], tag, &body[at..]].concat(),
        None => [&body[..], tag].concat(),
    }
}

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "json" => "application/json",
        "xml" => "application/xml; charset=utf-8",
        "txt" => "text/plain; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        _ => "application/octet-stream",
    }
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    ctype: &str,
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        405 => "Method Not Allowed",
        _ => "Error",
    };
    let header = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(header.as_bytes())?;
    if !head {
        stream.write_all(body)?;
    }
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(server: &Server, path: &str) -> String {
        let mut s = TcpStream::connect(server.addr()).unwrap();
        write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn serves_files_404s_and_never_escapes_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site");
        std::fs::create_dir_all(root.join("zh")).unwrap();
        std::fs::write(root.join("index.html"), "<html><body>home</body></html>").unwrap();
        std::fs::write(root.join("zh/index.html"), "<body>中文</body>").unwrap();
        std::fs::write(root.join("404.html"), "<body>missing</body>").unwrap();
        std::fs::write(dir.path().join("secret.txt"), "secret").unwrap();
        let server = Server::start("127.0.0.1:0", root, true).unwrap();
        let home = get(&server, "/");
        assert!(home.starts_with("HTTP/1.1 200"), "{home}");
        assert!(
            home.contains("home<script src=\"/__errata/reload.js\"></script></body>"),
            "{home}"
        );
        assert!(get(&server, "/zh/").contains("中文"));
        assert!(get(&server, "/%7A%68/index.html?x=1").contains("中文"));
        for bad in [
            "/../secret.txt",
            "/%2e%2e/secret.txt",
            "/zh/../../secret.txt",
            "/nope.html",
        ] {
            let r = get(&server, bad);
            assert!(
                r.starts_with("HTTP/1.1 404") && !r.contains("secret"),
                "{bad}: {r}"
            );
        }
        assert!(get(&server, "/__errata/version").ends_with("\r\n\r\n1"));
        server.bump();
        assert!(get(&server, "/__errata/version").ends_with("\r\n\r\n2"));
    }
}
