//! The built site in a real headless Chromium, driven over WebDriver (fantoccini +
//! chromedriver): search an English error message and a Chinese query, land on the
//! right entry first, switch language, follow a transition link, and check that no page
//! logs a console error (a CSP violation is one), plus accessibility: `lang` attributes,
//! one `h1`, labelled inputs, text contrast, and axe-core's rules (any `serious` or
//! `critical` violation fails). The search index is loaded shard by shard, and search
//! works from `file://` and from a sub-path too. A second test renders a knowledge base
//! whose every field is hostile (script tags, event attributes, `javascript:` URLs,
//! template syntax, RTL overrides, broken UTF-8, a 5,000-character word) and checks in
//! the browser that nothing of it runs and the layout holds.
//!
//! Needs `chromium` and `chromedriver` (Debian: `apt-get install -y chromium
//! chromium-driver`), or their paths in `ERRATA_CHROMIUM` / `ERRATA_CHROMEDRIVER`, and
//! axe-core's `axe.min.js`: `ERRATA_AXE_JS`, else the copy vendored in the
//! `axe-playwright-python` wheel (`python3 -m pip install --user --no-deps
//! --require-hashes -r .ci/requirements.txt`, as `.ci/run` does), found
//! through `python3`. Without them the test FAILS, so CI cannot pass by accident; set
//! `ERRATA_SKIP_BROWSER=1` to skip it on a machine without a browser.
//! Screenshots are written to `target/screenshots/`.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use errata_site::serve::Server;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

fn find_program(env: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    names
        .iter()
        .flat_map(|n| std::env::split_paths(&path).map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

/// Kills chromedriver (and the browsers it started) when the test ends, pass or fail.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port")
}

/// chromedriver's browser log (`POST /session/{id}/se/log`), which W3C WebDriver lacks
/// and fantoccini therefore does not wrap: a plain HTTP request to the local driver.
fn browser_log(port: u16, session: &str) -> Vec<Value> {
    let body = r#"{"type":"browser"}"#;
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect chromedriver");
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "POST /session/{session}/se/log HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // chromedriver keeps the connection open whatever the request says: read the headers,
    // then exactly Content-Length bytes.
    let mut reader = std::io::BufReader::new(s);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        let n = std::io::BufRead::read_line(&mut reader, &mut line)
            .expect("read chromedriver response");
        if n == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut json = vec![0u8; length];
    reader
        .read_exact(&mut json)
        .expect("read chromedriver log body");
    let value: Value = serde_json::from_slice(&json).expect("chromedriver log is JSON");
    value["value"]
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("unexpected log answer: {value}"))
}

/// axe-core's `axe.min.js`: `ERRATA_AXE_JS`, else the copy in the `axe_playwright_python`
/// package that `python3` finds (located without importing it).
fn axe_source() -> Option<String> {
    let path = match std::env::var_os("ERRATA_AXE_JS") {
        Some(p) => PathBuf::from(p),
        None => {
            let out = Command::new("python3")
                .args([
                    "-c",
                    "import importlib.util as u; s = u.find_spec('axe_playwright_python'); print(s.submodule_search_locations[0] if s else '')",
                ])
                .output()
                .ok()?;
            let dir = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if dir.is_empty() {
                return None;
            }
            Path::new(&dir).join("axe.min.js")
        }
    };
    std::fs::read_to_string(path).ok()
}

struct Browser {
    client: Client,
    port: u16,
    session: String,
    shots: PathBuf,
    axe: String,
}

impl Browser {
    async fn shot(&self, name: &str) {
        let png = self.client.screenshot().await.expect("screenshot");
        std::fs::write(self.shots.join(format!("{name}.png")), png).expect("write screenshot");
    }

    async fn js(&self, script: &str) -> Value {
        self.client
            .execute(script, vec![])
            .await
            .expect("execute script")
    }

    /// Fails on any console message of level SEVERE since the last call.
    /// Clicks the first element matching `css` and waits until the browser is at `url`.
    async fn click_to(&self, css: &str, url: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
            .click()
            .await
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
        self.client
            .wait()
            .for_url(&url::Url::parse(url).expect("a URL"))
            .await
            .unwrap_or_else(|e| panic!("after clicking {css}, never reached {url}: {e}"));
    }

    /// What every page the test visits gets: the accessibility checks, a screenshot
    /// (`<shot>.png`), and no console errors.
    async fn checkpoint(&self, page: &str, lang: &str, shot: &str) {
        self.assert_accessible(page, lang).await;
        self.shot(shot).await;
        self.assert_no_console_errors(page);
    }

    fn assert_no_console_errors(&self, page: &str) {
        self.assert_no_console_errors_but(page, None);
    }

    /// The same, allowing the one network error a deliberate 404 produces.
    fn assert_no_console_errors_but(&self, page: &str, expected_404: Option<&str>) {
        let errors: Vec<Value> = browser_log(self.port, &self.session)
            .into_iter()
            .filter(|m| m["level"] == "SEVERE")
            .filter(|m| {
                let msg = m["message"].as_str().unwrap_or("");
                !expected_404.is_some_and(|url| {
                    m["source"] == "network" && msg.starts_with(url) && msg.contains("404")
                })
            })
            .collect();
        assert!(errors.is_empty(), "{page}: console errors: {errors:#?}");
    }

    /// Accessibility basics on the current page.
    async fn assert_accessible(&self, page: &str, lang: &str) {
        let report = self
            .js(
                r#"
            function lum(c) {
              var m = c.match(/[\d.]+/g).map(Number);
              var ch = m.slice(0, 3).map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
              return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
            }
            function bg(el) {
              for (; el; el = el.parentElement) {
                var c = getComputedStyle(el).backgroundColor;
                var m = c.match(/[\d.]+/g);
                if (m && (m.length < 4 || Number(m[3]) > 0.5)) return c;
              }
              return "rgb(255, 255, 255)";
            }
            var low = [];
            document.querySelectorAll("h1, h2, p, li, a, label, td, th, dt, dd, .badge, button").forEach(function (el) {
              if (!el.textContent.trim() || el.offsetParent === null) return;
              var a = lum(getComputedStyle(el).color), b = lum(bg(el));
              var ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
              if (ratio < 4.5) low.push(el.tagName + " '" + el.textContent.trim().slice(0, 40) + "' " + ratio.toFixed(2));
            });
            var unlabelled = [];
            document.querySelectorAll("input, textarea, select").forEach(function (el) {
              if (!el.labels || el.labels.length === 0) unlabelled.push(el.id || el.name);
            });
            var noAlt = Array.from(document.images).filter(function (i) { return !i.hasAttribute("alt"); }).length;
            return {lang: document.documentElement.lang, h1: document.querySelectorAll("h1").length,
                    title: document.title, unlabelled: unlabelled, lowContrast: low, noAlt: noAlt};
        "#,
            )
            .await;
        assert_eq!(report["lang"], lang, "{page}: html lang");
        assert_eq!(report["h1"], 1, "{page}: exactly one h1");
        assert!(
            report["title"].as_str().is_some_and(|t| !t.is_empty()),
            "{page}: title"
        );
        assert_eq!(
            report["unlabelled"],
            json!([]),
            "{page}: inputs without a label"
        );
        assert_eq!(
            report["lowContrast"],
            json!([]),
            "{page}: text below 4.5:1 contrast"
        );
        assert_eq!(report["noAlt"], 0, "{page}: images without alt");
        self.assert_axe(page).await;
    }

    /// Runs axe-core on the current page (injected through WebDriver, which the page's
    /// Content-Security-Policy does not govern) and fails on serious or critical
    /// violations.
    async fn assert_axe(&self, page: &str) {
        let loaded = self
            .client
            .execute(&format!("{}\n;return typeof window.axe;", self.axe), vec![])
            .await
            .expect("inject axe-core");
        assert_eq!(loaded, "object", "{page}: axe-core did not load");
        let result = self
            .js(
                r#"
            return window.axe.run(document, {resultTypes: ["violations"]}).then(function (r) {
              return {version: window.axe.version, violations: r.violations.map(function (v) {
                return {id: v.id, impact: v.impact, help: v.help,
                        nodes: v.nodes.slice(0, 5).map(function (n) { return n.target.join(" "); })};
              })};
            });
        "#,
            )
            .await;
        let serious: Vec<&Value> = result["violations"]
            .as_array()
            .expect("axe violations")
            .iter()
            .filter(|v| matches!(v["impact"].as_str(), Some("serious" | "critical")))
            .collect();
        assert!(
            serious.is_empty(),
            "{page}: axe-core {} found serious or critical violations: {serious:#?}",
            result["version"]
        );
    }

    async fn h1(&self) -> String {
        self.client
            .find(Locator::Css("h1"))
            .await
            .expect("h1")
            .text()
            .await
            .expect("h1 text")
            .trim()
            .to_string()
    }

    /// Waits for search results and returns the hrefs, in order.
    /// Opens the search page `page` with the query `q` in its URL and returns the hits.
    async fn search(&self, page: &str, q: &str) -> Vec<String> {
        let url = url::Url::parse_with_params(page, &[("q", q)]).expect("a search URL");
        self.client
            .goto(url.as_str())
            .await
            .expect("open the search page");
        self.results().await
    }

    async fn results(&self) -> Vec<String> {
        self.client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css("#search-results li a"))
            .await
            .expect("search results appear");
        let v = self.js("return Array.from(document.querySelectorAll('#search-results li a')).map(function (a) { return a.href; });").await;
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap_or("").to_string())
            .collect()
    }
}

/// A WebDriver session on a headless Chromium, and what must live as long as it.
struct Session {
    browser: Browser,
    _driver: Driver,
    _user_data: tempfile::TempDir,
}

/// Starts chromedriver and a headless Chromium; `None` (after saying so) only when
/// `ERRATA_SKIP_BROWSER=1` and something is missing, else a missing tool fails the test.
async fn start_session() -> Option<Session> {
    let skip = std::env::var("ERRATA_SKIP_BROWSER").is_ok_and(|v| v == "1");
    let chromium = find_program(
        "ERRATA_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    );
    let driver = find_program("ERRATA_CHROMEDRIVER", &["chromedriver"]);
    let (Some(chromium), Some(driver_bin), Some(axe)) = (chromium, driver, axe_source()) else {
        if skip {
            eprintln!(
                "ERRATA_SKIP_BROWSER=1: browser test skipped (no chromium/chromedriver/axe-core)"
            );
            return None;
        }
        panic!(
            "chromium, chromedriver and axe-core are required for the browser tests \
             (apt-get install -y chromium chromium-driver, or set ERRATA_CHROMIUM / ERRATA_CHROMEDRIVER; \
             python3 -m pip install --user --no-deps --break-system-packages axe-playwright-python==0.1.8, \
             or set ERRATA_AXE_JS to an axe.min.js); set ERRATA_SKIP_BROWSER=1 to skip them"
        );
    };

    let port = free_port();
    let user_data = tempfile::tempdir().unwrap();
    let driver = Driver(
        Command::new(&driver_bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromedriver"),
    );
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": chromium,
            "args": ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                     "--disable-background-networking", "--disable-component-update", "--disable-sync",
                     "--disable-dev-shm-usage", "--window-size=1200,1600",
                     format!("--user-data-dir={}", user_data.path().display())],
        }),
    );
    caps.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
    let client = ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("WebDriver session");
    let session = client
        .session_id()
        .await
        .ok()
        .flatten()
        .expect("session id");
    let shots = repo().join("target/screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    Some(Session {
        browser: Browser {
            client,
            port,
            session,
            shots,
            axe,
        },
        _driver: driver,
        _user_data: user_data,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn site_in_headless_chromium() {
    let Some(session) = start_session().await else {
        return;
    };
    let b = &session.browser;
    // Build the real knowledge base with the real CLI.
    let out = tempfile::tempdir().unwrap();
    let build = Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(["build", "--out"])
        .arg(out.path())
        .current_dir(repo())
        .output()
        .expect("run errata build");
    assert!(
        build.status.success(),
        "errata build failed: {}",
        String::from_utf8_lossy(&build.stderr)
    );
    let site_dir = out.path().join("site");
    let kb = errata_load::KnowledgeBase::load(&repo().join("data")).unwrap();
    let entries: Vec<errata_model::Entry> =
        kb.entries.iter().filter_map(|d| d.entry.clone()).collect();
    // The entry a pasted log must find first: the plain illegal-address message if the
    // data has it, else the first entry.
    let target = entries
        .iter()
        .find(|e| e.id == "cuda/illegal-memory-access")
        .or(entries.first())
        .expect("data has entries")
        .clone();

    let server = Server::start("127.0.0.1:0", site_dir.clone(), false).expect("serve the site");
    let base = server.url();
    // The same site one directory down, as on a project page (`/<repo>/`).
    let parent = Server::start(
        "127.0.0.1:0",
        site_dir.parent().expect("site has a parent").to_path_buf(),
        false,
    )
    .expect("serve the parent directory");
    let sub_path = format!("{}site/", parent.url());
    let result = run(b, &base, &sub_path, &target, &entries, &site_dir).await;
    let _ = b.client.clone().close().await;
    result
}

async fn run(
    b: &Browser,
    base: &str,
    sub_path: &str,
    target: &errata_model::Entry,
    entries: &[errata_model::Entry],
    site_dir: &Path,
) {
    let c = &b.client;
    // Home.
    c.goto(base).await.unwrap();
    b.checkpoint("home", "en", "01-home").await;

    // Paste an English error message, as printed in a real traceback, into the home form.
    let pasted = format!(
        "Traceback (most recent call last):\n  File \"train.py\", line 42, in <module>\n    loss.backward()\n{}\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        target.signature
    );
    let input = c.find(Locator::Css("#q-home")).await.unwrap();
    input.send_keys(&pasted.replace('\n', " ")).await.unwrap();
    c.find(Locator::Css(".search-big button[type=submit]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let hits = b.results().await;
    let expected = format!("entries/{}.html", target.id);
    assert!(
        hits[0].ends_with(&expected),
        "first hit for the pasted message: {hits:?}, expected {expected}"
    );
    b.checkpoint("search", "en", "02-search-en").await;

    // Reach the entry.
    b.click_to("#search-results li a", &format!("{base}{expected}"))
        .await;
    assert_eq!(b.h1().await, target.signature.trim());
    b.checkpoint("entry", "en", "03-entry-en").await;

    // Switch language.
    b.click_to(
        ".lang-switch a[hreflang=zh]",
        &format!("{base}zh/{expected}"),
    )
    .await;
    if !target.signature_zh.trim().is_empty() {
        assert_eq!(b.h1().await, target.signature_zh.trim());
    }
    b.checkpoint("entry (zh)", "zh", "04-entry-zh").await;

    // A Chinese query: the target's Chinese message finds it first on the Chinese site.
    if !target.signature_zh.trim().is_empty() {
        let q: String = target
            .signature_zh
            .chars()
            .filter(|c| !c.is_ascii_punctuation())
            .collect();
        let hits = b.search(&format!("{base}zh/search.html"), &q).await;
        assert!(
            hits[0].ends_with(&format!("zh/{expected}")),
            "first hit for {q}: {hits:?}"
        );
        b.checkpoint("search (zh)", "zh", "05-search-zh").await;
    }

    // Follow a transition link from an entry that has one.
    let with_edge = entries.iter().find(|e| {
        e.edges()
            .any(|(_, _, id)| entries.iter().any(|x| x.id == id))
    });
    let with_edge = with_edge.expect("the knowledge base has at least one transition edge");
    c.goto(&format!("{base}entries/{}.html", with_edge.id))
        .await
        .unwrap();
    let link = c.find(Locator::Css("a.transition")).await.unwrap();
    let linked_title = link.text().await.unwrap();
    link.click().await.unwrap();
    c.wait().for_element(Locator::Css("h1")).await.unwrap();
    let url = c.current_url().await.unwrap();
    assert!(
        url.path().starts_with("/entries/")
            && url.path() != format!("/entries/{}.html", with_edge.id),
        "{url}"
    );
    assert_eq!(b.h1().await, linked_title.trim());
    b.shot("06-transition").await;
    b.assert_no_console_errors("transition target");

    // An article, the translation status page and the 404 page.
    if let Some(article) = walk_html(&site_dir.join("articles")).first() {
        let rel = article
            .strip_prefix(site_dir)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        c.goto(&format!("{base}{rel}")).await.unwrap();
        b.checkpoint("article", "en", "07-article").await;
    }
    c.goto(&format!("{base}zh/translations.html"))
        .await
        .unwrap();
    b.assert_accessible("translations", "zh").await;
    b.assert_no_console_errors("translations");
    let missing = format!("{base}no/such/page.html");
    c.goto(&missing).await.unwrap();
    b.assert_accessible("404", "en").await;
    assert_eq!(b.h1().await, "Page not found");
    b.shot("08-404").await;
    b.assert_no_console_errors_but("404", Some(&missing));

    // The same site straight from file://: search still works (the index is a script).
    let file_url = url::Url::from_file_path(site_dir.join("search.html")).unwrap();
    let hits = b.search(file_url.as_str(), &target.signature).await;
    assert!(hits[0].ends_with(&expected), "file:// search: {hits:?}");
    b.shot("09-file-url-search").await;
    b.assert_no_console_errors("file:// search");
    let loaded = b
        .js("return Array.from(document.scripts).map(function (s) { return s.src; }).filter(function (s) { return s.indexOf('/search/') >= 0; }).length;")
        .await;
    // (The real data is small enough for one shard of each kind; the split itself is
    // tested in errata-site.)
    let shards = std::fs::read_dir(site_dir.join("search/en"))
        .unwrap()
        .count();
    assert!(
        loaded
            .as_u64()
            .is_some_and(|n| n > 0 && n as usize <= shards),
        "search loads its shards on demand ({shards} files): {loaded}"
    );

    // From a sub-path, in Chinese.
    if !target.signature_zh.trim().is_empty() {
        let hits = b
            .search(&format!("{sub_path}zh/search.html"), &target.signature_zh)
            .await;
        assert!(
            hits[0].starts_with(&format!("{sub_path}zh/{expected}")),
            "sub-path search: {hits:?}"
        );
        b.assert_no_console_errors("sub-path search");
    }
}

fn walk_html(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(
                std::fs::read_dir(&p)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .map(|e| e.path()),
            );
        } else if p.extension().is_some_and(|x| x == "html") {
            out.push(p);
        }
    }
    out.sort();
    out
}

/// Strings an attacker would put in a pull request, each trying to run script
/// (`window.__pwned`), leave its element, or break the layout.
const HOSTILE: &[&str] = &[
    "<script>window.__pwned = 1</script>",
    "<img src=x onerror=\"window.__pwned = 2\">",
    "\"><svg onload=window.__pwned=3>",
    "'><a href=javascript:window.__pwned=4>click</a>",
    "</textarea></title></script><script>window.__pwned = 5</script>",
    "{{ 7*7 }} {% raw %} ${7*7} <%= 7*7 %>",
    "javascript:window.__pwned=6",
    "normal \u{202e}txt.exe gnp.\u{202c} after an RTL override",
    "\u{fffd}\u{fffd} broken UTF-8 \u{0} NUL \u{7} BEL",
];

/// A word long enough to push any page sideways if nothing wraps it.
fn long_word() -> String {
    "A".repeat(5_000)
}

/// The real out-of-memory entry with every free-text string replaced by a hostile one
/// (ids, dates and references kept, so that it still loads and renders).
fn hostile_entry(id: &str) -> Value {
    let text = std::fs::read_to_string(repo().join("data/signatures/cuda/out-of-memory.json"))
        .expect("entry");
    let mut entry: Value = serde_json::from_str(&text).expect("json");
    let keep = [
        "id",
        "domain",
        "first_seen",
        "last_confirmed",
        "last_updated",
        "introduced",
        "deprecated",
        "removed",
        "regex",
    ];
    let mut n = 0usize;
    fn walk(v: &mut Value, key: &str, keep: &[&str], n: &mut usize) {
        match v {
            Value::String(s) if !keep.contains(&key) => {
                *s = if *n % 5 == 4 {
                    format!("{} {}", long_word(), HOSTILE[*n % HOSTILE.len()])
                } else {
                    HOSTILE[*n % HOSTILE.len()].to_string()
                };
                *n += 1;
            }
            Value::Array(items) => items.iter_mut().for_each(|i| walk(i, key, keep, n)),
            Value::Object(map) => map.iter_mut().for_each(|(k, i)| walk(i, k, keep, n)),
            _ => {}
        }
    }
    walk(&mut entry, "", &keep, &mut n);
    entry["id"] = id.into();
    entry["transition_graph"] =
        json!({"leads_to": [], "preceded_by": [], "frequently_confused_with": []});
    entry["official_doc_url"] = "javascript:window.__pwned=7".into();
    entry["dead_ends"][0]["sources"] = json!([
        "javascript:window.__pwned=8",
        "data:text/html,<script>window.__pwned=9</script>"
    ]);
    entry["tags"] = json!(HOSTILE);
    entry
}

/// The site of a knowledge base whose every field is hostile, rendered by the site crate
/// directly (the checker would refuse the `javascript:` URLs before a build: the site
/// must be safe on its own), then opened page by page in headless Chromium: no script
/// of theirs runs (the page's own `window.__pwned` stays unset, no console error, no
/// CSP violation), no `on*` attribute or `javascript:`/`data:` link reaches the DOM, and
/// the layout holds (nothing wider than the window; screenshots in target/screenshots/).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_strings_render_inert_in_headless_chromium() {
    let Some(session) = start_session().await else {
        return;
    };
    let b = &session.browser;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("signatures/cuda")).unwrap();
    std::fs::create_dir_all(data.join("articles/cuda")).unwrap();
    std::fs::write(
        data.join("signatures/cuda/hostile.json"),
        hostile_entry("cuda/hostile").to_string(),
    )
    .unwrap();
    let mut article = String::from(
        "---\ntitle: \"<script>window.__pwned = 10</script>\"\nid: cuda/hostile-article\ndate: \"2025-01-01\"\nsignatures: [cuda/hostile]\ntags: [\"<img src=x onerror=window.__pwned=11>\"]\n---\n# Heading <script>window.__pwned = 12</script>\n\n",
    );
    article += "<script>window.__pwned = 13</script>\n\n<iframe src=\"javascript:window.__pwned=14\"></iframe>\n\n";
    article += "[a](javascript:window.__pwned=15) [b](JAVASCRIPT:window.__pwned=16) [c]( javascript:window.__pwned=17 ) [d](data:text/html,x) <javascript:window.__pwned=18>\n\n";
    article += "![img](javascript:window.__pwned=19) <a href=\"javascript:window.__pwned=20\">raw</a> <b onmouseover=\"window.__pwned=21\">bold</b>\n\n";
    article += "```python\n</code></pre><script>window.__pwned = 22</script>\n```\n\n";
    article += &format!("{}\n\n{}\n", long_word(), HOSTILE.join("\n\n"));
    let mut bytes = article.into_bytes();
    bytes.extend_from_slice(b"\n\nbroken UTF-8: \xff\xfe\xc3 end\n");
    std::fs::write(data.join("articles/cuda/hostile-article.md"), bytes).unwrap();

    let kb = errata_load::KnowledgeBase::load(&data).expect("load");
    assert_eq!(kb.entries.len(), 1);
    assert_eq!(kb.articles.len(), 1);
    let site_dir = dir.path().join("site");
    let written = errata_site::render_into(&kb, &errata_site::SiteOptions::default(), &site_dir)
        .expect("render");
    written.replaced.remove();

    // In the files: no markup of theirs, and only the site's own scripts.
    for page in walk_html(&site_dir) {
        let html = std::fs::read_to_string(&page).unwrap();
        let rel = page.strip_prefix(&site_dir).unwrap().display().to_string();
        // Their markup may appear only escaped, as text (`&lt;script&gt;…`).
        for tag in [
            "<script>window",
            "<svg",
            "<iframe",
            "<img src=x",
            "<a href=javascript",
            "<a href=\"javascript",
            "<b onmouseover",
        ] {
            assert!(
                !html.contains(tag),
                "{rel}: `{tag}` reached the page as markup"
            );
        }
    }

    let server = Server::start("127.0.0.1:0", site_dir.clone(), false).expect("serve");
    let base = server.url();
    let pages = [
        ("entries/cuda/hostile.html", "hostile-entry-en"),
        ("zh/entries/cuda/hostile.html", "hostile-entry-zh"),
        ("articles/cuda/hostile-article.html", "hostile-article"),
        ("index.html", "hostile-home"),
    ];
    // And every tag page their tags made.
    let mut tag_pages: Vec<String> = std::fs::read_dir(site_dir.join("tags"))
        .expect("tags/")
        .map(|e| format!("tags/{}", e.expect("entry").file_name().to_string_lossy()))
        .collect();
    tag_pages.sort();
    assert!(!tag_pages.is_empty());
    let tag_shots: Vec<String> = (0..tag_pages.len())
        .map(|i| format!("hostile-tag-{i}"))
        .collect();
    let pages = pages
        .iter()
        .map(|(p, s)| (p.to_string(), s.to_string()))
        .chain(tag_pages.into_iter().zip(tag_shots));
    for (page, shot) in pages {
        let (page, shot) = (page.as_str(), shot.as_str());
        assert!(site_dir.join(page).is_file(), "{page} was rendered");
        b.client
            .goto(&format!("{base}{page}"))
            .await
            .expect("open page");
        // Hover and click everything, so an event handler would have its chance.
        let report = b
            .js(r#"
            document.querySelectorAll("body *").forEach(function (el) {
              ["mouseover", "focus", "click"].forEach(function (t) {
                if (t === "click" && (el.tagName === "A" || el.tagName === "BUTTON")) return;
                el.dispatchEvent(new Event(t));
              });
            });
            var handlers = [], bad = [];
            document.querySelectorAll("*").forEach(function (el) {
              Array.from(el.attributes).forEach(function (a) {
                if (/^on/i.test(a.name)) handlers.push(el.tagName + " " + a.name);
                if (/^(href|src|action|formaction)$/i.test(a.name) && /^\s*(javascript|data|vbscript):/i.test(a.value))
                  bad.push(el.tagName + " " + a.name + "=" + a.value.slice(0, 40));
              });
            });
            // JSON-LD is data, not code; it must still parse (a `</script>` in a
            // string would have ended it early).
            var theirs = Array.from(document.scripts).filter(function (s) {
              if (s.type === "application/ld+json") {
                try { JSON.parse(s.textContent); return false; } catch (e) { return true; }
              }
              return !s.src || new URL(s.src).origin !== location.origin;
            }).map(function (s) { return (s.src || s.textContent).slice(0, 60); });
            return {pwned: typeof window.__pwned, handlers: handlers, bad: bad, theirs: theirs,
                    iframes: document.querySelectorAll("iframe, object, embed").length,
                    overflow: document.documentElement.scrollWidth - window.innerWidth};
        "#)
            .await;
        b.shot(shot).await;
        assert_eq!(report["pwned"], "undefined", "{page}: a hostile script ran");
        assert_eq!(report["handlers"], json!([]), "{page}: event attributes");
        assert_eq!(report["bad"], json!([]), "{page}: script URLs");
        assert_eq!(
            report["theirs"],
            json!([]),
            "{page}: inline or foreign scripts"
        );
        assert_eq!(report["iframes"], 0, "{page}: embedded frames");
        assert!(
            report["overflow"].as_i64().is_some_and(|o| o <= 0),
            "{page}: the page is {} px wider than the window",
            report["overflow"]
        );
        b.assert_no_console_errors(page);
    }
    let _ = b.client.clone().close().await;
}
