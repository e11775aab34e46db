//! Entries as the bundle holds them, and their advice in English or Chinese.

use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::entries_head::Head;

/// A language for the text of an entry.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Lang {
    /// English (every entry has it).
    #[default]
    En,
    /// Chinese, falling back to English for text that has no translation.
    Zh,
}

impl Lang {
    /// `en` or `zh`.
    pub fn parse(code: &str) -> Option<Lang> {
        match code {
            "en" => Some(Lang::En),
            "zh" => Some(Lang::Zh),
            _ => None,
        }
    }
}

/// One signature entry: the fields a log scanner needs, typed, and the whole entry as
/// written ([`Entry::raw_json`], [`Entry::raw`]) for everything else.
///
/// The whole entry is kept as its JSON text, not as a tree: 10,000 entries as
/// `serde_json::Value` trees took 160 MB, as text they take the text's size.
#[derive(Debug, Clone)]
pub struct Entry {
    /// `<domain>/<slug>`.
    pub id: String,
    /// The error message, in English.
    pub signature: String,
    /// The error message, in Chinese.
    pub signature_zh: String,
    /// The regex that recognises it.
    pub regex: String,
    /// Other spellings of the message.
    pub aliases: Vec<String>,
    /// How the entry was verified (`ai_generated`, `community`, `human_reviewed`,
    /// `reproduced`, `official`).
    pub verification_tier: String,
    /// The status value the error is, when it is one: `cudaErrorIllegalAddress (700)`,
    /// `CUBLAS_STATUS_EXECUTION_FAILED (13)`, … (what `errata decode` links to).
    pub error_code: Option<String>,
    /// What an operator does about it (`fix-code`, `restart-process`, `reset-gpu`, …;
    /// absent in bundles written before the field existed).
    pub operator_action: Option<String>,
    /// The entries this error is known to lead to (`transition_graph.leads_to`).
    pub leads_to: Vec<String>,
    /// The entries known to come before it (`transition_graph.preceded_by`).
    pub preceded_by: Vec<String>,
    /// Environments known to produce it (what `errata audit` checks a report against).
    pub affects: Vec<errata_model::Affect>,
    /// The root cause, dead ends and workarounds ([`Entry::texts`]): typed on first use.
    texts: std::sync::OnceLock<Box<Texts>>,
    raw: RawText,
}

/// An entry's advice in both languages: most of its text, and typed only when first
/// asked for. A scan reports a few entries out of thousands, and typing all of them when
/// a bundle opens was a fifth of the start-up time and a third of its memory at 10,000
/// entries.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Texts {
    /// Why it happens.
    pub root_cause: String,
    /// Why it happens, in Chinese.
    pub root_cause_zh: String,
    /// What people try that does not help.
    pub dead_ends: Vec<DeadEnd>,
    /// The dead ends in Chinese, one per dead end (what was tried and why it fails).
    pub dead_ends_zh: Vec<String>,
    /// What helps.
    pub workarounds: Vec<Workaround>,
    /// One Chinese text per workaround.
    pub workarounds_zh: Vec<String>,
}

/// An entry's JSON text: a span of the `entries.json` it was read from, shared by every
/// entry of that file (a copy per entry was another 34 MB at 10,000 entries).
#[derive(Clone)]
struct RawText {
    all: std::sync::Arc<String>,
    span: std::ops::Range<usize>,
}

impl RawText {
    fn get(&self) -> &str {
        &self.all[self.span.clone()]
    }
}

impl std::fmt::Debug for RawText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.get(), f)
    }
}

/// Two entries are equal when their JSON is (every other field is read from it).
impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.raw.get() == other.raw.get()
    }
}

/// Something that does not fix the error.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct DeadEnd {
    /// What people try.
    pub action: String,
    /// Why it does not help.
    pub why_fails: String,
    /// How often it fails, 0 to 1: K/N of a counted basis, else an editor's estimate.
    pub fail_rate: f64,
    /// What `fail_rate` rests on (absent in bundles older than schema 2).
    pub basis: Option<errata_model::Basis>,
    /// When this applies.
    pub condition: String,
    /// Where the claim comes from.
    pub sources: Vec<String>,
}

/// Something that fixes the error.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Workaround {
    /// What to do.
    pub action: String,
    /// How often it works, 0 to 1: K/N of a counted basis, else an editor's estimate.
    pub success_rate: f64,
    /// What `success_rate` rests on (absent in bundles older than schema 2).
    pub basis: Option<errata_model::Basis>,
    /// How to do it.
    pub how: String,
    /// When this applies.
    pub condition: String,
    /// Where the claim comes from.
    pub sources: Vec<String>,
}

impl Entry {
    /// Reads an entry from its JSON (as in `entries.json`).
    pub fn from_value(raw: Value) -> Result<Entry, serde_json::Error> {
        Entry::from_raw(serde_json::value::to_raw_value(&raw)?)
    }

    /// Reads an entry from its JSON text.
    pub fn from_raw(raw: Box<RawValue>) -> Result<Entry, serde_json::Error> {
        let text = String::from(Box::<str>::from(raw));
        let span = 0..text.len();
        let entry = Entry::from_shared(std::sync::Arc::new(text), span)?;
        entry.check_texts()?;
        Ok(entry)
    }

    /// Types the entry's advice now, so that a malformed one is an error here rather
    /// than empty advice later ([`Entry::texts`] cannot fail). `Bundle::open` checks
    /// every entry; opening for matching leaves it to the bundle's verified hashes.
    pub fn check_texts(&self) -> Result<&Texts, serde_json::Error> {
        if let Some(t) = self.texts.get() {
            return Ok(t);
        }
        let typed: Box<Texts> = serde_json::from_str(self.raw.get())?;
        Ok(self.texts.get_or_init(|| typed))
    }

    /// The root cause, dead ends and workarounds in both languages, typed on first use.
    /// Advice that does not type (a bundle written by a different tool, which
    /// `Bundle::open` would have refused) reads as empty.
    pub fn texts(&self) -> &Texts {
        self.texts
            .get_or_init(|| serde_json::from_str(self.raw.get()).unwrap_or_default())
            .as_ref()
    }

    /// What people try that does not help, in English.
    pub fn dead_ends(&self) -> &[DeadEnd] {
        &self.texts().dead_ends
    }

    /// What helps, in English.
    pub fn workarounds(&self) -> &[Workaround] {
        &self.texts().workarounds
    }

    /// Reads the entry whose JSON text is `all[span]` (one element of `entries.json`).
    pub(crate) fn from_shared(
        all: std::sync::Arc<String>,
        span: std::ops::Range<usize>,
    ) -> Result<Entry, serde_json::Error> {
        let raw = RawText { all, span };
        let head: Head = serde_json::from_str(raw.get())?;
        Ok(Entry::with_head(head, raw))
    }

    /// Reads an entry from its head (a line of `entries.head.json`): its text, for
    /// [`Entry::texts`] and [`Entry::raw_json`], is [`Entry::attach`]ed once read.
    pub(crate) fn from_head(head: &str) -> Result<Entry, serde_json::Error> {
        let head: Head = serde_json::from_str(head)?;
        let raw = RawText {
            all: std::sync::Arc::default(),
            span: 0..0,
        };
        Ok(Entry::with_head(head, raw))
    }

    /// Gives an entry read from its head its whole text, `all[span]`.
    pub(crate) fn attach(&mut self, all: std::sync::Arc<String>, span: std::ops::Range<usize>) {
        self.raw = RawText { all, span };
    }

    fn with_head(t: Head, raw: RawText) -> Entry {
        Entry {
            id: t.id,
            signature: t.signature,
            signature_zh: t.signature_zh,
            regex: t.regex,
            aliases: t.aliases,
            texts: std::sync::OnceLock::new(),
            verification_tier: t.verification_tier,
            error_code: t.error_code,
            operator_action: t.operator_action,
            leads_to: t.transition_graph.leads_to,
            preceded_by: t.transition_graph.preceded_by,
            affects: t.affects,
            raw,
        }
    }

    /// For an answer read from NVIDIA's Xid catalog rather than from an entry of the
    /// knowledge base (an Xid no entry knows): the page its meaning was read from. Such
    /// an entry has no page of its own and no advice beyond NVIDIA's.
    pub fn catalog_source(&self) -> Option<String> {
        #[derive(Deserialize)]
        struct Catalog {
            catalog: Option<Source>,
        }
        #[derive(Deserialize)]
        struct Source {
            source: String,
        }
        serde_json::from_str::<Catalog>(self.raw.get())
            .ok()?
            .catalog
            .map(|c| c.source)
    }

    /// The entry exactly as the bundle holds it (every field of the entry schema), as
    /// JSON text.
    pub fn raw_json(&self) -> &str {
        self.raw.get()
    }

    /// The entry exactly as the bundle holds it, parsed (on each call).
    pub fn raw(&self) -> Value {
        // The text was parsed once already, so this cannot fail.
        serde_json::from_str(self.raw.get()).unwrap_or(Value::Null)
    }

    /// The signature in `lang`.
    pub fn signature(&self, lang: Lang) -> &str {
        pick(lang, &self.signature, &self.signature_zh)
    }

    /// The root cause in `lang`.
    pub fn root_cause(&self, lang: Lang) -> &str {
        let t = self.texts();
        pick(lang, &t.root_cause, &t.root_cause_zh)
    }

    /// What to try, best first (highest success rate, then as written), in `lang`.
    pub fn advice(&self, lang: Lang) -> Advice<'_> {
        let texts = self.texts();
        let mut workarounds: Vec<Step<'_>> = texts
            .workarounds
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let zh = texts.workarounds_zh.get(i).map_or("", String::as_str);
                Step {
                    action: pick(lang, &w.action, zh),
                    detail: &w.how,
                    rate: w.success_rate,
                    basis: w.basis.as_ref(),
                    evidence: errata_model::rate_shown(
                        w.success_rate,
                        w.basis.as_ref(),
                        false,
                        lang == Lang::Zh,
                    ),
                    sources: &w.sources,
                    // The Chinese text carries the condition; it is English here.
                    condition: match lang {
                        Lang::Zh if !zh.trim().is_empty() => "",
                        _ => &w.condition,
                    },
                }
            })
            .collect();
        workarounds.sort_by(|a, b| b.rate.total_cmp(&a.rate));
        let mut dead_ends: Vec<Step<'_>> = texts
            .dead_ends
            .iter()
            .enumerate()
            .map(|(i, d)| {
                // In Chinese, one string says what was tried and why it fails.
                let zh = texts.dead_ends_zh.get(i).map_or("", String::as_str);
                let (action, detail) = match lang {
                    Lang::Zh if !zh.trim().is_empty() => (zh, ""),
                    _ => (d.action.as_str(), d.why_fails.as_str()),
                };
                Step {
                    action,
                    detail,
                    rate: d.fail_rate,
                    basis: d.basis.as_ref(),
                    evidence: errata_model::rate_shown(
                        d.fail_rate,
                        d.basis.as_ref(),
                        true,
                        lang == Lang::Zh,
                    ),
                    sources: &d.sources,
                    condition: match lang {
                        Lang::Zh if !zh.trim().is_empty() => "",
                        _ => &d.condition,
                    },
                }
            })
            .collect();
        dead_ends.sort_by(|a, b| b.rate.total_cmp(&a.rate));
        Advice {
            root_cause: self.root_cause(lang),
            dead_ends,
            workarounds,
        }
    }
}

/// What an entry says to do about its error, in one language.
#[derive(Debug, Clone, PartialEq)]
pub struct Advice<'a> {
    /// Why it happens.
    pub root_cause: &'a str,
    /// What not to try (most often failing first): `detail` says why it fails.
    pub dead_ends: Vec<Step<'a>>,
    /// What to try (most often working first): `detail` says how.
    pub workarounds: Vec<Step<'a>>,
}

/// One thing to try or not to try.
#[derive(Debug, Clone, PartialEq)]
pub struct Step<'a> {
    /// The action.
    pub action: &'a str,
    /// How to do it (workaround) or why it fails (dead end).
    pub detail: &'a str,
    /// Success rate (workaround) or fail rate (dead end), 0 to 1: a measurement only
    /// when [`Step::is_counted`]; otherwise an editor's estimate, to be shown as
    /// [`Step::evidence`] and never as a percentage.
    pub rate: f64,
    /// What the rate rests on.
    pub basis: Option<&'a errata_model::Basis>,
    /// The rate as it is shown: "failed in 3 of 4 reports (95% interval 30–95%)" or
    /// "usually works (editor's estimate)", in the advice's language.
    pub evidence: String,
    /// Where the claim comes from.
    pub sources: &'a [String],
    /// When it applies (English; empty when always). A Chinese step carries it in its
    /// action text.
    pub condition: &'a str,
}

impl Step<'_> {
    /// `(k, n)` when the rate was counted (reports, runs or outcome records).
    pub fn counted(&self) -> Option<(u64, u64)> {
        self.basis.and_then(errata_model::Basis::counted)
    }

    /// Whether the rate is a count rather than an estimate.
    pub fn is_counted(&self) -> bool {
        self.counted().is_some()
    }

    /// What the rate rests on: its basis's kind when counted (`reports`, `runs`,
    /// `outcomes`), else `estimate`.
    pub fn basis_kind(&self) -> &str {
        match (self.counted(), self.basis) {
            (Some(_), Some(b)) => &b.kind,
            _ => "estimate",
        }
    }
}

/// The Chinese text when asked for and present, else the English.
fn pick<'a>(lang: Lang, en: &'a str, zh: &'a str) -> &'a str {
    match lang {
        Lang::Zh if !zh.trim().is_empty() => zh,
        _ => en,
    }
}
