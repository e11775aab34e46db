//! One function per page type: gather the view model, render the template.
//!
//! View models are JSON values built here; the templates only lay them out. Every
//! string from the data reaches the HTML through Tera's autoescaping; the only values
//! marked `safe` are HTML this crate produced itself (Markdown bodies, highlighted code,
//! and the JSON-LD, which is escaped for a `<script>` element by [`json_ld`]).

use serde::Serialize;
use serde_json::{Value, json};

use crate::catalog::{ArticlePair, Catalog, Translation};
use crate::markdown::{self, SnippetBadge};
use crate::runs::{Runs, Verdict};
use crate::theme::Theme;
use crate::urls::{self, Lang, is_https};
use crate::{Error, SiteOptions};

/// Where rendering finds the text of a loaded file (an article's body is a byte range of
/// it): the [`errata_load::KnowledgeBase`] for a one-off build, the site state's own
/// store for an incremental one.
pub(crate) trait Texts: Sync {
    /// The text of the file at `path`, as loaded.
    fn text(&self, path: &std::path::Path) -> Option<&str>;
}

impl Texts for errata_load::KnowledgeBase {
    fn text(&self, path: &std::path::Path) -> Option<&str> {
        self.source(path).map(|s| s.text.as_str())
    }
}

/// Everything a page needs besides its own data.
pub(crate) struct Ctx<'a> {
    pub theme: &'a Theme,
    pub opts: &'a SiteOptions,
    pub catalog: &'a Catalog<'a>,
    pub runs: &'a Runs,
    /// Outcome records, folded into the rates the entry pages show.
    pub outcomes: &'a errata_outcomes::Index,
    pub data_root: &'a std::path::Path,
    pub texts: &'a dyn Texts,
}

/// A page's common frame: language, links back to the roots, alternates.
struct Frame {
    lang: Lang,
    file: String,
    root: String,
    lang_root: String,
}

impl Frame {
    fn new(lang: Lang, page: &str) -> Frame {
        let file = lang.file(page);
        let root = urls::root_of(&file);
        let lang_root = format!("{root}{}", lang.prefix());
        Frame {
            lang,
            file,
            root,
            lang_root,
        }
    }

    /// A link from this page to another page of the same language.
    fn href(&self, page: &str) -> String {
        format!("{}{page}", self.lang_root)
    }
}

#[derive(Serialize)]
struct Alternate {
    lang: &'static str,
    href: String,
}

#[derive(Serialize)]
struct LanguageLink<'v> {
    code: &'static str,
    name: &'v str,
    current: bool,
    href: String,
}

/// A source: a link when it is an `https://` URL, text otherwise.
#[derive(Serialize)]
struct SourceLink<'v> {
    text: &'v str,
    href: Option<&'v str>,
}

impl<'v> SourceLink<'v> {
    fn of(text: &'v str) -> SourceLink<'v> {
        SourceLink {
            text,
            href: is_https(text).then(|| text.trim()),
        }
    }
}

/// One counted report under a rate: the reporter's words and where they are.
#[derive(Serialize)]
struct ReportView<'v> {
    link: SourceLink<'v>,
    /// `failed` or `worked`.
    outcome: &'v str,
    quote: &'v str,
}

fn reports(basis: Option<&errata_model::Basis>) -> Vec<ReportView<'_>> {
    basis
        .filter(|b| b.kind == "reports")
        .map(|b| {
            b.items
                .iter()
                .filter_map(|it| {
                    Some(ReportView {
                        link: SourceLink::of(it.url.as_deref()?),
                        outcome: &it.outcome,
                        quote: &it.quote,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One counted run under a rate: the snippet (a link to its page) and the GPU run that
/// confirmed it.
#[derive(Serialize)]
struct RunView {
    /// `failed` or `worked`.
    outcome: String,
    /// `<data file>:<line>`, as the basis names it.
    snippet: String,
    /// The page the snippet is on.
    href: Option<String>,
    /// GPU, CUDA version and date of the run record.
    gpu: String,
    cuda: String,
    date: String,
}

#[derive(Serialize)]
struct WorkaroundView<'v> {
    action: String,
    action_lang: &'static str,
    how: String,
    /// The measured share, only when the rate was counted: drawn as a meter.
    pct: Option<i64>,
    /// The rate as shown: "worked in 3 of 4 reports (…)" or "usually works (editor's
    /// estimate)"; never a bare percentage for an estimate.
    evidence: String,
    /// The counted reports behind it, when there are.
    reports: Vec<ReportView<'v>>,
    /// The counted runs behind it, when there are.
    runs: Vec<RunView>,
    condition: &'v str,
    sources: Vec<SourceLink<'v>>,
}

#[derive(Serialize)]
struct DeadEndView<'v> {
    action: String,
    why_fails: String,
    /// The measured share, only when the rate was counted: drawn as a meter.
    pct: Option<i64>,
    /// The rate as shown (as in [`WorkaroundView`], "fails" for "works").
    evidence: String,
    /// The counted reports behind it, when there are.
    reports: Vec<ReportView<'v>>,
    /// The counted runs behind it, when there are.
    runs: Vec<RunView>,
    /// `en` when the text is English on a zh page.
    lang: &'static str,
    condition: &'v str,
    sources: Vec<SourceLink<'v>>,
}

#[derive(Serialize)]
struct GraphGroup<'v> {
    label: &'v str,
    links: Vec<GraphLink<'v>>,
}

#[derive(Serialize)]
struct GraphLink<'v> {
    id: &'v str,
    title: &'v str,
    href: Option<String>,
}

#[derive(Serialize)]
struct TitledLink {
    title: String,
    href: String,
}

#[derive(Serialize)]
struct VersionView<'v> {
    version: &'v str,
    status: &'v str,
    introduced: &'v str,
    deprecated: &'v str,
    removed: &'v str,
    /// HTML: `code spans` rendered.
    behavior_change: String,
    /// `en` when the text is English on a zh page.
    behavior_change_lang: &'static str,
}

#[derive(Serialize)]
struct OsNote<'v> {
    os: &'v str,
    /// HTML: `code spans` rendered.
    note: String,
    /// `en` when the note is English on a zh page.
    lang: &'static str,
}

#[derive(Serialize)]
struct TagLink<'v> {
    name: &'v str,
    href: String,
}

#[derive(Serialize)]
struct BadgeView<'v> {
    kind: &'static str,
    text: String,
    title: &'v str,
}

/// What `entry.html` sees as `e`.
#[derive(Serialize)]
struct EntryView<'v> {
    id: &'v str,
    domain: &'v str,
    domain_url: String,
    category: &'v str,
    subcategory: &'v str,
    title: &'v str,
    show_original: bool,
    signature: &'v str,
    regex: &'v str,
    aliases: &'v [String],
    error_code: &'v str,
    error_code_num: String,
    error_code_desc: &'v str,
    doc_url: &'v str,
    doc_section: &'v str,
    root_cause: String,
    root_cause_lang: &'static str,
    root_cause_type: &'v str,
    dead_ends: Vec<DeadEndView<'v>>,
    workarounds: Vec<WorkaroundView<'v>>,
    graph: Vec<GraphGroup<'v>>,
    versions: Vec<VersionView<'v>>,
    os_notes: Vec<OsNote<'v>>,
    verify: String,
    articles: Vec<TitledLink>,
    first_seen: &'v str,
    last_confirmed: &'v str,
    last_updated: &'v str,
    verification_tier: &'v str,
    /// Stored by hand, with no basis: shown as words.
    confidence: String,
    /// Stored by hand, with no basis: shown as words.
    fix_success: String,
    resolvable: &'v str,
    /// Environments known to produce the error, in the page's language.
    affects: Vec<AffectView<'v>>,
    /// The entry's `operator_action`, in the page's language (an unknown value as is).
    operator_action: String,
    evidence_count: u64,
    tags: Vec<TagLink<'v>>,
    badge: BadgeView<'v>,
    translation_missing: bool,
    edit_url: Option<String>,
    api_href: String,
}

/// One `affects` item on an entry page.
#[derive(Serialize)]
struct AffectView<'v> {
    when: Vec<ConditionView<'v>>,
    /// HTML: escaped text with its `code spans` as `<code>`.
    note: String,
}

/// One fact and its condition (`torch_cuda none`).
#[derive(Serialize)]
struct ConditionView<'v> {
    fact: &'v str,
    condition: &'v str,
}

impl<'a> Ctx<'a> {
    fn t(&self, lang: Lang, key: &str, vars: &[(&str, &str)]) -> String {
        self.theme.text(lang.code(), key, vars)
    }

    /// The base context every template gets.
    pub(crate) fn base(
        &self,
        lang: Lang,
        page: &str,
        title: &str,
        description: &str,
    ) -> tera::Context {
        let frame = &Frame::new(lang, page);
        let mut ctx = tera::Context::new();
        ctx.insert("lang", frame.lang.code());
        ctx.insert("root", &frame.root);
        ctx.insert("lang_root", &frame.lang_root);
        ctx.insert("page_title", title);
        ctx.insert("description", &errata_model::truncate(description, 200));
        ctx.insert(
            "canonical",
            &urls::absolute(&self.opts.base_url, &frame.lang.file(page)),
        );
        let alternates: Vec<Alternate> = Lang::ALL
            .iter()
            .map(|l| Alternate {
                lang: l.code(),
                href: urls::absolute(&self.opts.base_url, &l.file(page)),
            })
            .chain(std::iter::once(Alternate {
                lang: "x-default",
                href: urls::absolute(&self.opts.base_url, page),
            }))
            .collect();
        ctx.insert("alternates", &alternates);
        let languages: Vec<LanguageLink<'_>> = Lang::ALL
            .iter()
            .map(|l| LanguageLink {
                code: l.code(),
                name: self.string(*l, "lang_name"),
                current: *l == frame.lang,
                href: format!("{}{}", frame.root, l.file(page)),
            })
            .collect();
        ctx.insert("languages", &languages);
        ctx.insert("json_ld", "");
        ctx
    }

    /// A UI string without placeholders, borrowed (the key itself when it is missing,
    /// as [`Theme::text`]).
    fn string<'s>(&'s self, lang: Lang, key: &'s str) -> &'s str {
        self.theme
            .strings(lang.code())
            .get(key)
            .map_or(key, String::as_str)
    }

    /// The runs a `runs` basis counts, each with the record that confirmed it and a link to
    /// the page its snippet is on (the article, or the entry whose reproducer it is).
    fn runs_of(&self, frame: &Frame, basis: Option<&errata_model::Basis>) -> Vec<RunView> {
        let Some(b) = basis.filter(|b| b.kind == "runs") else {
            return Vec::new();
        };
        b.items
            .iter()
            .filter_map(|it| {
                let (file, line) = it.run_snippet()?;
                let record = self.runs.confirming_run_at(file, line as u64)?;
                // `articles/<domain>/<slug>[.zh].md` or `signatures/<domain>/<slug>.json`.
                let page = if let Some(a) = file.strip_prefix("articles/") {
                    let id = a.strip_suffix(".md")?;
                    urls::article_page(id.strip_suffix(".zh").unwrap_or(id))
                } else {
                    urls::entry_page(file.strip_prefix("signatures/")?.strip_suffix(".json")?)
                };
                Some(RunView {
                    outcome: it.outcome.clone(),
                    href: Some(frame.href(&page)),
                    snippet: format!("{file}:{line}"),
                    gpu: record.gpu_name.clone().unwrap_or_else(|| "GPU".into()),
                    cuda: record.cuda_version.clone().unwrap_or_else(|| "?".into()),
                    date: record.date.clone(),
                })
            })
            .collect()
    }

    fn badge(&self, lang: Lang, verdict: &Verdict) -> SnippetBadge {
        markdown::badge(verdict, |key, vars| self.t(lang, key, vars))
    }

    /// Renders one entry page.
    pub fn entry_page(&self, id: &str, lang: Lang) -> Result<(String, String), Error> {
        let page = urls::entry_page(id);
        let frame = Frame::new(lang, &page);
        let Some((e, doc)) = self.catalog.entries.get(id) else {
            return Err(Error::new(
                crate::ErrorKind::Io,
                format!("unknown entry {id}"),
            ));
        };
        let zh = lang == Lang::Zh;
        let (domain, _) = e.domain_and_slug().unwrap_or((id, id));
        let has = |s: &str| !s.trim().is_empty();
        let title = if zh && has(&e.signature_zh) {
            e.signature_zh.as_str()
        } else {
            e.signature.as_str()
        };
        let root_cause_zh = zh && has(&e.root_cause_zh);
        let sources = |list: &'a [String]| list.iter().map(|s| SourceLink::of(s)).collect();
        let workarounds: Vec<WorkaroundView<'_>> = e
            .workarounds
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let zh_action = if zh {
                    e.workarounds_zh.get(i).filter(|s| has(s))
                } else {
                    None
                };
                // Outcome records add to the count shown (the entry is not rewritten).
                let (basis, rate) = self.outcomes.folded(
                    &e.id,
                    errata_outcomes::Item::Workaround(i),
                    w.basis.as_ref(),
                    w.success_rate,
                );
                WorkaroundView {
                    action: markdown::inline_code(
                        zh_action.map_or(w.action.as_str(), String::as_str),
                    ),
                    action_lang: if zh && zh_action.is_none() { "en" } else { "" },
                    // The zh text says what to do and how (a zh page shows no English
                    // prose beside it); in English the how is the detail, unless it only
                    // repeats the action.
                    how: if zh_action.is_some() || w.how.trim() == w.action.trim() {
                        String::new()
                    } else {
                        markdown::inline_code(&w.how)
                    },
                    pct: counted_pct(basis.as_ref(), rate),
                    evidence: errata_model::rate_shown(rate, basis.as_ref(), false, zh),
                    reports: reports(w.basis.as_ref()),
                    runs: self.runs_of(&frame, w.basis.as_ref()),
                    // As for a dead end, the Chinese text carries the condition too.
                    condition: if zh_action.is_some() {
                        ""
                    } else {
                        &w.condition
                    },
                    sources: sources(&w.sources),
                }
            })
            .collect();
        let dead_ends: Vec<DeadEndView<'_>> = e
            .dead_ends
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let (basis, rate) = self.outcomes.folded(
                    &e.id,
                    errata_outcomes::Item::DeadEnd(i),
                    d.basis.as_ref(),
                    d.fail_rate,
                );
                // On a zh page one Chinese string says what was tried and why it fails.
                let zh_text = if zh {
                    e.dead_ends_zh.get(i).filter(|s| has(s))
                } else {
                    None
                };
                DeadEndView {
                    action: markdown::inline_code(
                        zh_text.map_or(d.action.as_str(), String::as_str),
                    ),
                    why_fails: if zh_text.is_some() {
                        String::new()
                    } else {
                        markdown::inline_code(&d.why_fails)
                    },
                    pct: counted_pct(basis.as_ref(), rate),
                    evidence: errata_model::rate_shown(rate, basis.as_ref(), true, zh),
                    reports: reports(d.basis.as_ref()),
                    runs: self.runs_of(&frame, d.basis.as_ref()),
                    lang: if zh && zh_text.is_none() { "en" } else { "" },
                    // The Chinese text carries the condition too.
                    condition: if zh_text.is_some() { "" } else { &d.condition },
                    sources: sources(&d.sources),
                }
            })
            .collect();
        let graph: Vec<GraphGroup<'_>> = [
            ("leads_to", &e.transition_graph.leads_to),
            ("preceded_by", &e.transition_graph.preceded_by),
            (
                "confused_with",
                &e.transition_graph.frequently_confused_with,
            ),
        ]
        .into_iter()
        .filter(|(_, ids)| !ids.is_empty())
        .map(|(key, ids)| GraphGroup {
            label: self.string(lang, key),
            links: ids
                .iter()
                .map(|target| match self.catalog.entry(target) {
                    Some(t) => GraphLink {
                        id: target,
                        title: if zh && has(&t.signature_zh) {
                            &t.signature_zh
                        } else {
                            &t.signature
                        },
                        href: Some(frame.href(&urls::entry_page(target))),
                    },
                    None => GraphLink {
                        id: target,
                        title: target,
                        href: None,
                    },
                })
                .collect(),
        })
        .collect();
        let articles: Vec<TitledLink> = self
            .catalog
            .articles_of_entry
            .get(id)
            .into_iter()
            .flatten()
            .filter_map(|aid| self.catalog.articles.get(aid))
            .map(|a| TitledLink {
                title: self.article_title(a, lang),
                href: frame.href(&urls::article_page(a.id)),
            })
            .collect();
        let code = e.error_code.as_deref().filter(|c| has(c));
        let known = code.and_then(errata_model::cuda_errors::by_name);
        let doc_url = e.official_doc_url.as_deref().filter(|u| is_https(u));
        let rel_file = data_relative(&doc.path, self.data_root);
        let verdict = match &e.verify {
            Some(snippet) => self.runs.verdict(&rel_file, &snippet.code),
            None => Verdict::Unverified,
        };
        let badge = self.badge(lang, &verdict);
        let badge_title = if matches!(verdict, Verdict::Unverified) {
            self.string(lang, "badge_unverified_title")
        } else {
            ""
        };
        let verify_html = e.verify.as_ref().map(|s| {
            let info = format!("{} {}", s.lang, s.annotations);
            let fence = "`".repeat(longest_backtick_run(&s.code).max(2) + 1);
            let md = format!(
                "{fence}{info}\n{}\n{fence}\n",
                s.code.trim_end_matches('\n')
            );
            markdown::render_body(&md, &[], false, |code| {
                Some(self.badge(lang, &self.runs.verdict(&rel_file, code)))
            })
        });
        let translation_missing = zh
            && (!has(&e.signature_zh)
                || !has(&e.root_cause_zh)
                || e.workarounds_zh.len() < e.workarounds.len());
        let edit_url = self
            .opts
            .edit_url_prefix
            .as_ref()
            .map(|p| format!("{p}{rel_file}"));
        let opt = |o: &'a Option<String>| o.as_deref().unwrap_or("");
        let view = EntryView {
            id,
            domain,
            domain_url: frame.href(&urls::domain_page(domain)),
            category: &e.category,
            subcategory: opt(&e.subcategory),
            title,
            show_original: title != e.signature,
            signature: &e.signature,
            regex: &e.regex,
            aliases: &e.aliases,
            error_code: code.unwrap_or(""),
            error_code_num: known.map(|k| k.code.to_string()).unwrap_or_default(),
            error_code_desc: known.map(|k| k.description).unwrap_or(""),
            doc_url: doc_url.unwrap_or(""),
            doc_section: opt(&e.official_doc_section),
            root_cause: markdown::inline_code(if root_cause_zh {
                &e.root_cause_zh
            } else {
                &e.root_cause
            }),
            root_cause_lang: if zh && !root_cause_zh { "en" } else { "" },
            root_cause_type: &e.root_cause_type,
            dead_ends,
            workarounds,
            graph,
            versions: e
                .versions
                .iter()
                .map(|v| {
                    let zh_change = opt(&v.behavior_change_zh);
                    let (behavior_change, behavior_change_lang) = if zh && has(zh_change) {
                        (zh_change, "")
                    } else {
                        let english = opt(&v.behavior_change);
                        (english, if zh && has(english) { "en" } else { "" })
                    };
                    VersionView {
                        version: &v.version,
                        status: &v.status,
                        introduced: opt(&v.introduced),
                        deprecated: opt(&v.deprecated),
                        removed: opt(&v.removed),
                        behavior_change: markdown::inline_code(behavior_change),
                        behavior_change_lang,
                    }
                })
                .collect(),
            os_notes: e
                .os_specific
                .iter()
                .map(
                    |(os, note)| match e.os_specific_zh.get(os).filter(|z| zh && has(z)) {
                        Some(zh_note) => OsNote {
                            os,
                            note: markdown::inline_code(zh_note),
                            lang: "",
                        },
                        None => OsNote {
                            os,
                            note: markdown::inline_code(note),
                            lang: if zh { "en" } else { "" },
                        },
                    },
                )
                .collect(),
            verify: verify_html.unwrap_or_default(),
            articles,
            first_seen: &e.first_seen,
            last_confirmed: &e.last_confirmed,
            last_updated: &e.last_updated,
            verification_tier: &e.verification_tier,
            confidence: estimate_in_words(e.confidence, zh),
            fix_success: estimate_in_words(e.fix_success_rate, zh),
            resolvable: &e.resolvable,
            affects: e
                .affects
                .iter()
                .map(|a| AffectView {
                    when: a
                        .when
                        .iter()
                        .map(|(fact, condition)| ConditionView { fact, condition })
                        .collect(),
                    note: markdown::inline_code(if zh && !a.note_zh.is_empty() {
                        &a.note_zh
                    } else {
                        &a.note
                    }),
                })
                .collect(),
            operator_action: {
                let key = format!("action_{}", e.operator_action.replace('-', "_"));
                let text = self.t(lang, &key, &[]);
                if text == key {
                    e.operator_action.clone()
                } else {
                    text
                }
            },
            evidence_count: e.evidence_count,
            tags: e
                .tags
                .iter()
                .map(|t| TagLink {
                    name: t,
                    href: frame.href(&urls::tag_page(t)),
                })
                .collect(),
            badge: BadgeView {
                kind: badge.kind,
                text: badge.text,
                title: badge_title,
            },
            translation_missing,
            edit_url,
            api_href: format!("{}api/v1/{id}.json", frame.root),
        };
        let description = if root_cause_zh {
            &e.root_cause_zh
        } else {
            &e.root_cause
        };
        let mut ctx = self.base(lang, &page, title, description);
        ctx.insert("e", &view);
        ctx.insert(
            "json_ld",
            &json_ld(&self.entry_json_ld(e, lang, title, description)),
        );
        Ok((
            frame.file.clone(),
            self.theme.render(lang.code(), "entry.html", &ctx)?,
        ))
    }

    fn entry_json_ld(
        &self,
        e: &errata_model::Entry,
        lang: Lang,
        title: &str,
        cause: &str,
    ) -> Value {
        let mut answer = cause.to_string();
        for (i, w) in e.workarounds.iter().enumerate() {
            let text = if lang == Lang::Zh {
                e.workarounds_zh.get(i).unwrap_or(&w.action)
            } else {
                &w.action
            };
            answer.push_str("\n- ");
            answer.push_str(text);
        }
        json!({
            "@context": "https://schema.org",
            "@type": "FAQPage",
            "inLanguage": lang.code(),
            "dateModified": e.last_updated,
            "mainEntity": [{
                "@type": "Question",
                "name": title,
                "acceptedAnswer": {"@type": "Answer", "text": answer},
            }],
        })
    }

    /// The title in `lang`: on the Chinese site the translation's title wherever a
    /// translation exists (an outdated one is still Chinese), else the English one.
    pub(crate) fn article_title(&self, a: &ArticlePair<'_>, lang: Lang) -> String {
        if lang == Lang::Zh
            && let Some(t) =
                a.zh.and_then(|z| z.front.as_ref())
                    .map(|f| f.title.trim())
                    .filter(|t| !t.is_empty())
        {
            return t.to_string();
        }
        a.title().to_string()
    }

    /// Renders one article page.
    pub fn article_page(&self, id: &str, lang: Lang) -> Result<(String, String), Error> {
        let page = urls::article_page(id);
        let frame = Frame::new(lang, &page);
        let Some(pair) = self.catalog.articles.get(id) else {
            return Err(Error::new(
                crate::ErrorKind::Io,
                format!("unknown article {id}"),
            ));
        };
        let state = pair.translation();
        // A Chinese page shows no English prose: an outdated translation is still shown
        // (with a notice and the English page a click away); an article with no
        // translation gets a Chinese page that says so and links to the English text.
        let (doc, notice) = match (lang, state) {
            (Lang::Zh, Translation::Current) => (pair.zh.unwrap_or(pair.en), String::new()),
            (Lang::Zh, Translation::Outdated) => (
                pair.zh.unwrap_or(pair.en),
                self.t(lang, "translation_outdated_notice", &[]),
            ),
            (Lang::Zh, Translation::Missing) => {
                (pair.en, self.t(lang, "not_translated_notice", &[]))
            }
            (Lang::En, _) => (pair.en, String::new()),
        };
        let untranslated = lang == Lang::Zh && state == Translation::Missing;
        let title = self.article_title(pair, lang);
        let text = self.source_text(doc);
        let body_md = text.get(doc.body_range.clone()).unwrap_or("");
        let anchors: Vec<String> = doc.headings.iter().map(|h| h.anchor.clone()).collect();
        let rel_file = data_relative(&doc.path, self.data_root);
        // The title is the page's one h1; a body that opens by repeating it as an h1
        // loses that heading (and it stays out of the table of contents).
        let doc_title = doc.front.as_ref().map_or("", |f| f.title.trim());
        let skip_first = doc.headings.first().is_some_and(|h| {
            h.level == 1
                && (h.text.trim().eq_ignore_ascii_case(doc_title)
                    || h.text.trim().eq_ignore_ascii_case(&title))
        });
        let body = if untranslated {
            String::new()
        } else {
            markdown::render_body(body_md, &anchors, skip_first, |code| {
                Some(self.badge(lang, &self.runs.verdict(&rel_file, code)))
            })
        };
        let toc: Vec<Value> = doc
            .headings
            .iter()
            .filter(|_| !untranslated)
            .skip(usize::from(skip_first))
            .filter(|h| h.level <= 4)
            .map(|h| json!({"level": h.level.max(2), "text": h.text, "anchor": h.anchor}))
            .collect();
        let front = pair.en.front.clone().unwrap_or_default();
        let entries: Vec<Value> = front
            .signatures
            .iter()
            .map(|sid| match self.catalog.entry(sid) {
                Some(e) => json!({
                    "title": if lang == Lang::Zh && !e.signature_zh.trim().is_empty() { &e.signature_zh } else { &e.signature },
                    "href": frame.href(&urls::entry_page(sid)),
                }),
                None => json!({"title": sid, "href": null}),
            })
            .collect();
        let (domain, _) = id.split_once('/').unwrap_or((id, id));
        let view = json!({
            "id": id,
            "title": title,
            "title_lang": if untranslated { "en" } else { "" },
            "date": front.date,
            "domain": domain,
            "domain_url": frame.href(&urls::domain_page(domain)),
            "tags": front.tags.iter().map(|t| json!({"name": t, "href": frame.href(&urls::tag_page(t))})).collect::<Vec<_>>(),
            "notice": notice,
            "entries": entries,
            "toc": toc,
            "body": body,
            // The English page, where the Chinese one is missing or behind it.
            "english_href": if lang == Lang::Zh && state != Translation::Current {
                Some(format!("{}{}{page}", frame.root, Lang::En.prefix()))
            } else {
                None
            },
        });
        let summary = first_paragraph(body_md);
        let mut ctx = self.base(lang, &page, &title, &summary);
        ctx.insert("a", &view);
        ctx.insert(
            "json_ld",
            &json_ld(&json!({
                "@context": "https://schema.org",
                "@type": "TechArticle",
                "headline": title,
                "inLanguage": lang.code(),
                "datePublished": front.date,
                "keywords": front.tags.join(", "),
                "description": errata_model::truncate(&summary, 300),
            })),
        );
        Ok((
            frame.file.clone(),
            self.theme.render(lang.code(), "article.html", &ctx)?,
        ))
    }

    pub(crate) fn source_text(&self, doc: &errata_load::ArticleDoc) -> &str {
        self.texts.text(&doc.path).unwrap_or("")
    }
}

/// Escapes JSON for a `<script type="application/ld+json">` element: `<`, `>` and `&`
/// as `\u00XX`, so no data can close the element or open a comment.
pub(crate) fn json_ld(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_else(|_| "{}".into());
    text.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// `path` relative to the data directory, `/`-separated (how run records name files).
pub(crate) fn data_relative(path: &std::path::Path, root: &std::path::Path) -> String {
    errata_load::data_relative(path, root).unwrap_or_else(|| {
        path.iter()
            .map(|p| p.to_string_lossy())
            .collect::<Vec<_>>()
            .join("/")
    })
}

/// The first paragraph of Markdown as plain text (for descriptions and feeds).
pub(crate) fn first_paragraph(markdown: &str) -> String {
    use pulldown_cmark::{Event, Parser, Tag, TagEnd};
    let mut out = String::new();
    let mut inside = false;
    for event in Parser::new_ext(markdown, errata_load::markdown::options()) {
        match event {
            Event::Start(Tag::Paragraph) => inside = true,
            Event::End(TagEnd::Paragraph) if !out.trim().is_empty() => break,
            Event::End(TagEnd::Paragraph) => inside = false,
            Event::Text(t) | Event::Code(t) if inside => out.push_str(&t),
            Event::SoftBreak | Event::HardBreak if inside => out.push(' '),
            _ => {}
        }
    }
    errata_model::truncate(&out, 300)
}

fn longest_backtick_run(text: &str) -> usize {
    let mut best = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            best = best.max(run);
        } else {
            run = 0;
        }
    }
    best
}

/// A counted rate as a whole percentage for the meter; `None` for an estimate, which
/// gets words instead (a meter would make it look measured).
fn counted_pct(basis: Option<&errata_model::Basis>, rate: f64) -> Option<i64> {
    basis
        .and_then(errata_model::Basis::counted)
        .map(|_| (rate.clamp(0.0, 1.0) * 100.0).round() as i64)
}

/// `confidence` and `fix_success_rate` rest on nothing counted: a level in words,
/// marked as an estimate.
fn estimate_in_words(rate: f64, zh: bool) -> String {
    const LEVELS: [(&str, &str); 4] = [
        ("low", "低"),
        ("moderate", "中等"),
        ("fairly high", "较高"),
        ("high", "高"),
    ];
    let (en, cn) = LEVELS[errata_model::estimate_band(rate)];
    if zh {
        format!("{cn}（编者估计）")
    } else {
        format!("{en} (editor's estimate)")
    }
}
