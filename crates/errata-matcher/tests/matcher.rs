//! Matching behaviour on realistic patterns and logs.

use errata_matcher::{Matcher, Pattern, Via};

fn matcher(patterns: &[Pattern]) -> Matcher {
    Matcher::new(patterns).unwrap_or_else(|e| panic!("patterns do not compile: {e:?}"))
}

#[test]
fn most_specific_pattern_ranks_first() {
    let m = matcher(&[
        Pattern::new(r"CUDA error"),
        Pattern::new(r"CUDA error: out of memory"),
        Pattern::new(r"(?i)out of memory"),
        Pattern::new(r"Tried to allocate \d+\.\d+ [GM]iB"),
    ]);
    let text = "torch.OutOfMemoryError: CUDA error: out of memory. Tried to allocate 2.00 GiB";
    let ranked: Vec<usize> = m.matches(text).iter().map(|x| x.pattern).collect();
    assert_eq!(ranked, [1, 3, 2, 0]);
    let top = &m.matches(text)[0];
    assert_eq!(&text[top.span.clone()], "CUDA error: out of memory");
}

#[test]
fn scan_reports_lines_and_never_crosses_them() {
    let m = matcher(&[
        Pattern::new(r"illegal\s+memory\s+access"),
        Pattern::new(r"^NCCL WARN .*timeout$"),
    ]);
    let log = b"ok\nillegal\nmemory access\nan illegal memory access was encountered\r\nNCCL WARN watchdog timeout\r\n";
    let mut hits = Vec::new();
    m.scan(log, |x| {
        hits.push((
            x.line,
            x.pattern,
            String::from_utf8_lossy(&log[x.span.clone()]).into_owned(),
        ))
    });
    assert_eq!(
        hits,
        [
            (3, 0, "illegal memory access".to_string()),
            (4, 1, "NCCL WARN watchdog timeout".to_string())
        ]
    );
}

#[test]
fn one_match_per_pattern_per_line() {
    let m = matcher(&[
        Pattern::new("device-side assert").with_aliases(["DEVICE-SIDE ASSERT triggered"])
    ]);
    let log = b"device-side assert triggered; device-side assert again\nnothing\nDevice-Side Assert Triggered\n";
    let mut hits = Vec::new();
    m.scan(log, |x| hits.push((x.line, x.via, x.span.start)));
    let third_line = log
        .iter()
        .rposition(|&b| b == b'\n')
        .and_then(|end| log[..end].iter().rposition(|&b| b == b'\n'))
        .unwrap()
        + 1;
    // Line 0: both match, the regex is reported (an alias never counts for more than
    // its regex); line 2 only the case-insensitive alias matches.
    assert_eq!(hits, [(0, Via::Regex, 0), (2, Via::Alias(0), third_line)]);
}

#[test]
fn an_alias_never_outranks_a_more_specific_regex() {
    // The shape of the real `cuda/illegal-memory-access` and its `-after-free` variant:
    // the general entry's alias is a prefix of the specific entry's signature.
    let m = matcher(&[
        Pattern::new("an illegal memory access was encountered(?:$|[^ ]| [^a]| a[^f])|cudaErrorIllegalAddress")
            .with_aliases(["RuntimeError: CUDA error: an illegal memory access was encountered"]),
        Pattern::new("illegal memory access was encountered after a cudaFree"),
    ]);
    let text =
        "RuntimeError: CUDA error: an illegal memory access was encountered after a cudaFree call";
    let ranked: Vec<(usize, Via)> = m.matches(text).iter().map(|x| (x.pattern, x.via)).collect();
    assert_eq!(ranked, [(1, Via::Regex), (0, Via::Alias(0))]);
}

#[test]
fn patterns_without_literals_still_match() {
    let m = matcher(&[
        Pattern::new(r"\d{3,}\s+\w+\s\d+"),
        Pattern::new("cudaErrorLaunchFailure"),
    ]);
    assert_eq!(m.stats().unfiltered, 1);
    let found = m.matches("at 1234 kernel 42 after cudaErrorLaunchFailure");
    let ids: Vec<usize> = found.iter().map(|x| x.pattern).collect();
    assert_eq!(ids, [1, 0]);
    let mut lines = Vec::new();
    m.scan(b"x\n99 a 1\n1234 kernel 42\n", |x| lines.push(x.line));
    assert_eq!(lines, [2]);
}

#[test]
fn chinese_and_invalid_utf8_text() {
    let m = matcher(&[Pattern::new("非法内存访问"), Pattern::new("CUDA error")]);
    let mut log = b"\xff\xfe garbage\n".to_vec();
    log.extend_from_slice("运行时错误：遇到非法内存访问\n\u{0}CUDA error\n".as_bytes());
    let mut hits = Vec::new();
    m.scan(&log, |x| hits.push((x.line, x.pattern)));
    assert_eq!(hits, [(1, 0), (2, 1)]);
}

#[test]
fn bad_patterns_are_reported_by_index() {
    let errors = Matcher::new(&[
        Pattern::new("fine"),
        Pattern::new("(unclosed"),
        Pattern::new("(a{1000}){1000}"),
        Pattern::new("x*"),
        Pattern::new("a".repeat(10_000)),
        Pattern::new("((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((((x))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))))"),
    ])
    .err()
    .unwrap_or_default();
    let indexes: Vec<usize> = errors.iter().map(|(i, _)| *i).collect();
    assert_eq!(indexes, [1, 2, 3, 4, 5]);
    assert!(errors[1].1.contains("more than"), "{}", errors[1].1);
    assert!(errors[2].1.contains("empty string"), "{}", errors[2].1);
}

/// `new_lazy` compiles a regex when a line first needs it: the same answers as `new`,
/// parse errors still refused at once, and what only compiling would refuse never
/// matching rather than failing the whole matcher.
#[test]
fn a_lazy_matcher_answers_as_an_eager_one() {
    let patterns = [
        Pattern::new(r"CUDA error"),
        Pattern::new(r"CUDA error: out of memory"),
        Pattern::new(r"(?i)out of memory"),
        Pattern::new(r"Tried to allocate \d+\.\d+ [GM]iB"),
        Pattern::new(r"^NCCL WARN .*timeout$")
            .with_aliases(["watchdog caught collective".to_string()]),
        Pattern::new(r"\d{3,} errors?"),
    ];
    let eager = matcher(&patterns);
    let lazy = Matcher::new_lazy(&patterns).expect("lazy");
    let log = "torch.OutOfMemoryError: CUDA error: out of memory. Tried to allocate 2.00 GiB\n\
        NCCL WARN watchdog timeout\nwatchdog caught collective operation timeout\n\
        1200 errors\nnothing here\n";
    let hits = |m: &Matcher| {
        let mut out = Vec::new();
        m.scan(log.as_bytes(), |x| {
            out.push((x.line, x.pattern, x.span.clone()))
        });
        out
    };
    assert_eq!(hits(&lazy), hits(&eager));
    assert!(!hits(&lazy).is_empty());
    // Twice: the second scan uses the regexes compiled by the first.
    assert_eq!(hits(&lazy), hits(&eager));

    let errors = Matcher::new_lazy(&[Pattern::new("fine"), Pattern::new("(unclosed")])
        .err()
        .unwrap_or_default();
    assert_eq!(errors.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1]);
    // Too big once compiled: found lazily, and then it never matches. Matching the
    // empty string without a literal to trigger it is still refused at once.
    let m = Matcher::new_lazy(&[Pattern::new("big(a{1000}){1000}"), Pattern::new("fine")])
        .expect("parses");
    assert!(Matcher::new(&[Pattern::new("big(a{1000}){1000}")]).is_err());
    assert!(m.matches(&format!("big{}", "a".repeat(2000))).is_empty());
    assert_eq!(m.matches("fine").len(), 1);
    assert!(Matcher::new_lazy(&[Pattern::new("x*")]).is_err());
}

#[test]
fn many_patterns_find_their_own_text_first() {
    // A generated family of overlapping patterns: generic prefixes and specific tails.
    let mut patterns = vec![
        Pattern::new("CUDA error: .*"),
        Pattern::new(r"RuntimeError: .+"),
    ];
    let mut texts = vec![String::new(), String::new()];
    for i in 0..500 {
        patterns.push(Pattern::new(format!(
            r"CUDA error: failure number {i} in (?:kernel|launch) \w+"
        )));
        texts.push(format!(
            "RuntimeError: CUDA error: failure number {i} in kernel gemm_{i}"
        ));
    }
    let m = matcher(&patterns);
    assert_eq!(m.stats().unfiltered, 0);
    for (i, text) in texts.iter().enumerate().skip(2) {
        let found = m.matches(text);
        assert_eq!(found[0].pattern, i, "{text}: {found:?}");
        // The generic ones match too, ranked after it.
        assert_eq!(found.len(), 3, "{text}: {found:?}");
    }
}

#[test]
fn the_prefilter_never_changes_what_matches() {
    // Regexes that share their leading and trailing words (the shapes of a large real
    // corpus), so triggers and confirmations are chosen among common literals.
    let subjects = ["kernel", "stream", "device", "context"];
    let failures = ["failed", "timed out", "was not ready"];
    let mut patterns = vec![
        Pattern::new(r"(?i)cuda error: \w+"),
        Pattern::new(r"\d+ MiB"),
    ];
    for i in 0..240 {
        let (s, f) = (subjects[i % 4], failures[i % 3]);
        patterns.push(Pattern::new(match i % 4 {
            0 => format!(r"{s} {f} \[E{i:05}\]"),
            1 => format!(r"(?:CUDA error: )?{s} {f} \[E{i:05}\]"),
            2 => format!(r"\[E{i:05}\] \((cudaError[A-Za-z]+)\)$"),
            _ => format!(
                r"{}\s+{}\s+\[E0*{i}\]",
                s.replace(' ', r"\s+"),
                f.replace(' ', r"\s+")
            ),
        }));
    }
    let mut log = String::new();
    for i in 0..300 {
        let (s, f) = (subjects[i % 4], failures[(i / 2) % 3]);
        log.push_str(&format!(
            "CUDA error: {s} {f} [E{i:05}] (cudaErrorLaunchFailure)\n"
        ));
        log.push_str(&format!("cuda ERROR: {s}  {f}\t[E{:05}]\r\n", i * 7 % 300));
        log.push_str(&format!("{s} {f} [E{i}] then 12 MiB freed\n"));
        log.push_str("nothing to see here\n");
    }
    let m = matcher(&patterns);
    assert!(m.stats().confirmed > 0, "{:?}", m.stats());
    let mut got = Vec::new();
    m.scan(log.as_bytes(), |x| got.push((x.line, x.pattern)));
    got.sort_unstable();

    let naive: Vec<regex::Regex> = patterns
        .iter()
        .map(|p| {
            regex::RegexBuilder::new(&p.regex)
                .multi_line(true)
                .crlf(true)
                .build()
                .unwrap()
        })
        .collect();
    let mut want = Vec::new();
    for (line, text) in log.split('\n').enumerate() {
        for (p, re) in naive.iter().enumerate() {
            if re.is_match(text) {
                want.push((line, p));
            }
        }
    }
    assert!(
        want.len() > 600,
        "the log should match often: {}",
        want.len()
    );
    assert_eq!(got, want);
}

/// Triggers that overlap or nest on one line are all found, however the first one found on
/// that line ends: the scan finds a line by its first trigger, then reads the whole line.
/// Checked against `matches` on each line alone, which searches every trigger there.
#[test]
fn every_overlapping_trigger_on_a_line_is_found() {
    let m = matcher(&[
        Pattern::new("out of memory"),
        Pattern::new("of memory pool"),
        Pattern::new("memory"),
        Pattern::new(r"CUDA error: \w+ of memory"),
        Pattern::new("pool exhausted").with_aliases(["mory po"]),
        Pattern::new(r"error \d+"),
    ]);
    let log = b"noise\nmemory\nCUDA error: out of memory pool exhausted\nx\n\
        error 7 then out of memory\nof memory pool\nlast line out of memory pool";
    let mut scanned = Vec::new();
    m.scan(log, |x| scanned.push((x.line, x.pattern, x.span.clone())));
    let mut one_by_one = Vec::new();
    let mut offset = 0;
    for (n, line) in log.split(|&b| b == b'\n').enumerate() {
        let text = std::str::from_utf8(line).unwrap();
        for x in m.matches(text) {
            one_by_one.push((n, x.pattern, offset + x.span.start..offset + x.span.end));
        }
        offset += line.len() + 1;
    }
    assert_eq!(scanned, one_by_one);
    assert!(
        scanned.iter().filter(|h| h.0 == 2).count() >= 5,
        "{scanned:?}"
    );
}

/// A gate only saves work: patterns behind one give the matches they give without it,
/// on lines where the gate matches and where it does not; a gate that cannot compile
/// (it matches the empty string) stops nothing; one that does not parse is the
/// pattern's error.
#[test]
fn a_gate_never_changes_what_matches() {
    let numbers = |gated: bool| -> Vec<Pattern> {
        [2, 700, 719]
            .iter()
            .map(|n| {
                // An alias is not behind the gate: it finds its line where the gate fails.
                let p = Pattern::new(format!(r"(?i)cuda error[: ]+{n}\b"))
                    .with_aliases([format!("cuda failure number {n}")]);
                if gated {
                    p.with_gate(r"(?i)cuda error[: ]+\d+\b")
                } else {
                    p
                }
            })
            .chain([Pattern::new(r"illegal memory access")])
            .collect()
    };
    // The first line sets off the gate and fails it; the next ones pass it.
    let text = "cuda error (code 719), the gate fails here\n\
                CUDA error: 700 an illegal memory access\n\
                cuda error 2\n\
                CUDA error: 7190\n\
                cuda error 719 and cuda error 2\n\
                cuda error, cuda failure number 700\n";
    let found = |m: &Matcher| {
        let mut v = Vec::new();
        m.scan(text.as_bytes(), |m| {
            v.push((m.line, m.pattern, m.span.clone()))
        });
        v
    };
    let plain = found(&matcher(&numbers(false)));
    assert_eq!(plain.len(), 6, "{plain:?}");
    assert_eq!(found(&matcher(&numbers(true))), plain);
    let lazy = Matcher::new_lazy(&numbers(true)).unwrap();
    assert_eq!(found(&lazy), plain);

    let empty_gate: Vec<Pattern> = numbers(false)
        .into_iter()
        .map(|p| p.with_gate("x*"))
        .collect();
    assert_eq!(found(&matcher(&empty_gate)), plain);

    let errors = Matcher::new(&[Pattern::new("cuda error").with_gate("(unclosed")]).unwrap_err();
    assert_eq!(errors[0].0, 0);
    assert!(errors[0].1.contains("gate"), "{errors:?}");
}

/// A pattern for one error code (`CUDA error 500`, decimal or hexadecimal) is triggered
/// by the words it shares with the other codes' patterns, not by its own number: numbers
/// of three or four digits are on nearly every line of a log (timestamps, ports, step
/// counts), words like `cuda` are not. The prefilter then searches for one literal
/// instead of two per code, and the codes still match exactly.
#[test]
fn a_short_number_does_not_trigger_its_pattern() {
    let codes: Vec<u32> = (100..140).collect();
    let patterns: Vec<Pattern> = codes
        .iter()
        .map(|n| Pattern::new(format!(r"(?i)\bcuda\s+error\s*:?\s*(?:{n}|0x{n:x})\b")))
        .collect();
    let m = matcher(&patterns);
    assert_eq!(m.stats().literals, 1, "{:?}", m.stats());
    assert_eq!(m.stats().confirmed, codes.len());

    let text = "step 120 took 101 ms on port 129500 at 12:01:33\n\
                CUDA error: 120\n\
                cuda error 0x7f and 139 more\n";
    let mut found = Vec::new();
    m.scan(text.as_bytes(), |m| found.push((m.line, codes[m.pattern])));
    assert_eq!(found, [(1, 120), (2, 127)]);
}

#[test]
fn scan_counting_lines_counts_every_newline_and_matches_as_scan_does() {
    let m = matcher(&[
        Pattern::new(r"CUDA error: out of memory"),
        Pattern::new(r"NCCL WARN \w+"),
    ]);
    for text in [
        "",
        "no error here",
        "no error here\n\n",
        "CUDA error: out of memory",
        "CUDA error: out of memory\n",
        "\n\nCUDA error: out of memory\nok\nok\n\nNCCL WARN timeout",
        "NCCL WARN x\nok\nok\nok\nok\n",
        "ok\nCUDA error: out of memory\nok\nNCCL WARN y\nlast line without newline",
    ] {
        let mut counted = Vec::new();
        let newlines = m.scan_counting_lines(text.as_bytes(), |x| counted.push(x.clone()));
        let mut plain = Vec::new();
        m.scan(text.as_bytes(), |x| plain.push(x.clone()));
        assert_eq!(newlines, text.matches('\n').count() as u64, "{text:?}");
        assert_eq!(counted, plain, "{text:?}");
    }
}
