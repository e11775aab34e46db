//! The knowledge base in `data/` as a log scanner sees it, through the real `errata
//! match`: each entry is the first answer for its own signature and aliases, each
//! realistic log line of `tests/fixtures/faces/` resolves to the entry it was written
//! for, the `cudaError_t` catalogue covers the codes the runtime can return, and what the
//! entries' prose says of their counted rates agrees with the rates' bases.

use std::collections::{BTreeMap, BTreeSet};

mod common;
use common::{errata, repo, s};

/// The fewest `cudaError_t` codes (of the 137 besides `cudaSuccess`) that must have an
/// entry. Raise it as the catalogue grows; never lower it.
const MIN_CODES_COVERED: usize = 137;

/// Every entry of `data/`, by id.
fn entries() -> BTreeMap<String, serde_json::Value> {
    let mut out = BTreeMap::new();
    for domain in std::fs::read_dir(repo().join("data/signatures")).unwrap() {
        for file in std::fs::read_dir(domain.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            let entry: serde_json::Value = serde_json::from_str(&text).unwrap();
            out.insert(entry["id"].as_str().unwrap().to_string(), entry);
        }
    }
    out
}

/// Scans `lines` (one log line each) with `errata match --data data` and returns, per
/// line, the id of the first (most specific) match, if any.
fn first_match_per_line(lines: &[String]) -> Vec<Option<String>> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("faces.log");
    std::fs::write(&log, lines.join("\n") + "\n").unwrap();
    let run = errata(&repo(), &["match", s(&log), "--format", "json"]);
    assert!(run.code <= 1, "errata match failed: {}", run.all());
    let mut first: Vec<Option<String>> = vec![None; lines.len()];
    for found in run.stdout.lines() {
        let found: serde_json::Value = serde_json::from_str(found).unwrap();
        let line = found["line"].as_u64().unwrap() as usize;
        let slot = &mut first[line - 1];
        if slot.is_none() {
            *slot = Some(found["id"].as_str().unwrap().to_string());
        }
    }
    first
}

/// Fails, listing them, when any `(expected id, line)` pair is first matched by another
/// entry or by none.
fn assert_resolved(cases: &[(String, String)]) {
    let wrong = misresolved(cases);
    assert!(
        wrong.is_empty(),
        "{} misresolved:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// The `(expected id, line)` pairs whose first match is another entry or none.
fn misresolved(cases: &[(String, String)]) -> Vec<String> {
    let lines: Vec<String> = cases.iter().map(|(_, line)| line.clone()).collect();
    let first = first_match_per_line(&lines);
    cases
        .iter()
        .zip(first)
        .filter(|((id, _), got)| got.as_deref() != Some(id.as_str()))
        .map(|((id, line), got)| format!("{line:?}: expected {id}, got {got:?}"))
        .collect()
}

#[test]
fn every_entry_is_the_first_answer_for_its_own_signature_and_aliases() {
    let mut cases = Vec::new();
    for (id, entry) in entries() {
        cases.push((id.clone(), entry["signature"].as_str().unwrap().to_string()));
        for alias in entry["aliases"].as_array().unwrap() {
            cases.push((id.clone(), alias.as_str().unwrap().to_string()));
        }
    }
    assert!(cases.len() > entries().len());
    assert_resolved(&cases);
}

/// The `*.tsv` files of `dir`, sorted.
fn tsv_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "tsv"))
        .collect();
    files.sort();
    files
}

/// `tests/fixtures/faces/*.tsv`: `id<TAB>log line`, `#` comments.
fn faces() -> Vec<(String, String)> {
    let dir = repo().join("tests/fixtures/faces");
    let files = tsv_files(&dir);
    let mut out = Vec::new();
    for file in files {
        for (n, line) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let (id, text) = line
                .split_once('\t')
                .unwrap_or_else(|| panic!("{}:{}: not `id<TAB>line`", file.display(), n + 1));
            out.push((id.to_string(), text.to_string()));
        }
    }
    out
}

#[test]
fn every_face_in_the_fixture_log_resolves_to_its_entry() {
    let faces = faces();
    let entries = entries();
    let unknown: Vec<&String> = faces
        .iter()
        .map(|(id, _)| id)
        .filter(|id| !entries.contains_key(*id))
        .collect();
    assert!(
        unknown.is_empty(),
        "faces of entries that do not exist: {unknown:?}"
    );
    // Every entry that names a cudaError_t has at least one realistic line.
    let with_faces: BTreeSet<&str> = faces.iter().map(|(id, _)| id.as_str()).collect();
    let without: Vec<&String> = entries
        .iter()
        .filter(|(_, e)| {
            e["error_code"]
                .as_str()
                .is_some_and(|c| c.starts_with("cudaError"))
        })
        .map(|(id, _)| id)
        .filter(|id| !with_faces.contains(id.as_str()))
        .collect();
    assert!(
        without.is_empty(),
        "cudaError_t entries with no line in tests/fixtures/faces/: {without:?}"
    );
    assert_resolved(&faces);
}

/// The entry that claims each `cudaError_t` code: by `error_code` (one entry per code), or
/// by an alias that is the bare name (two codes with one runtime string share an entry).
fn code_owners(entries: &BTreeMap<String, serde_json::Value>) -> BTreeMap<String, String> {
    let mut owner: BTreeMap<String, String> = BTreeMap::new();
    for (id, e) in entries {
        if let Some(code) = e["error_code"].as_str() {
            let name = code.split('(').next().unwrap().trim();
            if name.starts_with("cudaError") {
                assert!(
                    owner.insert(name.to_string(), id.clone()).is_none(),
                    "two entries claim {name} as error_code"
                );
            }
        }
    }
    for (id, e) in entries {
        for alias in e["aliases"].as_array().unwrap() {
            let alias = alias.as_str().unwrap();
            if alias.starts_with("cudaError") && !alias.contains(' ') {
                owner.entry(alias.to_string()).or_insert_with(|| id.clone());
            }
        }
    }
    owner
}

/// `(name, runtime string)` of every `cudaError_t` code but `cudaSuccess`, from the table
/// libcudart printed.
fn cuda_error_strings() -> Vec<(String, String)> {
    let tsv = repo().join("crates/errata-model/data/cuda-error-strings.tsv");
    std::fs::read_to_string(tsv)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut cols = l.splitn(3, '\t');
            let code = cols.next()?;
            let (name, text) = (cols.next()?, cols.next()?);
            (code != "0").then(|| (name.to_string(), text.to_string()))
        })
        .collect()
}

#[test]
fn the_cuda_error_catalogue_covers_the_runtime_codes() {
    let entries = entries();
    let owner = code_owners(&entries);
    let codes = cuda_error_strings();
    assert_eq!(
        codes.len(),
        137,
        "the table changed: update this test deliberately"
    );
    // Each covered code is found, first, by its enumerator name and by PyTorch's face of
    // its runtime string.
    let mut cases = Vec::new();
    for (name, text) in &codes {
        if let Some(id) = owner.get(name) {
            cases.push((id.clone(), name.clone()));
            cases.push((
                id.clone(),
                format!("torch.AcceleratorError: CUDA error: {text}"),
            ));
        }
    }
    assert_resolved(&cases);
    let missing: Vec<&String> = codes
        .iter()
        .map(|(name, _)| name)
        .filter(|name| !owner.contains_key(*name))
        .collect();
    let covered = codes.len() - missing.len();
    assert!(
        covered >= MIN_CODES_COVERED,
        "{covered}/137 cudaError_t codes have an entry; without one: {missing:?}"
    );
}

/// The README's line about the knowledge base states the real counts.
#[test]
fn the_readme_counts_are_true() {
    let entries = entries();
    let articles = std::fs::read_dir(repo().join("data/articles"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .map(|f| f.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.ends_with(".md") && !name.ends_with(".zh.md")
        })
        .count();
    let reproducers = entries
        .values()
        .filter(|e| e.get("verify").is_some())
        .count();
    let codes = cuda_error_strings();
    let owner = code_owners(&entries);
    let covered = codes
        .iter()
        .filter(|(name, _)| owner.contains_key(name))
        .count();
    // Lines joined: a sentence of the README may be wrapped anywhere.
    let readme = std::fs::read_to_string(repo().join("README.md"))
        .unwrap()
        .replace('\n', " ");
    let expected = format!(
        "`data/` holds {} entries ({covered} of the {} `cudaError_t` codes, {reproducers} with a reproducer) and {articles} articles.",
        entries.len(),
        codes.len()
    );
    assert!(
        readme.contains(&expected),
        "README.md should say: {expected}"
    );
    // And what the rates rest on: the same counts `errata check` would find in `data/`.
    let mut kinds = BTreeMap::<String, usize>::new();
    for entry in entries.values() {
        for list in ["dead_ends", "workarounds"] {
            for item in entry
                .get(list)
                .and_then(|v| v.as_array())
                .into_iter()
                .flatten()
            {
                let kind = item["basis"]["kind"].as_str().unwrap_or("none").to_string();
                *kinds.entry(kind).or_default() += 1;
            }
        }
    }
    let count = |kind: &str| kinds.get(kind).copied().unwrap_or(0);
    let expected = format!(
        "Every rate says what it rests on (`basis`): {} dead ends and workarounds are counted from public reports (K of N, each report's link and words), {} from the run tier's GPU runs of the snippets that show them, and the other {} are editors' estimates, shown as words.",
        count("reports"),
        count("runs"),
        count("estimate")
    );
    assert!(
        readme.contains(&expected),
        "README.md should say: {expected} (basis kinds in data/: {kinds:?})"
    );
}

/// Where a dead end's or workaround's English prose says how many reports were counted
/// ("two of the three counted reports", "all 4 counted reporters"), that number is its
/// basis's `n`, and prose that speaks of counted reports has a counted basis. A report
/// taken out of a count on a second reading left such sentences behind more than once.
#[test]
fn counts_stated_in_prose_match_the_basis() {
    let counted = regex::Regex::new(
        r"(?i)\b(?:(of|all|the|other)\s+(?:the\s+)?([a-z0-9]+)\s+|(the)\s+)counted\s+(?:reports|reporters|attempts)\b",
    )
    .unwrap();
    let number = |word: &str| -> Option<u64> {
        let words = [
            "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
        ];
        word.parse().ok().or_else(|| {
            words
                .iter()
                .position(|w| w.eq_ignore_ascii_case(word))
                .map(|i| i as u64 + 1)
        })
    };
    let mut wrong = Vec::new();
    for (id, entry) in entries() {
        for (list, prose) in [("dead_ends", "why_fails"), ("workarounds", "how")] {
            for (i, item) in entry[list].as_array().into_iter().flatten().enumerate() {
                let text = item[prose].as_str().unwrap_or_default();
                let basis = &item["basis"];
                for found in counted.captures_iter(text) {
                    let said = found.get(0).map_or("", |m| m.as_str());
                    if basis["kind"] != "reports" {
                        wrong.push(format!(
                            "{id} {list}[{i}]: \"{said}\" but the basis is {}",
                            basis["kind"]
                        ));
                        continue;
                    }
                    // "the other 4 counted reports", and "the two counted reports where
                    // …", are a part of the count, not its size.
                    let rest = &text[found.get(0).map_or(0, |m| m.end())..];
                    let part = [" where", " who", " that", " in which"]
                        .iter()
                        .any(|clause| rest.starts_with(clause));
                    let whole = found.get(1).is_some_and(|w| {
                        let w = w.as_str().to_ascii_lowercase();
                        w != "other" && !(w == "the" && part)
                    });
                    let stated = found.get(2).and_then(|m| number(m.as_str()));
                    if let (true, Some(n)) = (whole, stated)
                        && Some(n) != basis["n"].as_u64()
                    {
                        wrong.push(format!(
                            "{id} {list}[{i}]: \"{said}\" but n = {}",
                            basis["n"]
                        ));
                    }
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "prose and basis disagree:\n{}",
        wrong.join("\n")
    );
}

/// `tests/fixtures/logs/*.tsv`: whole logs of real jobs, one line each as
/// `expected-id<TAB>line` (`-` for a line that is no error: noise, progress, the parts of
/// a traceback that name no error). The lines are scanned in order as one log, as a user
/// pastes it, by the real `errata match`.
#[test]
fn whole_training_logs_are_recognised_line_by_line() {
    let dir = repo().join("tests/fixtures/logs");
    let files = tsv_files(&dir);
    assert!(!files.is_empty(), "no log in {}", dir.display());
    let entries = entries();
    for file in files {
        let mut expected: Vec<Option<String>> = Vec::new();
        let mut lines = Vec::new();
        for (n, row) in std::fs::read_to_string(&file).unwrap().lines().enumerate() {
            let (id, line) = row
                .split_once('\t')
                .unwrap_or_else(|| panic!("{}:{}: not `id<TAB>line`", file.display(), n + 1));
            if id != "-" {
                assert!(
                    entries.contains_key(id),
                    "{}:{}: no entry {id}",
                    file.display(),
                    n + 1
                );
            }
            expected.push((id != "-").then(|| id.to_string()));
            lines.push(line.to_string());
        }
        let errors = expected.iter().filter(|e| e.is_some()).count();
        assert!(
            errors >= 10 && lines.len() >= 2 * errors,
            "{}: a realistic log has errors among much noise ({errors} of {})",
            file.display(),
            lines.len()
        );
        let got = first_match_per_line(&lines);
        let wrong: Vec<String> = lines
            .iter()
            .zip(expected.iter().zip(&got))
            .enumerate()
            .filter(|(_, (_, (want, got)))| want != got)
            .map(|(i, (line, (want, got)))| {
                format!("line {}: {line:?}: expected {want:?}, got {got:?}", i + 1)
            })
            .collect();
        assert!(
            wrong.is_empty(),
            "{}: {} lines misread:\n{}",
            file.display(),
            wrong.len(),
            wrong.join("\n")
        );
    }
}
