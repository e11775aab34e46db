//! `errata._errata`: the Python face of `errata-consumer` (matching, entries) and
//! `errata-search` (full-text search). A thin layer: it converts, it decides nothing.
//! The pure-Python half (`python/errata/`) finds the bundle shipped in the wheel and
//! installs the exception hook.

use std::io::Read;

use errata_consumer::{DATABASE, Found, Lang};
use errata_search::SearchIndex;
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

pyo3::create_exception!(
    _errata,
    BundleError,
    pyo3::exceptions::PyException,
    "A bundle that cannot be read or does not verify."
);

/// The Python exception for a file that cannot be opened: `FileNotFoundError`,
/// `PermissionError`, else `OSError`, naming the path.
fn io_error(path: &std::path::Path, e: &std::io::Error) -> PyErr {
    let text = format!("{}: {e}", path.display());
    match e.kind() {
        std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(text),
        std::io::ErrorKind::PermissionDenied => PyPermissionError::new_err(text),
        _ => PyOSError::new_err(text),
    }
}

/// The methods every result class shares: `to_dict()` (plain Python values), pickling
/// through its JSON (multiprocessing, Spark), and a short `repr` made by `$repr` from
/// the value `$s`. Equality comes from `#[pyclass(eq)]`.
macro_rules! value_class {
    ($ty:ident, |$s:ident| $repr:expr) => {
        value_class!($ty, |$s| $repr, {});
    };
    ($ty:ident, |$s:ident| $repr:expr, { $($more:item)* }) => {
        #[pymethods]
        impl $ty {
            $($more)*

            /// Every field as plain Python values (dicts, lists, str, int, float, None).
            fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
                to_python(py, self)
            }

            /// Pickling: rebuilt from its JSON.
            fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<(Bound<'py, PyAny>, (String,))> {
                let json = serde_json::to_string(slf.get())
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                Ok((slf.get_type().getattr("_from_json")?, (json,)))
            }

            #[staticmethod]
            fn _from_json(json: &str) -> PyResult<Self> {
                serde_json::from_str(json).map_err(|e| PyValueError::new_err(e.to_string()))
            }

            fn __repr__(&self) -> String {
                let $s = self;
                $repr
            }
        }
    };
}

/// `value` as plain Python values, through its JSON (the fields are the data's own).
fn to_python<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let json = serde_json::to_string(value).map_err(|e| PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (json,))
}

fn lang_of(code: &str) -> PyResult<Lang> {
    Lang::parse(code)
        .ok_or_else(|| PyValueError::new_err(format!("lang must be 'en' or 'zh', not {code:?}")))
}

/// Something people try that does not fix the error.
#[pyclass(frozen, get_all, eq, module = "errata")]
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DeadEnd {
    /// What people try.
    action: String,
    /// Why it does not help.
    why_fails: String,
    /// How often it fails, 0 to 1, when it was counted (`basis` is `reports`, `runs` or
    /// `outcomes`); `None` for an editor's estimate, which `evidence` puts in words.
    fail_rate: Option<f64>,
    /// `reports`, `runs`, `outcomes` or `estimate`.
    basis: String,
    /// The rate as shown: "failed in 3 of 4 reports (…)" or "usually fails (editor's estimate)".
    evidence: String,
    /// When it applies (empty: always; in Chinese, the action text says it).
    condition: String,
    /// Where the claim comes from.
    sources: Vec<String>,
}

value_class!(DeadEnd, |s| format!(
    "DeadEnd(action={:?}, evidence={:?})",
    s.action, s.evidence
));

/// Something that fixes the error.
#[pyclass(frozen, get_all, eq, module = "errata")]
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Workaround {
    /// What to do.
    action: String,
    /// How to do it.
    how: String,
    /// How often it works, 0 to 1, when it was counted (`basis` is `reports`, `runs` or
    /// `outcomes`); `None` for an editor's estimate, which `evidence` puts in words.
    success_rate: Option<f64>,
    /// `reports`, `runs`, `outcomes` or `estimate`.
    basis: String,
    /// The rate as shown: "worked in 3 of 4 reports (…)" or "usually works (editor's estimate)".
    evidence: String,
    /// When it applies (empty: always; in Chinese, the action text says it).
    condition: String,
    /// Where the claim comes from.
    sources: Vec<String>,
}

value_class!(Workaround, |s| format!(
    "Workaround(action={:?}, evidence={:?})",
    s.action, s.evidence
));

/// A known error found in a line of text.
#[pyclass(frozen, eq, module = "errata")]
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Match {
    /// The entry's id, `<domain>/<slug>`.
    #[pyo3(get)]
    id: String,
    /// 1-based line number in the text.
    #[pyo3(get)]
    line: u64,
    /// 1-based byte column of the match in its line.
    #[pyo3(get)]
    column: usize,
    /// The text that matched.
    #[pyo3(get)]
    text: String,
    /// What the entry says, the same for all its matches in one language: shared, not
    /// copied, by the matches of a scan (a log repeating one error made thousands).
    #[serde(flatten)]
    about: std::sync::Arc<About>,
}

/// The part of a [`Match`] that depends only on the entry and the language.
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
struct About {
    signature: String,
    root_cause: String,
    dead_ends: Vec<DeadEnd>,
    workarounds: Vec<Workaround>,
    sources: Vec<String>,
    verification: String,
}

value_class!(
    Match,
    |s| format!("Match(id={:?}, line={}, column={})", s.id, s.line, s.column),
    {
        /// The error's signature, in the language asked for.
        #[getter]
        fn signature(&self) -> String {
            self.about.signature.clone()
        }
        /// Why it happens.
        #[getter]
        fn root_cause(&self) -> String {
            self.about.root_cause.clone()
        }
        /// What not to try, most often failing first.
        #[getter]
        fn dead_ends(&self) -> Vec<DeadEnd> {
            self.about.dead_ends.clone()
        }
        /// What to try, most often working first.
        #[getter]
        fn workarounds(&self) -> Vec<Workaround> {
            self.about.workarounds.clone()
        }
        /// Every source the entry cites, in order, once.
        #[getter]
        fn sources(&self) -> Vec<String> {
            self.about.sources.clone()
        }
        /// How the entry was verified (`ai_generated`, `community`, `human_reviewed`,
        /// `reproduced`, `official`).
        #[getter]
        fn verification(&self) -> String {
            self.about.verification.clone()
        }
    }
);

/// Builds the `Match`es of a `match()` or `scan()`: each entry's advice is converted once
/// and shared by its later matches (a log repeating one error converted the same advice
/// at every line; at 20,000 matches that cost a third of `scan()`'s time).
struct Matches {
    lang: Lang,
    first: std::collections::HashMap<String, Match>,
    out: Vec<Match>,
}

impl Matches {
    fn new(lang: Lang) -> Matches {
        Matches {
            lang,
            first: std::collections::HashMap::new(),
            out: Vec::new(),
        }
    }

    fn push(&mut self, found: &Found<'_>) {
        let lang = self.lang;
        let template = self
            .first
            .entry(found.entry.id.clone())
            .or_insert_with(|| Match::of(found, lang));
        let mut m = template.clone();
        m.line = found.line;
        m.column = found.column;
        m.text.clone_from(&found.text);
        self.out.push(m);
    }
}

impl Match {
    fn of(found: &Found<'_>, lang: Lang) -> Match {
        let entry = found.entry;
        let advice = entry.advice(lang);
        let mut sources: Vec<String> = Vec::new();
        for step in advice.dead_ends.iter().chain(&advice.workarounds) {
            for s in step.sources {
                if !sources.contains(s) {
                    sources.push(s.clone());
                }
            }
        }
        Match {
            id: entry.id.clone(),
            line: found.line,
            column: found.column,
            text: found.text.clone(),
            about: std::sync::Arc::new(About {
                signature: entry.signature(lang).to_string(),
                root_cause: advice.root_cause.to_string(),
                dead_ends: advice
                    .dead_ends
                    .iter()
                    .map(|s| DeadEnd {
                        action: s.action.to_string(),
                        why_fails: s.detail.to_string(),
                        fail_rate: s.is_counted().then_some(s.rate),
                        basis: s.basis_kind().to_string(),
                        evidence: s.evidence.clone(),
                        condition: s.condition.to_string(),
                        sources: s.sources.to_vec(),
                    })
                    .collect(),
                workarounds: advice
                    .workarounds
                    .iter()
                    .map(|s| Workaround {
                        action: s.action.to_string(),
                        how: s.detail.to_string(),
                        success_rate: s.is_counted().then_some(s.rate),
                        basis: s.basis_kind().to_string(),
                        evidence: s.evidence.clone(),
                        condition: s.condition.to_string(),
                        sources: s.sources.to_vec(),
                    })
                    .collect(),
                sources,
                verification: entry.verification_tier.clone(),
            }),
        }
    }
}

/// One knowledge-base entry.
#[pyclass(frozen, get_all, eq, module = "errata")]
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// `<domain>/<slug>`.
    id: String,
    /// The error message, in English.
    signature: String,
    /// The error message, in Chinese.
    signature_zh: String,
    /// The whole entry as JSON text (every field of the entry schema).
    json: String,
}

value_class!(Entry, |s| format!("Entry(id={:?})", s.id));

/// A search result: an entry or an article.
#[pyclass(frozen, get_all, eq, module = "errata")]
#[derive(Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hit {
    /// `"entry"` or `"article"`.
    kind: String,
    /// `<domain>/<slug>`.
    id: String,
    /// The entry's signature or the article's title.
    title: String,
    /// An article's member in the bundle (`articles/cuda/x.md`); `None` for entries.
    path: Option<String>,
    /// 0–1, higher better: 1 for the entry that recognises the query itself.
    score: f64,
}

value_class!(Hit, |s| format!("Hit(kind={:?}, id={:?})", s.kind, s.id));

/// A verified errata data bundle: the knowledge base, its matcher and its search index.
#[pyclass(frozen, module = "errata")]
pub struct Bundle {
    inner: errata_consumer::Bundle,
    search: SearchIndex,
}

/// A Python binary file object as a Rust reader (`read(n)` returning bytes).
struct PyReader<'py> {
    file: Bound<'py, PyAny>,
}

impl Read for PyReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let chunk = self
            .file
            .call_method1("read", (buf.len(),))
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        let bytes = if let Ok(b) = chunk.cast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else if let Ok(s) = chunk.extract::<String>() {
            // A text file: its characters as UTF-8 (a chunk of at most n characters).
            s.into_bytes()
        } else {
            return Err(std::io::Error::other(
                "read() returned neither bytes nor str",
            ));
        };
        if bytes.len() > buf.len() {
            return Err(std::io::Error::other(
                "read(n) returned more than n bytes (open the file in binary mode)",
            ));
        }
        buf[..bytes.len()].copy_from_slice(&bytes);
        Ok(bytes.len())
    }
}

impl Bundle {
    fn load(bytes: &[u8]) -> PyResult<Bundle> {
        let inner = errata_consumer::Bundle::from_reader_keeping(bytes, &[DATABASE])
            .map_err(|e| BundleError::new_err(e.to_string()))?;
        let database = inner
            .member(DATABASE)
            .ok_or_else(|| BundleError::new_err("the bundle has no database"))?;
        let search =
            SearchIndex::from_bytes(database).map_err(|e| BundleError::new_err(e.to_string()))?;
        Ok(Bundle { inner, search })
    }
}

#[pymethods]
impl Bundle {
    /// Opens and verifies the bundle file at `path` (`errata-<version>.tar.gz`).
    #[staticmethod]
    fn open(py: Python<'_>, path: std::path::PathBuf) -> PyResult<Bundle> {
        let bytes = std::fs::read(&path).map_err(|e| io_error(&path, &e))?;
        py.detach(|| Bundle::load(&bytes))
    }

    /// Opens and verifies a bundle held in memory.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8]) -> PyResult<Bundle> {
        let data = data.to_vec();
        py.detach(|| Bundle::load(&data))
    }

    /// The bundle's data version (semver).
    #[getter]
    fn version(&self) -> String {
        self.inner.manifest().version.to_string()
    }

    /// The knowledge base's licence (an SPDX expression such as `CC-BY-4.0`), or `None`
    /// when the bundle does not state one.
    #[getter]
    fn license(&self) -> Option<String> {
        self.inner.manifest().license.clone()
    }

    /// How many entries it holds.
    fn __len__(&self) -> usize {
        self.inner.entries().len()
    }

    /// The known errors in `text`, by line, most specific first within a line.
    #[pyo3(signature = (text, lang = "en"))]
    fn r#match(&self, py: Python<'_>, text: &str, lang: &str) -> PyResult<Vec<Match>> {
        let mut out = Matches::new(lang_of(lang)?);
        py.detach(|| self.inner.match_text(text).iter().for_each(|f| out.push(f)));
        Ok(out.out)
    }

    /// The known errors in a log file of any size, streamed: `source` is a path (a
    /// regular file is mapped, not copied) or a binary file object.
    #[pyo3(signature = (source, lang = "en"))]
    fn scan(&self, py: Python<'_>, source: &Bound<'_, PyAny>, lang: &str) -> PyResult<Vec<Match>> {
        let mut out = Matches::new(lang_of(lang)?);
        if source.hasattr("read")? {
            let reader = PyReader {
                file: source.clone(),
            };
            self.inner
                .scan(reader, |f| out.push(&f))
                .map_err(|e| PyOSError::new_err(e.to_string()))?;
            return Ok(out.out);
        }
        let path: std::path::PathBuf = source.extract()?;
        let file = std::fs::File::open(&path).map_err(|e| io_error(&path, &e))?;
        // Mapped when it is a regular file, as `errata match` maps it.
        py.detach(|| {
            self.inner
                .index()
                .scan_file(
                    &file,
                    errata_consumer::Index::default_threads(),
                    |_| {},
                    |f| out.push(&f),
                )
                .map_err(|e| format!("{}: {e}", path.display()))
        })
        .map_err(PyOSError::new_err)?;
        Ok(out.out)
    }

    /// Records what happened when you tried one of an entry's dead ends or workarounds
    /// (`item`: `dead_end:<i>` or `workaround:<i>`, 0-based; `outcome`: `worked` or
    /// `failed`): validated against the entry, then appended to
    /// `<directory>/<domain>/<slug>.jsonl`, a file to submit in a pull request. Returns
    /// its path; raises ValueError naming every problem (nothing is written then).
    #[pyo3(signature = (entry, item, outcome, reporter, directory = "errata-outcomes", gpu = None, driver = None, cuda = None, torch = None, source = None, date = None))]
    #[allow(clippy::too_many_arguments)]
    fn report_outcome(
        &self,
        entry: &str,
        item: &str,
        outcome: &str,
        reporter: &str,
        directory: &str,
        gpu: Option<String>,
        driver: Option<String>,
        cuda: Option<String>,
        torch: Option<String>,
        source: Option<String>,
        date: Option<String>,
    ) -> PyResult<String> {
        let found = self
            .inner
            .entry(entry)
            .ok_or_else(|| PyValueError::new_err(format!("no entry has the id {entry:?}")))?;
        let shape = errata_outcomes::Shape {
            dead_ends: found.dead_ends().len(),
            workarounds: found.workarounds().len(),
        };
        let env = errata_outcomes::Env {
            gpu,
            driver,
            cuda,
            torch,
        };
        let today = errata_model::date::Date::today();
        let record = errata_outcomes::OutcomeRecord {
            entry: found.id.clone(),
            item: item.to_string(),
            outcome: outcome.to_string(),
            date: date.unwrap_or_else(|| today.to_string()),
            env: (env != errata_outcomes::Env::default()).then_some(env),
            source,
            reporter: reporter.to_string(),
        };
        errata_outcomes::record(std::path::Path::new(directory), &record, Some(shape), today)
            .map(|p| p.display().to_string())
            .map_err(PyValueError::new_err)
    }

    /// Every family's meaning of a bare number (`700`, `0x2bc`) or an enumerator name
    /// (cudaError_t, CUresult, cuBLAS, cuDNN, NCCL, cuFFT, cuSOLVER, cuSPARSE, cuRAND,
    /// NVML, Xid), each a dict `{family, name, number, description, entry}`; `family`
    /// narrows to one. Raises ValueError for input that is neither.
    #[pyo3(signature = (value, family = None))]
    fn decode<'py>(
        &self,
        py: Python<'py>,
        value: &str,
        family: Option<&str>,
    ) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let decoded = errata_decode::decode(value, family, self.inner.entries())
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        decoded
            .meanings
            .into_iter()
            .map(|m| {
                let d = PyDict::new(py);
                d.set_item("family", m.family)?;
                d.set_item("name", m.name)?;
                d.set_item("number", m.number)?;
                d.set_item("description", m.description)?;
                d.set_item("entry", m.entry)?;
                Ok(d)
            })
            .collect()
    }

    /// The known errors of several logs of one failure grouped into incidents, each a
    /// dict `{incident, first_cause: {id, file, line}, operator_action, ordered_by,
    /// members: [{file, line, id, time, host, rank, pci}]}`, in the order they began.
    /// `logs` maps each log's name to its text.
    #[pyo3(signature = (logs, window_minutes = 30.0))]
    fn incidents<'py>(
        &self,
        py: Python<'py>,
        logs: Vec<(String, String)>,
        window_minutes: f64,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        if !(window_minutes.is_finite() && window_minutes >= 0.0) {
            return Err(PyValueError::new_err(format!(
                "window_minutes must be a number >= 0, not {window_minutes}"
            )));
        }
        let views: Vec<errata_incidents::Log<'_>> = logs
            .iter()
            .map(|(name, text)| errata_incidents::Log { name, text })
            .collect();
        let options = errata_incidents::Options {
            window_secs: window_minutes * 60.0,
        };
        let found = py.detach(|| errata_incidents::find(self.inner.index(), &views, &options));
        found.iter().map(|i| json_to_py(py, &i.to_json())).collect()
    }

    /// The known-bad environment `report` describes (collect_env, nvidia-smi, nvcc, pip
    /// output, any mix): a dict `{facts, findings: [{id, because, severity, note,
    /// fix}]}`.
    #[pyo3(signature = (report, lang = "en"))]
    fn audit<'py>(&self, py: Python<'py>, report: &str, lang: &str) -> PyResult<Bound<'py, PyAny>> {
        let zh = match lang {
            "en" => false,
            "zh" => true,
            other => {
                return Err(PyValueError::new_err(format!(
                    "lang must be \"en\" or \"zh\", not {other:?}"
                )));
            }
        };
        let result = errata_audit::audit(report, self.inner.index(), zh);
        let value =
            serde_json::to_value(&result).map_err(|e| PyValueError::new_err(e.to_string()))?;
        json_to_py(py, &value)
    }

    /// The entry with this id, or `None`.
    fn entry(&self, id: &str) -> Option<Entry> {
        self.inner.entry(id).map(|e| Entry {
            id: e.id.clone(),
            signature: e.signature.clone(),
            signature_zh: e.signature_zh.clone(),
            json: e.raw_json().to_string(),
        })
    }

    /// Entries and articles containing every word of `query`, best first.
    #[pyo3(signature = (query, lang = "en", limit = 10))]
    fn search(&self, py: Python<'_>, query: &str, lang: &str, limit: usize) -> PyResult<Vec<Hit>> {
        let lang = lang_of(lang)?;
        let hits = py
            .detach(|| self.search.search(self.inner.index(), query, lang, limit))
            .map_err(|e| BundleError::new_err(e.to_string()))?;
        Ok(hits
            .into_iter()
            .map(|h| Hit {
                kind: match h.kind {
                    errata_search::Kind::Entry => "entry".into(),
                    errata_search::Kind::Article => "article".into(),
                },
                id: h.id,
                title: h.title,
                path: h.path,
                score: h.score,
            })
            .collect())
    }

    fn __repr__(&self) -> String {
        format!(
            "Bundle(version={:?}, entries={})",
            self.inner.manifest().version.to_string(),
            self.inner.entries().len()
        )
    }
}

#[pymodule]
fn _errata(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Bundle>()?;
    m.add_class::<Match>()?;
    m.add_class::<Entry>()?;
    m.add_class::<DeadEnd>()?;
    m.add_class::<Workaround>()?;
    m.add_class::<Hit>()?;
    m.add("BundleError", m.py().get_type::<BundleError>())?;
    Ok(())
}

/// A JSON value as the Python value `json.loads` makes of it.
fn json_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?
        .call_method1("loads", (value.to_string(),))
}
