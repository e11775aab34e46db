//! `cargo xtask gen-corpus --entries N --articles M --out DIR [--seed S]`: a large, varied,
//! valid knowledge base for benchmarks and scale tests.
//!
//! Entries differ in wording, size (1–4 dead ends and workarounds, 0–3 versions),
//! regex shape (anchored literals, optional groups, alternations, character classes) and
//! transition-graph edges (always symmetric, so the corpus checks clean). Articles link
//! to entries, to each other and to their own headings. Deterministic for a given seed.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::{Value, json};

/// A small deterministic generator (SplitMix64): reproducible corpora without a `rand`
/// dependency in xtask.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const SUBJECTS: &[&str] = &[
    "kernel",
    "stream",
    "allocator",
    "context",
    "graph",
    "event",
    "tensor",
    "module",
    "launch",
    "copy",
    "peer access",
    "memory pool",
    "texture",
    "cublas handle",
    "nccl communicator",
];
const FAILURES: &[&str] = &[
    "failed to initialize",
    "timed out",
    "ran out of memory",
    "hit an illegal address",
    "was destroyed while in use",
    "exceeded its resource limit",
    "saw a misaligned access",
    "was not ready",
    "reported an invalid value",
    "lost its device",
];
const ZH_SUBJECTS: &[&str] = &[
    "内核",
    "流",
    "分配器",
    "上下文",
    "计算图",
    "事件",
    "张量",
    "模块",
    "启动",
    "拷贝",
    "对等访问",
    "内存池",
    "纹理",
    "句柄",
    "通信器",
];
const ZH_FAILURES: &[&str] = &[
    "初始化失败",
    "超时",
    "内存不足",
    "访问了非法地址",
    "在使用中被销毁",
    "超出资源限制",
    "出现未对齐访问",
    "尚未就绪",
    "报告了无效值",
    "丢失了设备",
];
const CODES: &[&str] = &[
    "cudaErrorMemoryAllocation",
    "cudaErrorIllegalAddress",
    "cudaErrorLaunchTimeout",
    "cudaErrorInvalidValue",
    "cudaErrorNotReady",
    "cudaErrorLaunchOutOfResources",
    "cudaErrorMisalignedAddress",
];
const DOMAINS: &[&str] = &["cuda", "pytorch", "nccl", "cudnn", "triton"];

pub fn run(args: &[String]) -> Result<()> {
    let (mut entries, mut articles, mut out, mut seed) =
        (10_000usize, 1_000usize, None::<PathBuf>, 42u64);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--entries" => entries = value()?.parse().context("--entries")?,
            "--articles" => articles = value()?.parse().context("--articles")?,
            "--out" => out = Some(PathBuf::from(value()?)),
            "--seed" => seed = value()?.parse().context("--seed")?,
            other => bail!(
                "unknown argument `{other}` (expected --entries N --articles M --out DIR [--seed S])"
            ),
        }
    }
    let out = out.context("--out DIR is required")?;
    generate(&out, entries, articles, seed)?;
    println!(
        "wrote {entries} entries and {articles} articles to {}",
        out.display()
    );
    Ok(())
}

/// Writes the corpus into `out`, replacing `signatures/` and `articles/` there.
///
/// Files that already hold the bytes they would get are left alone and only files that
/// are not part of this corpus are deleted: regenerating the benchmark corpus (every run
/// of `cargo xtask bench` does) then deletes and creates nothing, which matters to the
/// site benchmark that follows (see `bench_site`: recently freed inodes slow file
/// creation on ext4 without a journal).
pub fn generate(out: &Path, n_entries: usize, n_articles: usize, seed: u64) -> Result<()> {
    let mut written = std::collections::HashSet::new();
    let mut write = |path: &Path, text: &str| -> Result<()> {
        written.insert(path.to_path_buf());
        write_if_changed(path, text)
    };
    let mut rng = Rng::new(seed);
    let ids: Vec<String> = (0..n_entries)
        .map(|i| format!("{}/gen-{i:05}", DOMAINS[i % DOMAINS.len()]))
        .collect();
    // Symmetric edges: i leads_to i+1 (so i+1 is preceded_by i) within a domain chain;
    // every 7th entry is confused with the one 5 further on, both ways.
    let mut entries: Vec<Value> = (0..n_entries)
        .map(|i| entry(&mut rng, i, &ids[i]))
        .collect();
    for i in 0..n_entries {
        let j = i + DOMAINS.len();
        if j < n_entries && rng.below(3) == 0 {
            push(&mut entries[i], "leads_to", &ids[j]);
            push(&mut entries[j], "preceded_by", &ids[i]);
        }
        let k = i + 5;
        if i % 7 == 0 && k < n_entries {
            push(&mut entries[i], "frequently_confused_with", &ids[k]);
            push(&mut entries[k], "frequently_confused_with", &ids[i]);
        }
    }
    for (id, e) in ids.iter().zip(&entries) {
        let path = out.join("signatures").join(format!("{id}.json"));
        write(&path, &(serde_json::to_string_pretty(e)? + "\n"))?;
    }
    for a in 0..n_articles {
        let domain = DOMAINS[a % DOMAINS.len()];
        let linked: Vec<&String> = (0..3)
            .map(|_| &ids[rng.below(n_entries.max(1))])
            .filter(|_| n_entries > 0)
            .collect();
        let mut body = String::new();
        let _ = writeln!(
            body,
            "# Debugging note {a}\n\nThis note collects field experience with {}.\n",
            rng.pick(SUBJECTS)
        );
        for (s, id) in linked.iter().enumerate() {
            let _ = writeln!(body, "## Case {s}: {}\n", rng.pick(FAILURES));
            let _ = writeln!(
                body,
                "See [the entry](../../signatures/{id}.json) and [the first case](#case-0-{}).\n",
                slug_of(&body)
            );
            let _ = writeln!(
                body,
                "```python expect=ok harness=python-torch\nx = torch.zeros({})\nprint(x.sum())\n```\n",
                rng.below(100) + 1
            );
        }
        if a > 0 {
            let _ = writeln!(
                body,
                "Previous: [note {}](gen-{:04}.md#debugging-note-{}).",
                a - 1,
                a - 1,
                a - 1
            );
        }
        let sigs: Vec<String> = linked.iter().map(|s| s.to_string()).collect();
        let text = format!(
            "---\ntitle: \"Debugging note {a}\"\nid: {domain}/gen-{a:04}\ndate: \"2025-{:02}-{:02}\"\nsignatures: [{}]\ntags: [generated]\n---\n{body}",
            rng.below(12) + 1,
            rng.below(28) + 1,
            sigs.join(", ")
        );
        // Articles of all domains live under their own domain; the "previous" link
        // crosses domains only when the domain repeats, so point it within the domain.
        let text = if a >= DOMAINS.len() {
            text.replace(
                &format!("gen-{:04}.md#debugging-note-{}", a - 1, a - 1),
                &format!(
                    "gen-{:04}.md#debugging-note-{}",
                    a - DOMAINS.len(),
                    a - DOMAINS.len()
                ),
            )
        } else {
            text.lines()
                .filter(|l| !l.starts_with("Previous:"))
                .collect::<Vec<_>>()
                .join("\n")
                + "\n"
        };
        write(
            &out.join("articles")
                .join(domain)
                .join(format!("gen-{a:04}.md")),
            &text,
        )?;
    }
    for sub in ["signatures", "articles"] {
        for item in walkdir::WalkDir::new(out.join(sub)).contents_first(true) {
            let Ok(item) = item else { continue };
            let path = item.path();
            if item.file_type().is_file() && !written.contains(path) {
                std::fs::remove_file(path)
                    .with_context(|| format!("cannot remove {}", path.display()))?;
            } else if item.file_type().is_dir() {
                // Only succeeds when the directory is empty.
                let _ = std::fs::remove_dir(path);
            }
        }
    }
    Ok(())
}

fn slug_of(body: &str) -> String {
    // The first "## Case 0: …" heading's slug tail.
    body.lines()
        .find_map(|l| l.strip_prefix("## Case 0: "))
        .map(|t| t.to_lowercase().replace(' ', "-"))
        .unwrap_or_default()
}

fn push(entry: &mut Value, edge: &str, id: &str) {
    if let Some(list) = entry["transition_graph"][edge].as_array_mut() {
        list.push(Value::from(id));
    }
}

fn entry(rng: &mut Rng, i: usize, id: &str) -> Value {
    let (s, f) = (rng.below(SUBJECTS.len()), rng.below(FAILURES.len()));
    let code = *rng.pick(CODES);
    let token = format!("E{i:05}");
    let signature = format!(
        "CUDA error: {} {} [{token}] ({code})",
        SUBJECTS[s], FAILURES[f]
    );
    // Varied regex shapes, each specific to this entry (the token) and matching its signature.
    let regex = match i % 4 {
        0 => format!("{} {} \\[{token}\\]", SUBJECTS[s], FAILURES[f]),
        1 => format!(
            "(?:CUDA error: )?{} {} \\[{token}\\]",
            SUBJECTS[s], FAILURES[f]
        ),
        2 => format!("\\[{token}\\] \\((cudaError[A-Za-z]+)\\)$"),
        _ => format!(
            "{}\\s+{}\\s+\\[E0*{}\\]",
            SUBJECTS[s].replace(' ', "\\s+"),
            FAILURES[f].replace(' ', "\\s+"),
            i
        ),
    };
    // One entry per code claims it (`error_code`) and, as `error-string-mismatch` asks,
    // recognises its enumerator: as a whole line, so that it matches no other entry's
    // signature and the line prefilter stays as selective as before. The other entries
    // name the code only in their signature text.
    let (regex, code) = match CODES.get(i) {
        Some(owned) => (format!("{regex}|^{owned}$"), Value::from(*owned)),
        None => (regex, Value::Null),
    };
    let n_dead = 1 + rng.below(4);
    let n_work = 1 + rng.below(4);
    let source = |k: usize| format!("https://docs.nvidia.com/cuda/gen/{i}/{k}");
    let dead_ends: Vec<Value> = (0..n_dead)
        .map(|k| json!({"action": format!("Restart the {} after it {} ({token})", SUBJECTS[(s + k) % SUBJECTS.len()], FAILURES[f]), "why_fails": format!("The underlying fault behind {token} is deterministic and returns on the next run."), "fail_rate": 0.5 + (k as f64) / 10.0, "basis": {"kind": "estimate"}, "condition": "", "sources": [source(k)]}))
        .collect();
    let workarounds: Vec<Value> = (0..n_work)
        .map(|k| json!({"action": format!("Check the {} configuration for {token}", SUBJECTS[(s + k + 1) % SUBJECTS.len()]), "success_rate": 0.9 - (k as f64) / 10.0, "basis": {"kind": "estimate"}, "how": format!("Query the limits with `cudaDeviceGetAttribute` and compare them with the launch parameters of {token} (case {k})."), "condition": "", "sources": [source(10 + k)]}))
        .collect();
    let dead_ends_zh: Vec<Value> = (0..n_dead)
        .map(|k| {
            Value::from(format!(
                "在{}{}之后重启它（{token}）：{token} 背后的故障是确定性的，下次运行还会出现（情况 {k}）。",
                ZH_SUBJECTS[(s + k) % ZH_SUBJECTS.len()],
                ZH_FAILURES[f]
            ))
        })
        .collect();
    let workarounds_zh: Vec<Value> = (0..n_work)
        .map(|k| {
            Value::from(format!(
                "检查{}的配置，并与 {token} 的启动参数进行比较（情况 {k}）。",
                ZH_SUBJECTS[(s + k + 1) % ZH_SUBJECTS.len()]
            ))
        })
        .collect();
    let versions: Vec<Value> = (0..rng.below(4)).map(|v| json!({"version": format!("CUDA 12.{v}"), "introduced": format!("2023-0{}-01", v + 1), "deprecated": null, "removed": null, "behavior_change": null, "status": "active"})).collect();
    let domain = id.split('/').next().unwrap_or("cuda");
    json!({
        "id": id,
        "signature": signature,
        "signature_zh": format!("CUDA 错误：{}{} [{token}]", ZH_SUBJECTS[s], ZH_FAILURES[f]),
        "regex": regex,
        "domain": domain,
        "category": "runtime_error",
        "subcategory": null,
        "root_cause": format!("The {} {} ({token}) because a prior asynchronous operation left it in an invalid state.", SUBJECTS[s], FAILURES[f]),
        "root_cause_type": "generic",
        "root_cause_zh": format!("{}{}（{token}），因为之前的异步操作使其处于无效状态。", ZH_SUBJECTS[s], ZH_FAILURES[f]),
        "versions": versions,
        "os_specific": {},
        "dead_ends": dead_ends,
        "dead_ends_zh": dead_ends_zh,
        "workarounds": workarounds,
        "workarounds_zh": workarounds_zh,
        "transition_graph": {"leads_to": [], "preceded_by": [], "frequently_confused_with": []},
        "official_doc_url": "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        "official_doc_section": null,
        "error_code": code,
        "verification_tier": "ai_generated",
        "confidence": 0.5,
        "fix_success_rate": 0.75,
        "resolvable": "true",
        "operator_action": "fix-code",
        "first_seen": "2025-01-15",
        "last_confirmed": "2026-06-01",
        "last_updated": "2026-06-01",
        "evidence_count": n_dead + n_work,
        "tags": [domain, "generated"],
        "locale": "en",
        "aliases": []
    })
}

fn write_if_changed(path: &Path, text: &str) -> Result<()> {
    if std::fs::read(path).is_ok_and(|old| old == text.as_bytes()) {
        return Ok(());
    }
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

#[cfg(test)]
mod tests {
    /// The benchmarks time `errata check` on this corpus and refuse one with errors: a
    /// schema change that the generator misses must fail here, not in a benchmark run.
    #[test]
    fn the_generated_corpus_checks_clean() {
        let dir = tempfile::tempdir().expect("tempdir");
        super::generate(dir.path(), 300, 20, 42).expect("generate");
        let kb = errata_load::KnowledgeBase::load(dir.path()).expect("load");
        let options = errata_check::CheckOptions {
            today: errata_model::date::Date::parse("2026-11-21").expect("date"),
            ..Default::default()
        };
        let errors: Vec<String> = errata_check::check(&kb, &options)
            .iter()
            .filter(|d| d.severity == errata_model::Severity::Error)
            .take(5)
            .map(|d| format!("{}: {}", d.rule, d.message))
            .collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
}
