//! The HTTP side: checking distinct URLs politely.
//!
//! Politeness is the point of this module: at most [`CheckOptions::concurrency`] URLs in
//! flight overall and [`CheckOptions::per_host`] requests to any one host, retries with
//! exponential backoff, and a `429` with `Retry-After` pauses every request to that host
//! (not just the one that was refused).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use reqwest::{Method, StatusCode, Url};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use crate::outcome::Outcome;
use crate::retry_after::retry_after;

/// How to check: timeouts, limits, retries.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Time allowed to establish a connection.
    pub connect_timeout: Duration,
    /// Time allowed for one request, connecting included, until the response headers.
    pub timeout: Duration,
    /// URLs checked at the same time, overall.
    pub concurrency: usize,
    /// Requests in flight to one host (`host:port`) at the same time.
    pub per_host: usize,
    /// Redirects followed before giving up with "too many redirects".
    pub max_redirects: usize,
    /// Retries after a connection error, a timeout, a 5xx or a 429 (so up to
    /// `retries + 1` attempts per URL and hop).
    pub retries: u32,
    /// The first backoff; each further retry waits twice as long.
    pub backoff: Duration,
    /// The longest `Retry-After` honoured; a server asking for more gets this.
    pub max_retry_wait: Duration,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// Hosts (`host` or `host:port`) exempt from the refusal of loopback, private,
    /// link-local and internal hosts (a local mirror, a test server). No request ever goes
    /// to any other such host: not the URL as written, not a redirect's target.
    pub allow_hosts: Vec<String>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            connect_timeout: Duration::from_secs(10),
            timeout: Duration::from_secs(20),
            concurrency: 16,
            per_host: 2,
            max_redirects: 10,
            retries: 2,
            backoff: Duration::from_millis(500),
            max_retry_wait: Duration::from_secs(60),
            user_agent: format!(
                "errata-links/{} (+https://github.com/errata-kb/errata)",
                env!("CARGO_PKG_VERSION")
            ),
            allow_hosts: Vec::new(),
        }
    }
}

/// Checks URLs over HTTP. Build one per run: it holds the connection pool and the
/// per-host limits.
pub struct Checker {
    inner: Arc<Inner>,
}

struct Inner {
    client: reqwest::Client,
    options: CheckOptions,
    hosts: Mutex<HashMap<String, Arc<Host>>>,
}

/// One host's share of politeness.
struct Host {
    slots: Semaphore,
    /// Set by a `429 Retry-After`: no request to this host before then.
    not_before: Mutex<Option<Instant>>,
}

/// What one request got back.
struct Reply {
    status: StatusCode,
    location: Option<String>,
    retry_after: Option<Duration>,
}

impl Checker {
    /// A checker with these options. Fails only when the HTTP client cannot be built
    /// (the TLS backend did not initialise).
    pub fn new(options: CheckOptions) -> Result<Checker, crate::Error> {
        let client = reqwest::Client::builder()
            // Redirects are followed by hand: a permanent one is reported, a loop is named.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(options.connect_timeout)
            .timeout(options.timeout)
            .user_agent(options.user_agent.clone())
            .build()
            .map_err(|e| crate::Error::Client(e.to_string()))?;
        let hosts = Mutex::new(HashMap::new());
        Ok(Checker {
            inner: Arc::new(Inner {
                client,
                options,
                hosts,
            }),
        })
    }

    /// Checks each URL once (the caller passes distinct URLs) and calls `on_done` as each
    /// finishes (for a progress bar). Blocks until all are done.
    pub fn check_all(
        &self,
        urls: &[String],
        on_done: impl Fn(&str, &Outcome) + Send + Sync + 'static,
    ) -> Result<BTreeMap<String, Outcome>, crate::Error> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| crate::Error::Client(format!("cannot start the async runtime: {e}")))?;
        let on_done = Arc::new(on_done);
        runtime.block_on(async {
            let overall = Arc::new(Semaphore::new(self.inner.options.concurrency.max(1)));
            let mut tasks = tokio::task::JoinSet::new();
            for url in urls {
                let (inner, overall, on_done, url) = (
                    self.inner.clone(),
                    overall.clone(),
                    on_done.clone(),
                    url.clone(),
                );
                tasks.spawn(async move {
                    // The semaphore is never closed, so acquiring cannot fail.
                    let _slot = overall.acquire_owned().await.ok();
                    let outcome = inner.check_url(&url).await;
                    on_done(&url, &outcome);
                    (url, outcome)
                });
            }
            let mut results = BTreeMap::new();
            while let Some(joined) = tasks.join_next().await {
                let (url, outcome) = joined
                    .map_err(|e| crate::Error::Client(format!("a link check failed: {e}")))?;
                results.insert(url, outcome);
            }
            Ok(results)
        })
    }
}

impl Inner {
    /// `Ok` when `url` may be requested: a public host, or one of
    /// [`CheckOptions::allow_hosts`].
    fn reachable(&self, url: &Url) -> Result<(), String> {
        let host = url.host_str().unwrap_or_default();
        let with_port = url
            .port_or_known_default()
            .map(|p| format!("{host}:{p}"))
            .unwrap_or_default();
        if self
            .options
            .allow_hosts
            .iter()
            .any(|a| a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(&with_port))
        {
            return Ok(());
        }
        errata_model::host::public_host(host).map_err(|why| format!("{url}: {why}"))
    }

    /// Follows `url` through its redirects to a verdict.
    async fn check_url(&self, url: &str) -> Outcome {
        let Ok(mut current) = Url::parse(url) else {
            return Outcome::Dead {
                status: None,
                reason: "not a valid URL".into(),
            };
        };
        if let Err(why) = self.reachable(&current) {
            return Outcome::Dead {
                status: None,
                reason: format!("not requested: {why}"),
            };
        }
        let mut chain = vec![current.clone()];
        // The URL to write instead: where the leading run of permanent redirects ends.
        let mut moved_to: Option<Url> = None;
        let mut only_permanent = true;
        loop {
            let reply = match self.probe(&current).await {
                Ok(reply) => reply,
                Err(reason) => {
                    return Outcome::Dead {
                        status: None,
                        reason: after(reason, &chain),
                    };
                }
            };
            let status = reply.status;
            if status.is_redirection() && status != StatusCode::NOT_MODIFIED {
                let Some(next) = reply.location.as_deref().and_then(|l| current.join(l).ok())
                else {
                    let reason = format!("HTTP {status} without a valid Location header");
                    return Outcome::Dead {
                        status: Some(status.as_u16()),
                        reason: after(reason, &chain),
                    };
                };
                if !matches!(next.scheme(), "http" | "https") {
                    let reason = format!("redirects to a non-HTTP URL: {next}");
                    return Outcome::Dead {
                        status: Some(status.as_u16()),
                        reason,
                    };
                }
                // A public page that redirects into a private network (a cloud metadata
                // address, a router) is not followed: the request would come from here.
                if let Err(why) = self.reachable(&next) {
                    return Outcome::Dead {
                        status: Some(status.as_u16()),
                        reason: after(format!("redirect not followed: {why}"), &chain),
                    };
                }
                let mut seen = next.clone();
                seen.set_fragment(None);
                if chain.iter().any(|u| without_fragment(u) == seen) {
                    chain.push(next);
                    let path: Vec<&str> = chain.iter().map(Url::as_str).collect();
                    return Outcome::Dead {
                        status: Some(status.as_u16()),
                        reason: format!("redirect loop: {}", path.join(" → ")),
                    };
                }
                if chain.len() > self.options.max_redirects {
                    let reason = format!(
                        "too many redirects (more than {}), last to {next}",
                        self.options.max_redirects
                    );
                    return Outcome::Dead {
                        status: Some(status.as_u16()),
                        reason,
                    };
                }
                let permanent = matches!(
                    status,
                    StatusCode::MOVED_PERMANENTLY | StatusCode::PERMANENT_REDIRECT
                );
                only_permanent &= permanent;
                if only_permanent {
                    moved_to = Some(next.clone());
                }
                chain.push(next.clone());
                current = next;
                continue;
            }
            let code = status.as_u16();
            return if status.is_success() {
                match moved_to {
                    Some(to) => Outcome::Moved {
                        status: code,
                        to: to.into(),
                    },
                    None => Outcome::Alive { status: code },
                }
            } else if status == StatusCode::TOO_MANY_REQUESTS {
                let reason = format!(
                    "still rate-limited (HTTP 429) after {} attempts",
                    self.options.retries + 1
                );
                Outcome::Unknown {
                    reason: after(reason, &chain),
                }
            } else {
                Outcome::Dead {
                    status: Some(code),
                    reason: after(format!("HTTP {status}"), &chain),
                }
            };
        }
    }

    /// One hop: HEAD (or GET where HEAD is refused), with retries and backoff.
    async fn probe(&self, url: &Url) -> Result<Reply, String> {
        let host = self.host(url);
        let mut attempt = 0;
        loop {
            let result = self.head_or_get(&host, url).await;
            let retryable = match &result {
                Ok(reply) => {
                    reply.status.is_server_error() || reply.status == StatusCode::TOO_MANY_REQUESTS
                }
                Err(_) => true,
            };
            if !retryable || attempt >= self.options.retries {
                return result;
            }
            let asked_to_wait = matches!(
                &result,
                Ok(Reply {
                    retry_after: Some(_),
                    ..
                })
            );
            if !asked_to_wait {
                // (With a Retry-After, `request` has paused the host and the retry waits
                // its turn there instead.)
                tokio::time::sleep(self.options.backoff.saturating_mul(1 << attempt.min(16))).await;
            }
            attempt += 1;
        }
    }

    /// HEAD, then GET when the server refuses HEAD (405, 501, or another 4xx: many
    /// servers answer HEAD wrongly).
    async fn head_or_get(&self, host: &Host, url: &Url) -> Result<Reply, String> {
        let head = self.request(host, Method::HEAD, url).await?;
        let refused = head.status == StatusCode::METHOD_NOT_ALLOWED
            || head.status == StatusCode::NOT_IMPLEMENTED
            || (head.status.is_client_error() && head.status != StatusCode::TOO_MANY_REQUESTS);
        if refused {
            self.request(host, Method::GET, url).await
        } else {
            Ok(head)
        }
    }

    /// One request, within the host's limits; the body is never read.
    ///
    /// A `429` (or `503`) with `Retry-After` pauses the whole host: the server asked
    /// everyone to wait, not just this request. The pause is set while the host slot is
    /// still held, so no queued request slips through before it.
    async fn request(&self, host: &Host, method: Method, url: &Url) -> Result<Reply, String> {
        let _slot = host.slots.acquire().await.ok();
        host.wait_turn().await;
        let response = self
            .client
            .request(method, url.clone())
            .send()
            .await
            .map_err(|e| self.describe(&e))?;
        let header = |name| {
            response
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let status = response.status();
        let retry_after = (status == StatusCode::TOO_MANY_REQUESTS
            || status == StatusCode::SERVICE_UNAVAILABLE)
            .then(|| header(reqwest::header::RETRY_AFTER))
            .flatten()
            .and_then(|v| retry_after(&v, SystemTime::now()))
            .map(|asked| asked.min(self.options.max_retry_wait));
        if let Some(wait) = retry_after {
            host.hold_until(Instant::now() + wait);
        }
        Ok(Reply {
            status,
            location: header(reqwest::header::LOCATION),
            retry_after,
        })
    }

    fn host(&self, url: &Url) -> Arc<Host> {
        let key = format!(
            "{}:{}",
            url.host_str().unwrap_or(""),
            url.port_or_known_default().unwrap_or(0)
        );
        let mut hosts = self
            .hosts
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        hosts
            .entry(key)
            .or_insert_with(|| {
                Arc::new(Host {
                    slots: Semaphore::new(self.options.per_host.max(1)),
                    not_before: Mutex::new(None),
                })
            })
            .clone()
    }

    /// A short reason for a failed request, with the underlying cause (reqwest's own
    /// message is just "error sending request for url (…)").
    fn describe(&self, err: &reqwest::Error) -> String {
        if err.is_timeout() {
            return format!(
                "timed out (no response within {})",
                secs(self.options.timeout)
            );
        }
        let mut cause: &dyn std::error::Error = err;
        while let Some(source) = cause.source() {
            cause = source;
        }
        let what = if err.is_connect() {
            "connection failed"
        } else {
            "request failed"
        };
        format!("{what}: {cause}")
    }
}

impl Host {
    fn hold_until(&self, until: Instant) {
        let mut not_before = self.not_before.lock().unwrap_or_else(|p| p.into_inner());
        *not_before = Some(not_before.map_or(until, |t| t.max(until)));
    }

    async fn wait_turn(&self) {
        let until = *self.not_before.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(until) = until {
            tokio::time::sleep_until(until).await;
        }
    }
}

fn without_fragment(url: &Url) -> Url {
    let mut url = url.clone();
    url.set_fragment(None);
    url
}

/// Appends where the failure happened when it was not at the URL as written.
fn after(reason: String, chain: &[Url]) -> String {
    match chain {
        [_, .., last] => format!("{reason} (after redirects to {last})"),
        _ => reason,
    }
}

fn secs(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{} s", d.as_secs())
    } else {
        format!("{} ms", d.as_millis())
    }
}
