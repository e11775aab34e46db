//! Integration tests of the rendered site: every page type, parsed with `scraper`, on
//! the real knowledge base (`data/`) and on a small hostile one built in a temp dir.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use errata_load::KnowledgeBase;
use errata_site::{Rendered, SiteOptions, render};
use scraper::{Html, Selector};

fn repo_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data")
}

fn build(data: &Path, opts: &SiteOptions) -> Rendered {
    let kb = KnowledgeBase::load(data).expect("load");
    render(&kb, opts).expect("render")
}

fn page(site: &Rendered, path: &str) -> Html {
    let bytes = site
        .files
        .get(path)
        .unwrap_or_else(|| panic!("no page {path}"));
    Html::parse_document(std::str::from_utf8(bytes).expect("utf-8"))
}

fn sel(s: &str) -> Selector {
    Selector::parse(s).expect("selector")
}

fn texts(doc: &Html, s: &str) -> Vec<String> {
    doc.select(&sel(s))
        .map(|e| e.text().collect::<String>())
        .collect()
}

fn attrs(doc: &Html, s: &str, attr: &str) -> Vec<String> {
    doc.select(&sel(s))
        .filter_map(|e| e.value().attr(attr).map(str::to_string))
        .collect()
}

/// Resolves a relative href from the page at `from` to a site path (no fragment).
fn resolve(from: &str, href: &str) -> Option<String> {
    let href = href.split('#').next().unwrap_or("");
    if href.is_empty()
        || href.contains("://")
        || href.starts_with('/')
        || href.starts_with("mailto:")
    {
        return None;
    }
    let href = href.split('?').next().unwrap_or("");
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for seg in href.split('/') {
        match seg {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
}

fn html_pages(site: &Rendered) -> Vec<String> {
    site.files
        .paths()
        .filter(|p| p.ends_with(".html"))
        .map(str::to_string)
        .collect()
}

#[test]
fn real_data_every_page_is_well_formed_bilingual_and_linked() {
    let site = build(&repo_data(), &SiteOptions::default());
    let pages = html_pages(&site);
    assert!(pages.len() > 20, "only {} pages", pages.len());
    let all: BTreeSet<&str> = site.files.paths().collect();
    for path in &pages {
        let doc = page(&site, path);
        let lang = if path.starts_with("zh/") { "zh" } else { "en" };
        assert_eq!(attrs(&doc, "html", "lang"), [lang], "{path}: html lang");
        assert_eq!(doc.select(&sel("h1")).count(), 1, "{path}: exactly one h1");
        assert!(!texts(&doc, "title")[0].trim().is_empty(), "{path}: title");
        let csp = attrs(&doc, "meta[http-equiv=Content-Security-Policy]", "content");
        assert!(
            csp.len() == 1 && csp[0].contains("script-src 'self'"),
            "{path}: CSP {csp:?}"
        );
        // No inline script that executes: every <script> has a src or is JSON-LD.
        for script in doc.select(&sel("script")) {
            let v = script.value();
            assert!(
                v.attr("src").is_some() || v.attr("type") == Some("application/ld+json"),
                "{path}: inline script {}",
                script.html()
            );
        }
        // Every input has a label.
        for input in doc.select(&sel("input, textarea")) {
            let id = input
                .value()
                .attr("id")
                .unwrap_or_else(|| panic!("{path}: input without id"));
            assert_eq!(
                doc.select(&sel(&format!("label[for=\"{id}\"]"))).count(),
                1,
                "{path}: label for #{id}"
            );
        }
        // Language switch: a link to the other language's version of this page.
        let other = if lang == "en" {
            format!("zh/{path}")
        } else {
            path.trim_start_matches("zh/").to_string()
        };
        let switch: Vec<String> = attrs(&doc, ".lang-switch a", "href")
            .iter()
            .filter_map(|h| {
                if path.ends_with("404.html") {
                    Some(h.trim_start_matches('/').to_string())
                } else {
                    resolve(path, h)
                }
            })
            .collect();
        assert!(
            switch
                .iter()
                .any(|h| *h == other || (path.ends_with("404.html") && h.ends_with("index.html"))),
            "{path}: switch {switch:?}"
        );
        if !path.ends_with("404.html") {
            let hreflangs = attrs(&doc, "link[rel=alternate][hreflang]", "hreflang");
            assert_eq!(hreflangs, ["en", "zh", "x-default"], "{path}");
            // Every relative link and asset exists in the built site.
            for href in attrs(&doc, "a[href], link[href], script[src]", "href")
                .into_iter()
                .chain(attrs(&doc, "script[src]", "src"))
            {
                if let Some(target) = resolve(path, &href) {
                    assert!(
                        all.contains(target.as_str()),
                        "{path}: broken link {href} -> {target}"
                    );
                }
            }
            // In-page anchors exist.
            let ids: BTreeSet<String> = attrs(&doc, "[id]", "id").into_iter().collect();
            for href in attrs(&doc, "a[href^='#']", "href") {
                assert!(ids.contains(&href[1..]), "{path}: missing anchor {href}");
            }
        }
        // Only https URLs are external links.
        for href in attrs(&doc, "a[href]", "href") {
            let lower = href.to_ascii_lowercase();
            assert!(
                !lower.starts_with("http:")
                    && !lower.starts_with("javascript:")
                    && !lower.starts_with("data:"),
                "{path}: {href}"
            );
        }
    }
}

#[test]
fn real_data_entry_pages_show_every_field() {
    let kb = KnowledgeBase::load(&repo_data()).unwrap();
    let opts = SiteOptions::default().with_edit_url_prefix(Some(
        "https://github.com/errata-kb/errata/edit/main/data/".into(),
    ));
    let site = render(&kb, &opts).unwrap();
    let mut checked = 0;
    for doc in &kb.entries {
        let Some(e) = &doc.entry else { continue };
        let path = format!("entries/{}.html", e.id);
        let en = page(&site, &path);
        assert_eq!(texts(&en, "h1")[0].trim(), e.signature.trim(), "{path}");
        assert_eq!(
            texts(&en, "#sig-text")[0],
            e.signature,
            "{path}: copyable signature"
        );
        assert_eq!(en.select(&sel("button.copy")).count(), 1);
        assert_eq!(
            en.select(&sel(".dead > li")).count(),
            e.dead_ends.len(),
            "{path}: dead ends"
        );
        assert_eq!(
            en.select(&sel(".work > li")).count(),
            e.workarounds.len(),
            "{path}: workarounds"
        );
        // A bar only for a counted rate; an estimate is words, never a percentage.
        let rates: Vec<String> = attrs(&en, ".work meter", "value");
        let counted = |b: Option<&errata_model::Basis>| b.and_then(|b| b.counted()).is_some();
        let expected: Vec<String> = e
            .workarounds
            .iter()
            .filter(|w| counted(w.basis.as_ref()))
            .map(|w| ((w.success_rate * 100.0).round() as i64).to_string())
            .collect();
        assert_eq!(rates, expected, "{path}: success-rate bars");
        // Every counted report is listed under its rate, with the reporter's words.
        let items_of = |kind: &str| -> usize {
            e.dead_ends
                .iter()
                .map(|d| d.basis.as_ref())
                .chain(e.workarounds.iter().map(|w| w.basis.as_ref()))
                .flatten()
                .filter(|b| b.kind == kind)
                .map(|b| b.items.len())
                .sum()
        };
        let listed = items_of("reports");
        assert_eq!(
            en.select(&sel("details.reports:not(.runs) li")).count(),
            listed,
            "{path}"
        );
        // And every counted run, linked to the page its snippet is on.
        let runs = items_of("runs");
        assert_eq!(
            en.select(&sel("details.runs li a[href]")).count(),
            runs,
            "{path}: counted runs"
        );
        if e.id == "pytorch/index-out-of-bounds-assertion" {
            let run = texts(&en, "details.runs li").concat();
            assert!(
                run.contains("articles/cuda/sticky-errors.md:142") && run.contains("NVIDIA H200"),
                "{path}: {run}"
            );
        }
        assert_eq!(
            en.select(&sel("details.reports q")).count(),
            listed,
            "{path}"
        );
        // What the tier rests on, in words; nothing in data/ claims a review yet.
        let tier = texts(&en, ".meta dd").concat();
        let rests_on = match e.verification_tier.as_str() {
            "community" => "counted from public reports",
            "reproduced" => "produced the error on a real GPU",
            _ => "not yet reviewed by a person",
        };
        assert!(tier.contains(rests_on), "{path}: what the tier rests on");
        assert!(tier.contains("reviewed by a person"), "{path}: {tier}");
        let shown = texts(&en, ".work .rate");
        assert_eq!(shown.len(), e.workarounds.len(), "{path}");
        for (w, text) in e.workarounds.iter().zip(&shown) {
            if counted(w.basis.as_ref()) {
                assert!(text.contains(" of "), "{path}: {text}");
            } else {
                assert!(
                    text.contains("editor's estimate") && !text.contains('%'),
                    "{path}: an estimate shown as {text:?}"
                );
            }
        }
        if let Some(code) = &e.error_code {
            assert!(
                texts(&en, "code").iter().any(|c| c == code),
                "{path}: error code shown"
            );
        }
        let edges = e.transition_graph.leads_to.len()
            + e.transition_graph.preceded_by.len()
            + e.transition_graph.frequently_confused_with.len();
        assert_eq!(
            en.select(&sel(".graph li")).count(),
            edges,
            "{path}: transitions"
        );
        let edit = attrs(&en, "a.edit", "href");
        assert_eq!(
            edit,
            [format!(
                "https://github.com/errata-kb/errata/edit/main/data/signatures/{}.json",
                e.id
            )]
        );
        assert!(
            texts(&en, ".badge").iter().any(|b| b == "unverified"
                || b.starts_with("verified")
                || b.starts_with("compiles")
                || b.starts_with("stale")),
            "{path}: verification badge"
        );
        let ld = texts(&en, "script[type='application/ld+json']");
        let ld: serde_json::Value = serde_json::from_str(&ld[0]).expect("JSON-LD parses");
        assert_eq!(ld["@type"], "FAQPage");

        let zh = page(&site, &format!("zh/{path}"));
        if !e.signature_zh.trim().is_empty() {
            assert_eq!(
                texts(&zh, "h1")[0].trim(),
                e.signature_zh.trim(),
                "zh/{path}"
            );
        }
        if let Some(first) = e.workarounds_zh.first() {
            let shown = texts(&zh, ".work .action")[0].clone();
            assert_eq!(
                shown,
                first.replace('`', ""),
                "zh/{path}: workarounds_zh used"
            );
        }
        // Workarounds: the Chinese text says what and how; the English how is not shown.
        if !e.workarounds_zh.is_empty() && e.workarounds_zh.iter().all(|z| !z.trim().is_empty()) {
            assert!(
                zh.select(&sel(".work > li > p[lang=en]:not(.muted)"))
                    .next()
                    .is_none(),
                "zh/{path}: an English how on the Chinese page"
            );
        }
        // Dead ends: the Chinese text alone, no English prose (why_fails, condition)
        // beside it, and the rate in Chinese words or counts.
        let dead = texts(&zh, ".dead .action");
        assert_eq!(dead.len(), e.dead_ends.len(), "zh/{path}");
        for (i, shown) in dead.iter().enumerate() {
            let want = e.dead_ends_zh.get(i).map(|s| s.replace('`', ""));
            assert_eq!(
                Some(shown.clone()),
                want,
                "zh/{path}: dead_ends_zh[{i}] used"
            );
        }
        assert!(
            zh.select(&sel(".dead > li[lang=en]")).next().is_none(),
            "zh/{path}: an English dead end on the Chinese page"
        );
        let dead_text: String = texts(&zh, ".dead > li > p").concat();
        for english in e
            .dead_ends
            .iter()
            .flat_map(|d| [&d.why_fails, &d.condition])
        {
            assert!(
                english.trim().is_empty() || !dead_text.contains(english.as_str()),
                "zh/{path}: English shown: {english}"
            );
        }
        for rate in texts(&zh, ".dead .rate") {
            assert!(
                rate.contains("编者估计") || rate.contains("份") || rate.contains("次运行"),
                "zh/{path}: {rate}"
            );
        }
        // The API mirror is the entry as written.
        let api: serde_json::Value =
            serde_json::from_slice(site.files.get(&format!("api/v1/{}.json", e.id)).unwrap())
                .unwrap();
        assert_eq!(api, doc.value());
        checked += 1;
    }
    assert!(checked >= 2, "real data has entries");
}

#[test]
fn real_data_article_pages_translations_and_indexes() {
    let kb = KnowledgeBase::load(&repo_data()).unwrap();
    let site = render(&kb, &SiteOptions::default()).unwrap();
    let mut translated = 0;
    let mut untranslated = 0;
    for a in kb.articles.iter().filter(|a| a.lang.is_none()) {
        let id = a.path_id.clone().unwrap();
        let path = format!("articles/{id}.html");
        let en = page(&site, &path);
        // TOC entries point at heading ids that exist (the shared slug rule).
        let ids: BTreeSet<String> = attrs(&en, "[id]", "id").into_iter().collect();
        let toc = attrs(&en, ".toc a", "href");
        for h in a.headings.iter().filter(|h| h.level >= 2 && h.level <= 4) {
            assert!(
                ids.contains(&h.anchor),
                "{path}: heading anchor {}",
                h.anchor
            );
            assert!(
                toc.contains(&format!("#{}", h.anchor)),
                "{path}: toc has {}",
                h.anchor
            );
        }
        let runnable = a.code_blocks.iter().filter(|b| {
            let lang = b.info.split_whitespace().next().unwrap_or("");
            matches!(
                lang,
                "cuda"
                    | "cu"
                    | "cpp"
                    | "c++"
                    | "cxx"
                    | "c"
                    | "python"
                    | "py"
                    | "python3"
                    | "bash"
                    | "sh"
                    | "shell"
                    | "console"
            )
        });
        assert_eq!(
            en.select(&sel(".snippet .badge")).count(),
            runnable.count(),
            "{path}: one badge per runnable snippet"
        );
        if !a.code_blocks.is_empty() {
            assert!(
                en.select(&sel("pre code span[class^='hl-']"))
                    .next()
                    .is_some(),
                "{path}: highlighted"
            );
        }
        for sig in a
            .front
            .as_ref()
            .map(|f| f.signatures.clone())
            .unwrap_or_default()
        {
            let hrefs = attrs(&en, ".related a", "href");
            assert!(
                hrefs
                    .iter()
                    .any(|h| h.ends_with(&format!("entries/{sig}.html"))),
                "{path}: links entry {sig}"
            );
        }
        let zh = page(&site, &format!("zh/{path}"));
        let zh_doc = kb
            .articles
            .iter()
            .find(|z| z.lang.as_deref() == Some("zh") && z.path_id.as_deref() == Some(id.as_str()));
        let current = zh_doc.is_some_and(|z| {
            z.front.as_ref().and_then(|f| f.source_hash.as_deref()) == Some(a.sha256.as_str())
        });
        if current {
            translated += 1;
            assert!(
                zh.select(&sel(".notice")).next().is_none(),
                "zh/{path}: current translation has no notice"
            );
            let title = zh_doc.unwrap().front.as_ref().unwrap().title.clone();
            assert_eq!(texts(&zh, "h1")[0].trim(), title.trim());
        } else {
            untranslated += 1;
            assert_eq!(
                zh.select(&sel(".notice a[hreflang=en]")).count(),
                1,
                "zh/{path}: a notice that links to the English text"
            );
        }
    }
    eprintln!("articles: {translated} translated, {untranslated} not");
    // Indexes and machine-readable files.
    let home = page(&site, "index.html");
    assert_eq!(
        texts(&home, ".stats strong")[0],
        kb.entries.len().to_string()
    );
    // The cudaError_t coverage: every code named by an error_code, counted here from
    // the entries themselves (aliases that are a bare enumerator add codes, never less).
    let by_error_code: std::collections::BTreeSet<String> = kb
        .entries
        .iter()
        .filter_map(|d| d.entry.as_ref()?.error_code.clone())
        .filter(|c| c.starts_with("cudaError"))
        .map(|c| c.split('(').next().unwrap().trim().to_string())
        .collect();
    let coverage = texts(&home, ".stats strong")[3].clone();
    let (covered, total) = coverage.split_once('/').expect("N/137");
    assert_eq!(total, "137");
    assert!(
        covered.parse::<usize>().unwrap() >= by_error_code.len(),
        "{coverage}"
    );
    assert!(!by_error_code.is_empty());
    let status = page(&site, "translations.html");
    assert_eq!(
        status.select(&sel("tbody tr")).count(),
        translated + untranslated
    );
    // Each domain's page lists at least that domain's entries.
    let mut per_domain: std::collections::BTreeMap<String, usize> = Default::default();
    for doc in &kb.entries {
        let id = &doc.entry.as_ref().unwrap().id;
        *per_domain
            .entry(id.split('/').next().unwrap().to_string())
            .or_default() += 1;
    }
    assert!(per_domain.len() > 1, "{per_domain:?}");
    for (domain, entries) in &per_domain {
        let listed = page(&site, &format!("domains/{domain}.html"))
            .select(&sel(".list li"))
            .count();
        assert!(
            listed >= *entries,
            "{domain}: {listed} listed, {entries} entries"
        );
    }
    assert!(site.files.paths().any(|p| p.starts_with("tags/")));
    let sitemap = String::from_utf8(site.files.get("sitemap.xml").unwrap().to_vec()).unwrap();
    for doc in &kb.entries {
        let id = &doc.entry.as_ref().unwrap().id;
        assert!(
            sitemap.contains(&format!("/entries/{id}.html</loc>")),
            "sitemap has {id}"
        );
        assert!(sitemap.contains(&format!("/zh/entries/{id}.html</loc>")));
    }
    let feed = String::from_utf8(site.files.get("feed.xml").unwrap().to_vec()).unwrap();
    assert!(feed.starts_with("<?xml") && feed.contains("<entry>"));
    let index: serde_json::Value =
        serde_json::from_slice(site.files.get("api/v1/index.json").unwrap()).unwrap();
    assert_eq!(index["entries"].as_array().unwrap().len(), kb.entries.len());
    assert!(String::from_utf8_lossy(site.files.get("robots.txt").unwrap()).contains("Sitemap: "));
    let not_found = page(&site, "404.html");
    assert_eq!(
        attrs(&not_found, "link[rel=stylesheet]", "href"),
        ["/static/style.css"]
    );
}

#[test]
fn base_url_sets_absolute_urls_but_page_links_stay_relative() {
    let a = build(
        &repo_data(),
        &SiteOptions::default().with_base_url("https://example.org/errata/"),
    );
    let home = page(&a, "index.html");
    assert_eq!(
        attrs(&home, "link[rel=canonical]", "href"),
        ["https://example.org/errata/index.html"]
    );
    let notfound = page(&a, "zh/404.html");
    assert_eq!(
        attrs(&notfound, ".lang-switch a", "href"),
        ["https://example.org/errata/index.html"]
    );
    let b = build(&repo_data(), &SiteOptions::default());
    let strip = |s: &Rendered| {
        let doc = page(s, "entries/cuda/out-of-memory.html");
        attrs(&doc, "main a[href]", "href")
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn rendering_is_deterministic_and_writing_is_byte_identical() {
    let a = build(&repo_data(), &SiteOptions::default());
    let b = build(&repo_data(), &SiteOptions::default());
    assert_eq!(a.files, b.files);
    let out = tempfile::tempdir().unwrap();
    a.files.write_atomically(&out.path().join("one")).unwrap();
    // Rendering straight to disk, file by file as they render, writes the same tree.
    let kb = KnowledgeBase::load(&repo_data()).unwrap();
    let written =
        errata_site::render_into(&kb, &SiteOptions::default(), &out.path().join("two")).unwrap();
    assert_eq!((written.files, written.pages), (a.files.len(), a.pages));
    assert_eq!(written.bytes, a.files.total_bytes());
    let tree = |root: &Path| -> Vec<(String, Vec<u8>)> {
        let mut files: Vec<_> = walk(root)
            .into_iter()
            .map(|p| {
                (
                    p.strip_prefix(root).unwrap().to_string_lossy().into_owned(),
                    std::fs::read(&p).unwrap(),
                )
            })
            .collect();
        files.sort();
        files
    };
    let one = tree(&out.path().join("one"));
    assert_eq!(one, tree(&out.path().join("two")));
    assert_eq!(one.len(), a.files.len());
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn atomic_write_replaces_whole_trees_and_refuses_to_clobber_a_file() {
    let site = build(&repo_data(), &SiteOptions::default());
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("site");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("stale-page.html"), "old").unwrap();
    site.files.write_atomically(&out).unwrap();
    assert!(
        !out.join("stale-page.html").exists(),
        "old files do not survive a rebuild"
    );
    assert!(out.join("index.html").is_file());
    // No staging or backup directories are left next to the output.
    let siblings: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(siblings, ["site"]);
    // A target that is a file is an error, and the file is untouched.
    let file = dir.path().join("file");
    std::fs::write(&file, "keep").unwrap();
    assert!(site.files.write_atomically(&file).is_err());
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
}

/// A knowledge base where every text field tries to inject markup or script.
fn hostile_data() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let x = "<script>alert(1)</script>\"'><img src=x onerror=alert(2)>";
    let entry = serde_json::json!({
        "id": "cuda/hostile",
        "signature": format!("CUDA error: {x}"),
        "signature_zh": format!("CUDA 错误：{x}"),
        "regex": "CUDA error: <script>",
        "domain": "cuda",
        "category": x,
        "root_cause": format!("cause {x} `code {x}`"),
        "root_cause_zh": format!("原因 {x}"),
        "root_cause_type": x,
        "versions": [{"version": x, "status": x, "behavior_change": x}],
        "os_specific": {x: x},
        "dead_ends": [{"action": x, "why_fails": x, "fail_rate": 7.5, "basis": {"kind": "reports", "n": 1, "k": 1, "items": [{"url": x, "outcome": "failed", "quote": x}]}, "condition": x, "sources": ["javascript:alert(3)", "http://insecure.example", x]}],
        "workarounds": [{"action": x, "success_rate": -1.0, "basis": {"kind": "reports", "n": 1, "k": 0, "items": [{"url": x, "outcome": "failed", "quote": x}]}, "how": x, "condition": x, "sources": ["https://ok.example/a\"onmouseover=\"alert(4)"]}],
        "workarounds_zh": [x],
        "transition_graph": {"leads_to": ["cuda/missing</a><script>"], "preceded_by": [], "frequently_confused_with": []},
        "official_doc_url": "javascript:alert(5)",
        "official_doc_section": x,
        "error_code": x,
        "verification_tier": x,
        "resolvable": x,
        "operator_action": x,
        "first_seen": x, "last_confirmed": x, "last_updated": "2026-01-01</updated><script>",
        "tags": [x, "../../etc"],
        "aliases": [x],
        "verify": {"lang": "cuda", "annotations": x, "code": format!("int main() {{ /* {x} */ }}\n```\n<script>alert(6)</script>")},
    });
    let sig = dir.path().join("signatures/cuda");
    std::fs::create_dir_all(&sig).unwrap();
    std::fs::write(
        sig.join("hostile.json"),
        serde_json::to_string_pretty(&entry).unwrap(),
    )
    .unwrap();
    // An entry whose id would escape the output directory.
    std::fs::write(
        sig.join("escape.json"),
        r#"{"id": "../../../tmp/pwned", "signature": "x"}"#,
    )
    .unwrap();
    let art = dir.path().join("articles/cuda");
    std::fs::create_dir_all(&art).unwrap();
    std::fs::write(
        art.join("hostile.md"),
        format!(
            "---\ntitle: \"T </title><script>alert(7)</script>\"\nid: cuda/hostile\ndate: \"2026-01-01\"\nsignatures: [\"cuda/hostile\"]\ntags: [\"{tag}\"]\n---\n# H <script>alert(8)</script>\n\n<script>alert(9)</script>\n\n<a href=\"javascript:alert(10)\">raw</a> [md](javascript:alert(11)) [ok](https://docs.nvidia.com)\n\n```cuda\n</code></pre><script>alert(12)</script>\n```\n",
            tag = "<b>t</b>"
        ),
    )
    .unwrap();
    std::fs::write(
        art.join("hostile.zh.md"),
        "---\ntitle: \"中文 <script>alert(13)</script>\"\nid: cuda/hostile\ndate: \"2026-01-01\"\ntranslation_of: cuda/hostile\nsource_hash: \"0000\"\n---\n正文\n",
    )
    .unwrap();
    dir
}

#[test]
fn hostile_strings_are_escaped_everywhere() {
    let data = hostile_data();
    let site = build(
        data.path(),
        &SiteOptions::default().with_edit_url_prefix(Some("javascript:alert(14)".into())),
    );
    assert_eq!(site.skipped, ["../../../tmp/pwned"]);
    for path in site.files.paths() {
        let text = String::from_utf8_lossy(site.files.get(path).unwrap());
        assert!(!path.contains(".."), "{path}");
        if path.ends_with(".json") {
            continue; // The API mirror is data, served as application/json.
        }
        assert!(!text.contains("<script>alert"), "{path}: unescaped script");
        assert!(!text.contains("<img src=x"), "{path}: unescaped img");
        assert!(
            !text.contains("</updated><script>"),
            "{path}: feed escaping"
        );
        if path.ends_with(".html") {
            let doc = Html::parse_document(&text);
            for href in attrs(&doc, "a[href]", "href") {
                let h = href.to_ascii_lowercase();
                assert!(
                    !h.starts_with("javascript:") && !h.starts_with("http:"),
                    "{path}: href {href}"
                );
            }
            for el in doc.select(&sel("*")) {
                for (name, _) in el.value().attrs() {
                    assert!(
                        !name.starts_with("on"),
                        "{path}: event handler attribute {name}"
                    );
                }
            }
            for ld in texts(&doc, "script[type='application/ld+json']") {
                assert!(!ld.contains('<'), "{path}: JSON-LD carries a raw <");
                serde_json::from_str::<serde_json::Value>(&ld).expect("JSON-LD still parses");
            }
            assert_eq!(doc.select(&sel("h1")).count(), 1, "{path}");
        }
    }
    let entry = page(&site, "entries/cuda/hostile.html");
    assert!(
        texts(&entry, "h1")[0].contains("<script>alert(1)</script>"),
        "shown as text"
    );
    let meters = attrs(&entry, "meter", "value");
    assert_eq!(meters, ["100", "0"], "counted rates clamped to 0..100");
    assert!(
        attrs(&entry, "a.edit", "href").is_empty(),
        "non-https edit prefix ignored"
    );
    assert!(
        texts(&entry, ".graph li")
            .iter()
            .any(|t| t.contains("cuda/missing</a><script>"))
    );
    let article = page(&site, "zh/articles/cuda/hostile.html");
    assert_eq!(
        article.select(&sel(".notice")).count(),
        1,
        "outdated translation shows English with a notice"
    );
    let shards: Vec<&str> = site
        .files
        .paths()
        .filter(|p| p.starts_with("search/"))
        .collect();
    assert!(!shards.is_empty());
    for path in shards {
        let shard = String::from_utf8_lossy(site.files.get(path).unwrap()).into_owned();
        assert!(!shard.contains('<'), "search index escapes <: {path}");
    }
}

#[test]
fn run_records_turn_into_badges() {
    let data = hostile_data();
    let kb = KnowledgeBase::load(data.path()).unwrap();
    let art = kb.articles.iter().find(|a| a.lang.is_none()).unwrap();
    let code = &art.code_blocks[0].code;
    let record = |tier: &str, outcome: &str, sha: &str| {
        serde_json::json!({"file": "articles/cuda/hostile.md", "line": 12, "sha256": sha, "tier": tier, "outcome": outcome,
            "expect": "ok", "gpu_name": "NVIDIA H200", "compute_capability": "9.0", "driver_version": "580.65.06",
            "cuda_version": "13.0", "nvcc_version": "13.0", "torch_version": null, "python_version": null,
            "duration_ms": 10, "stderr_excerpt": "", "date": "2026-03-04"})
    };
    std::fs::create_dir_all(data.path().join("runs")).unwrap();
    let write = |records: Vec<serde_json::Value>| {
        std::fs::write(
            data.path().join("runs/a.json"),
            serde_json::json!({"version": 1, "records": records}).to_string(),
        )
        .unwrap();
        let kb = KnowledgeBase::load(data.path()).unwrap();
        let site = render(&kb, &SiteOptions::default()).unwrap();
        texts(
            &page(&site, "articles/cuda/hostile.html"),
            ".snippet .badge",
        )
    };
    let sha = errata_load::sha256_hex(code.as_bytes());
    assert_eq!(
        write(vec![record("run", "pass", &sha)]),
        ["verified on NVIDIA H200, CUDA 13.0, 2026-03-04"]
    );
    assert_eq!(
        write(vec![record("compile", "pass", &sha)]),
        ["compiles (2026-03-04)"]
    );
    assert_eq!(
        write(vec![record("run", "pass", &"0".repeat(64))]),
        ["stale: code changed since the last run"]
    );
    assert_eq!(
        write(vec![record("run", "wrong-error", &sha)]),
        ["failing: wrong-error (2026-03-04)"]
    );
}

#[test]
fn spellings_of_one_tag_share_one_page() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir_all(data.join("signatures/cuda")).unwrap();
    for (slug, tags) in [
        ("a-graph-error", vec!["CUDA Graphs"]),
        ("b-graph-error", vec!["cuda-graphs", "streams"]),
        ("c-graph-error", vec!["cuda graphs", "CUDA Graphs"]),
    ] {
        let entry = serde_json::json!({
            "id": format!("cuda/{slug}"),
            "signature": format!("RuntimeError: {slug}"),
            "regex": slug,
            "tags": tags,
        });
        std::fs::write(
            data.join(format!("signatures/cuda/{slug}.json")),
            entry.to_string(),
        )
        .unwrap();
    }
    let site = build(&data, &SiteOptions::default());
    let tag_pages: Vec<&str> = site
        .files
        .paths()
        .filter(|p| p.starts_with("tags/"))
        .collect();
    assert_eq!(tag_pages, ["tags/cuda-graphs.html", "tags/streams.html"]);
    let doc = page(&site, "tags/cuda-graphs.html");
    // The most used spelling names the page; every spelling's entries are listed once.
    assert_eq!(texts(&doc, "h1"), ["Tag: CUDA Graphs"]);
    let listed: Vec<String> = attrs(&doc, "main a[href*='entries/']", "href");
    for slug in ["a-graph-error", "b-graph-error", "c-graph-error"] {
        let n = listed.iter().filter(|h| h.contains(slug)).count();
        assert_eq!(n, 1, "{slug} in {listed:?}");
    }
    // Each entry page links its own spelling to the shared page.
    let b = page(&site, "entries/cuda/b-graph-error.html");
    assert!(
        attrs(&b, "a", "href")
            .iter()
            .any(|h| h.ends_with("tags/cuda-graphs.html")),
        "entry b links the shared tag page"
    );
}

/// Elements whose text may be English on a Chinese page: code, and what is quoted or
/// cited verbatim (a reporter's words, an error message, an English document's title).
const VERBATIM: &[&str] = &[
    "code",
    "pre",
    "kbd",
    "samp",
    "q",
    "blockquote",
    "cite",
    "script",
    "style",
];

/// The text of `node` outside [`VERBATIM`] elements, one string per text node.
fn prose_text(node: ego_tree::NodeRef<'_, scraper::Node>, out: &mut Vec<String>) {
    for child in node.children() {
        match child.value() {
            scraper::Node::Text(t) => out.push(t.to_string()),
            scraper::Node::Element(e) if VERBATIM.contains(&e.name()) => {}
            // An external link's text names the page it leads to (often an English
            // document's title).
            scraper::Node::Element(e)
                if e.name() == "a" && e.attr("href").is_some_and(|h| h.contains("://")) => {}
            scraper::Node::Element(_) => prose_text(child, out),
            _ => {}
        }
    }
}

/// A Chinese page shows no English prose: every dead end, workaround, condition,
/// versions row, OS note, article and UI string is in Chinese; English is left only in
/// code and in what is quoted or cited verbatim.
#[test]
fn real_data_zh_pages_have_no_english_prose() {
    let site = build(&repo_data(), &SiteOptions::default());
    let mut found = Vec::new();
    let mut pages = 0;
    for path in html_pages(&site).iter().filter(|p| p.starts_with("zh/")) {
        pages += 1;
        let doc = page(&site, path);
        let Some(body) = doc.select(&sel("body")).next() else {
            found.push(format!("{path}: no body"));
            continue;
        };
        let mut text = Vec::new();
        prose_text(*body, &mut text);
        // The checker's own test (`zh-untranslated`), on the text outside code.
        for run in text.iter().filter_map(|t| errata_check::english_run(t)) {
            found.push(format!("{path}: {run}"));
        }
    }
    assert!(pages > 400, "only {pages} zh pages");
    assert!(
        found.is_empty(),
        "{} English run(s) on Chinese pages, e.g.:\n{}",
        found.len(),
        found
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A Chinese page never shows an English body: an outdated translation is still shown,
/// under a notice that links to the English text; an article with no translation gets
/// a Chinese page that says so and links to it.
#[test]
fn untranslated_and_outdated_articles_on_the_chinese_site() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    copy_tree(&repo_data(), &data);
    // Outdated: the English text changes after its translation was made.
    let sticky = data.join("articles/cuda/sticky-errors.md");
    let mut text = std::fs::read_to_string(&sticky).expect("read");
    text.push_str("\nOne more English paragraph.\n");
    std::fs::write(&sticky, text).expect("write");
    // Missing: the translation is gone.
    std::fs::remove_file(data.join("articles/cuda/errors-at-start-up.zh.md")).expect("rm");
    let site = build(&data, &SiteOptions::default());

    let outdated = page(&site, "zh/articles/cuda/sticky-errors.html");
    let zh_title = "粘滞错误（sticky error），以及为什么必须重启进程";
    assert_eq!(texts(&outdated, "h1")[0].trim(), zh_title);
    assert!(texts(&outdated, ".prose").concat().contains("粘滞错误"));
    assert!(
        !texts(&outdated, ".prose")
            .concat()
            .contains("One more English")
    );
    assert_eq!(
        attrs(&outdated, ".notice a[hreflang=en]", "href"),
        ["../../../articles/cuda/sticky-errors.html"]
    );

    let missing = page(&site, "zh/articles/cuda/errors-at-start-up.html");
    assert!(
        missing.select(&sel(".prose")).next().is_none(),
        "no English body"
    );
    assert!(missing.select(&sel(".toc")).next().is_none());
    assert_eq!(attrs(&missing, "h1 cite", "lang"), ["en"]);
    assert_eq!(
        attrs(&missing, ".notice a[hreflang=en]", "href"),
        ["../../../articles/cuda/errors-at-start-up.html"]
    );
    for path in [
        "zh/articles/cuda/sticky-errors.html",
        "zh/articles/cuda/errors-at-start-up.html",
        "zh/translations.html",
    ] {
        let doc = page(&site, path);
        let body = doc.select(&sel("body")).next().expect("body");
        let mut text = Vec::new();
        prose_text(*body, &mut text);
        let runs: Vec<String> = text
            .iter()
            .filter_map(|t| errata_check::english_run(t))
            .collect();
        assert!(runs.is_empty(), "{path}: {runs:?}");
    }
}

fn copy_tree(from: &Path, to: &Path) {
    for path in walk(from) {
        let rel = path.strip_prefix(from).expect("prefix");
        let dest = to.join(rel);
        std::fs::create_dir_all(dest.parent().expect("parent")).expect("mkdir");
        std::fs::copy(&path, &dest).expect("copy");
    }
}
