//! Every server behaviour `errata links` must handle, against a real server on 127.0.0.1.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use errata_links::{CheckOptions, Checker, Outcome};
use support::{Reply, Server, redirect};

fn options() -> CheckOptions {
    CheckOptions {
        connect_timeout: Duration::from_secs(2),
        timeout: Duration::from_millis(400),
        retries: 2,
        backoff: Duration::from_millis(20),
        max_retry_wait: Duration::from_secs(5),
        // The test servers listen on 127.0.0.1; any other private host stays refused.
        allow_hosts: vec!["127.0.0.1".into()],
        ..CheckOptions::default()
    }
}

fn check_with(options: CheckOptions, urls: &[String]) -> BTreeMap<String, Outcome> {
    Checker::new(options)
        .unwrap()
        .check_all(urls, |_, _| {})
        .unwrap()
}

fn check_one(options: CheckOptions, url: String) -> Outcome {
    check_with(options, std::slice::from_ref(&url))
        .remove(&url)
        .unwrap()
}

fn ok() -> Reply {
    Reply::Status(200, vec![])
}

fn status(code: u16) -> Reply {
    Reply::Status(code, vec![])
}

fn dead_reason(outcome: &Outcome) -> &str {
    match outcome {
        Outcome::Dead { reason, .. } => reason,
        other => panic!("expected a dead link, got {other:?}"),
    }
}

#[test]
fn ok_is_alive_with_a_single_head() {
    let server = Server::start(|_, _, _| ok());
    assert_eq!(
        check_one(options(), server.url("/ok")),
        Outcome::Alive { status: 200 }
    );
    assert_eq!(server.requests("/ok"), ["HEAD /ok"]);
}

#[test]
fn not_found_and_gone_are_dead_with_their_status() {
    let server = Server::start(|_, path, _| match path {
        "/missing" => status(404),
        _ => status(410),
    });
    let results = check_with(options(), &[server.url("/missing"), server.url("/gone")]);
    let missing = &results[&server.url("/missing")];
    assert!(
        matches!(
            missing,
            Outcome::Dead {
                status: Some(404),
                ..
            }
        ),
        "{missing:?}"
    );
    assert!(
        dead_reason(missing).contains("404 Not Found"),
        "{missing:?}"
    );
    assert!(matches!(
        results[&server.url("/gone")],
        Outcome::Dead {
            status: Some(410),
            ..
        }
    ));
    // A 4xx on HEAD is confirmed with GET before the link is called dead; no retries.
    assert_eq!(
        server.requests("/missing"),
        ["HEAD /missing", "GET /missing"]
    );
}

#[test]
fn head_refused_falls_back_to_get() {
    let server = Server::start(|method, _, _| if method == "HEAD" { status(405) } else { ok() });
    assert_eq!(
        check_one(options(), server.url("/no-head")),
        Outcome::Alive { status: 200 }
    );
    assert_eq!(
        server.requests("/no-head"),
        ["HEAD /no-head", "GET /no-head"]
    );
}

#[test]
fn permanent_redirect_chain_is_moved_to_its_end() {
    let server = Server::start(|_, path, _| match path {
        "/chain/1" => redirect(301, "/chain/2"),
        "/chain/2" => redirect(308, "/chain/3"),
        _ => ok(),
    });
    let outcome = check_one(options(), server.url("/chain/1"));
    assert_eq!(
        outcome,
        Outcome::Moved {
            status: 200,
            to: server.url("/chain/3")
        }
    );
    let paths: Vec<_> = server.seen().iter().map(|s| s.path.clone()).collect();
    assert_eq!(paths, ["/chain/1", "/chain/2", "/chain/3"]);
}

#[test]
fn temporary_redirects_are_not_reported_and_stop_the_permanent_run() {
    let server = Server::start(|_, path, _| match path {
        "/temp" => redirect(302, "/ok"),
        "/perm-then-temp" => redirect(301, "/new-home"),
        "/new-home" => redirect(307, "/ok"),
        _ => ok(),
    });
    let results = check_with(
        options(),
        &[server.url("/temp"), server.url("/perm-then-temp")],
    );
    assert_eq!(
        results[&server.url("/temp")],
        Outcome::Alive { status: 200 }
    );
    assert_eq!(
        results[&server.url("/perm-then-temp")],
        Outcome::Moved {
            status: 200,
            to: server.url("/new-home")
        }
    );
}

#[test]
fn permanent_redirect_to_a_dead_page_is_dead() {
    let server = Server::start(|_, path, _| match path {
        "/old" => redirect(301, "/vanished"),
        _ => status(404),
    });
    let outcome = check_one(options(), server.url("/old"));
    let reason = dead_reason(&outcome);
    assert!(
        reason.contains("404") && reason.contains("/vanished"),
        "{reason}"
    );
}

#[test]
fn redirect_loop_is_named_and_not_followed_forever() {
    let server = Server::start(|_, path, _| match path {
        "/loop/a" => redirect(301, "/loop/b"),
        _ => redirect(302, "/loop/a"),
    });
    let outcome = check_one(options(), server.url("/loop/a"));
    let reason = dead_reason(&outcome);
    let expected = format!(
        "redirect loop: {a} → {b} → {a}",
        a = server.url("/loop/a"),
        b = server.url("/loop/b")
    );
    assert_eq!(reason, expected);
    assert_eq!(server.seen().len(), 2);
}

#[test]
fn over_long_redirect_chain_is_dead() {
    let server = Server::start(|_, path, _| {
        let n: u32 = path.trim_start_matches("/hop/").parse().unwrap_or(0);
        redirect(302, &format!("/hop/{}", n + 1))
    });
    let outcome = check_one(
        CheckOptions {
            max_redirects: 4,
            ..options()
        },
        server.url("/hop/0"),
    );
    assert!(
        dead_reason(&outcome).starts_with("too many redirects (more than 4)"),
        "{outcome:?}"
    );
    assert_eq!(server.seen().len(), 5, "the first request and 4 redirects");
}

#[test]
fn too_many_requests_waits_for_retry_after_then_retries() {
    let server = Server::start(|_, _, n| {
        if n == 0 {
            Reply::Status(429, vec![("Retry-After", "1".into())])
        } else {
            ok()
        }
    });
    assert_eq!(
        check_one(options(), server.url("/limited")),
        Outcome::Alive { status: 200 }
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 2, "{seen:?}");
    let waited = seen[1].at - seen[0].at;
    // The backoff alone is 20 ms; only honouring Retry-After makes it a second.
    assert!(
        waited >= Duration::from_millis(950),
        "retried after {waited:?}"
    );
}

#[test]
fn retry_after_as_an_http_date_and_capped() {
    let date = httpdate::fmt_http_date(std::time::SystemTime::now() + Duration::from_secs(3_600));
    let server = Server::start(move |_, _, n| {
        if n == 0 {
            Reply::Status(429, vec![("Retry-After", date.clone())])
        } else {
            ok()
        }
    });
    let started = Instant::now();
    let capped = CheckOptions {
        max_retry_wait: Duration::from_millis(300),
        ..options()
    };
    assert_eq!(
        check_one(capped, server.url("/limited")),
        Outcome::Alive { status: 200 }
    );
    let seen = server.seen();
    let waited = seen[1].at - seen[0].at;
    assert!(
        waited >= Duration::from_millis(280),
        "the date was parsed and honoured: {waited:?}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "an hour is capped"
    );
}

#[test]
fn a_429_pauses_the_whole_host() {
    // The first request of all is refused with Retry-After: 1; the other URLs on the same
    // host, already queued, must wait out the pause too.
    let first = std::sync::atomic::AtomicBool::new(true);
    let server = Server::start(move |_, _, _| {
        if first.swap(false, std::sync::atomic::Ordering::SeqCst) {
            Reply::Status(429, vec![("Retry-After", "1".into())])
        } else {
            ok()
        }
    });
    let urls = [server.url("/a"), server.url("/b"), server.url("/c")];
    let results = check_with(
        CheckOptions {
            per_host: 1,
            ..options()
        },
        &urls,
    );
    assert!(
        results
            .values()
            .all(|o| *o == Outcome::Alive { status: 200 }),
        "{results:?}"
    );
    let seen = server.seen();
    assert_eq!(seen.len(), 4, "{seen:?}");
    for later in &seen[1..] {
        assert!(
            later.at - seen[0].at >= Duration::from_millis(950),
            "{} was sent during the pause",
            later.path
        );
    }
}

#[test]
fn still_rate_limited_is_unknown_not_dead() {
    let server = Server::start(|_, _, _| Reply::Status(429, vec![("Retry-After", "0".into())]));
    let outcome = check_one(options(), server.url("/busy"));
    assert!(matches!(outcome, Outcome::Unknown { .. }), "{outcome:?}");
    assert_eq!(server.seen().len(), 3, "one attempt and two retries");
}

#[test]
fn server_errors_are_retried_with_backoff() {
    let server = Server::start(|_, path, n| match path {
        "/flaky" if n == 0 => status(503),
        "/flaky" => ok(),
        _ => status(500),
    });
    let options = CheckOptions {
        backoff: Duration::from_millis(200),
        ..options()
    };
    let results = check_with(options, &[server.url("/flaky"), server.url("/broken")]);
    assert_eq!(
        results[&server.url("/flaky")],
        Outcome::Alive { status: 200 }
    );
    let flaky = server
        .seen()
        .into_iter()
        .filter(|s| s.path == "/flaky")
        .collect::<Vec<_>>();
    assert!(
        flaky[1].at - flaky[0].at >= Duration::from_millis(190),
        "no backoff before the retry"
    );
    assert!(matches!(
        results[&server.url("/broken")],
        Outcome::Dead {
            status: Some(500),
            ..
        }
    ));
    // 200 ms, then 400 ms: the backoff doubles.
    let broken = server
        .seen()
        .into_iter()
        .filter(|s| s.path == "/broken")
        .collect::<Vec<_>>();
    assert_eq!(broken.len(), 3);
    assert!(
        broken[2].at - broken[1].at >= Duration::from_millis(390),
        "backoff did not double"
    );
}

#[test]
fn a_server_that_never_answers_times_out() {
    let server = Server::start(|_, _, _| Reply::Hang(Duration::from_secs(10)));
    let started = Instant::now();
    let outcome = check_one(
        CheckOptions {
            retries: 1,
            ..options()
        },
        server.url("/hang"),
    );
    let reason = dead_reason(&outcome);
    assert!(
        reason.starts_with("timed out (no response within 400 ms)"),
        "{reason}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(server.seen().len(), 2, "a timeout is retried once");
}

#[test]
fn a_server_that_closes_the_connection_is_dead_after_retries() {
    let server = Server::start(|_, _, _| Reply::Close);
    let outcome = check_one(options(), server.url("/closed"));
    let reason = dead_reason(&outcome);
    assert!(reason.starts_with("request failed:"), "{reason}");
    assert_eq!(server.seen().len(), 3, "one attempt and two retries");
}

#[test]
fn nothing_listening_is_a_connection_failure() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let outcome = check_one(
        CheckOptions {
            retries: 0,
            ..options()
        },
        format!("http://127.0.0.1:{port}/"),
    );
    assert!(
        dead_reason(&outcome).starts_with("connection failed:"),
        "{outcome:?}"
    );
}

#[test]
fn requests_to_one_host_are_limited() {
    let server = Server::start(|_, _, _| Reply::Slow(Duration::from_millis(150), 200));
    let urls: Vec<_> = (0..6).map(|i| server.url(&format!("/slow/{i}"))).collect();
    let results = check_with(
        CheckOptions {
            per_host: 2,
            concurrency: 16,
            ..options()
        },
        &urls,
    );
    assert_eq!(results.len(), 6);
    assert_eq!(server.max_in_flight(), 2);
}

#[test]
fn urls_in_flight_are_limited_overall() {
    // Three hosts (ports), two slow URLs each; two at a time overall means three rounds.
    let servers: Vec<_> = (0..3)
        .map(|_| Server::start(|_, _, _| Reply::Slow(Duration::from_millis(200), 200)))
        .collect();
    let urls: Vec<_> = servers
        .iter()
        .flat_map(|s| [s.url("/x"), s.url("/y")])
        .collect();
    let started = Instant::now();
    let results = check_with(
        CheckOptions {
            per_host: 2,
            concurrency: 2,
            ..options()
        },
        &urls,
    );
    assert!(
        results
            .values()
            .all(|o| *o == Outcome::Alive { status: 200 })
    );
    assert!(
        started.elapsed() >= Duration::from_millis(590),
        "took {:?}",
        started.elapsed()
    );
}

/// No request goes to a loopback, private or internal host that was not allowed: not a
/// URL as written, not a redirect's target (a public page redirecting to a cloud
/// metadata address must not make errata fetch it).
#[test]
fn private_hosts_are_refused_before_and_after_redirects() {
    let server = Server::start(|_, path, _| match path {
        "/to-localhost" => redirect(302, "http://localhost:1/secret"),
        "/to-metadata" => redirect(301, "http://169.254.169.254/latest/meta-data/"),
        "/to-mapped" => redirect(302, "http://[::ffff:127.0.0.1]:1/"),
        _ => Reply::Status(200, vec![]),
    });
    for path in ["/to-localhost", "/to-metadata", "/to-mapped"] {
        match check_one(options(), server.url(path)) {
            Outcome::Dead { reason, .. } => {
                assert!(reason.contains("redirect not followed"), "{path}: {reason}");
            }
            other => panic!("{path}: {other:?}"),
        }
    }
    // Only the allowed host: the same server by another loopback name is refused.
    let as_localhost = server.url("/ok").replace("127.0.0.1", "localhost");
    match check_one(options(), as_localhost) {
        Outcome::Dead { reason, status } => {
            assert!(reason.starts_with("not requested:"), "{reason}");
            assert_eq!(status, None);
        }
        other => panic!("{other:?}"),
    }
    // The server saw the three first hops and nothing else (the localhost-named request
    // was never sent).
    let mut paths: Vec<String> = server.seen().into_iter().map(|s| s.path).collect();
    paths.sort();
    paths.dedup();
    assert_eq!(paths, ["/to-localhost", "/to-mapped", "/to-metadata"]);
}
