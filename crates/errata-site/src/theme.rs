//! Templates, static assets and UI strings: embedded defaults, overridable from a
//! directory laid out like the repository's `site/` (as mdBook's theme directory).
//!
//! The defaults are the files in the repository's `site/`, compiled in with
//! `include_str!`, so an installed `errata` builds a site with no files beside it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};

/// One overridable file: its path under `site/` and the embedded default.
struct Asset {
    rel: &'static str,
    default: &'static str,
}

macro_rules! asset {
    ($rel:literal) => {
        Asset {
            rel: $rel,
            default: include_str!(concat!("../../../site/", $rel)),
        }
    };
}

const TEMPLATES: &[Asset] = &[
    asset!("templates/base.html"),
    asset!("templates/entry.html"),
    asset!("templates/article.html"),
    asset!("templates/home.html"),
    asset!("templates/list.html"),
    asset!("templates/translations.html"),
    asset!("templates/search.html"),
    asset!("templates/404.html"),
    asset!("templates/feed.xml"),
    asset!("templates/sitemap.xml"),
];

const STATIC: &[Asset] = &[
    asset!("static/style.css"),
    asset!("static/errata.js"),
    asset!("static/search.js"),
    asset!("static/favicon.svg"),
];

const STRINGS: &[(&str, Asset)] = &[
    ("en", asset!("i18n/en.toml")),
    ("zh", asset!("i18n/zh.toml")),
];

/// The loaded theme: a ready Tera instance per language (its UI strings are that
/// instance's global `t`, converted once rather than once per page), static files, and
/// the UI strings themselves.
pub(crate) struct Theme {
    /// language code → Tera with `t` set.
    teras: BTreeMap<String, tera::Tera>,
    /// `static/<name>` → content.
    pub statics: Vec<(&'static str, String)>,
    /// language → key → text (English fills any key a language lacks).
    pub strings: BTreeMap<String, BTreeMap<String, String>>,
    /// Templates whose text differs from the embedded default.
    overridden: Vec<&'static str>,
}

impl Theme {
    /// Loads the theme, taking each file from `dir` when it exists there.
    pub fn load(dir: Option<&Path>) -> Result<Theme, Error> {
        let read = |asset: &Asset| -> Result<(String, PathBuf), Error> {
            if let Some(dir) = dir {
                let path = dir.join(asset.rel);
                match std::fs::read_to_string(&path) {
                    Ok(text) => return Ok((text, path)),
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io(path, e)),
                }
            }
            Ok((
                asset.default.to_string(),
                PathBuf::from("<embedded>").join(asset.rel),
            ))
        };

        let mut tera = tera::Tera::new();
        // Everything rendered into .html and .xml is escaped unless marked `safe`.
        tera.autoescape_on([".html", ".xml"]);
        let mut sources = Vec::new();
        let mut overridden = Vec::new();
        for asset in TEMPLATES {
            let (text, path) = read(asset)?;
            let name = asset.rel.trim_start_matches("templates/");
            if text != asset.default {
                overridden.push(name);
            }
            sources.push((name, text, path));
        }
        tera.add_raw_templates(sources.iter().map(|(name, text, _)| (*name, text.as_str())))
            .map_err(|e| Error::new(ErrorKind::Template, tera_message(&e)))?;

        let mut statics = Vec::new();
        for asset in STATIC {
            let (text, _) = read(asset)?;
            statics.push((asset.rel.trim_start_matches("static/"), text));
        }

        // UI strings merge key by key: an override file may change a few strings and
        // inherit the rest from the embedded table of the same language.
        let parse = |text: &str, path: &Path| -> Result<BTreeMap<String, String>, Error> {
            toml::from_str(text)
                .map_err(|e| Error::new(ErrorKind::Strings, e.to_string()).with_path(path))
        };
        let mut strings = BTreeMap::new();
        for (lang, asset) in STRINGS {
            let mut table = parse(asset.default, &PathBuf::from("<embedded>").join(asset.rel))?;
            let (text, path) = read(asset)?;
            table.extend(parse(&text, &path)?);
            strings.insert(lang.to_string(), table);
        }
        let mut teras = BTreeMap::new();
        for (lang, table) in &strings {
            let mut instance = tera.clone();
            instance.global_context().insert("t", table);
            teras.insert(lang.clone(), instance);
        }
        Ok(Theme {
            teras,
            statics,
            strings,
            overridden,
        })
    }

    /// Whether this template (`sitemap.xml`) is the embedded default, so that a
    /// hand-written equivalent may stand in for it.
    pub fn is_default(&self, template: &str) -> bool {
        !self.overridden.contains(&template)
    }

    /// The UI strings of `lang`.
    pub fn strings(&self, lang: &str) -> &BTreeMap<String, String> {
        static EMPTY: BTreeMap<String, String> = BTreeMap::new();
        self.strings
            .get(lang)
            .or_else(|| self.strings.get("en"))
            .unwrap_or(&EMPTY)
    }

    /// One UI string, `{name}` placeholders replaced.
    pub fn text(&self, lang: &str, key: &str, vars: &[(&str, &str)]) -> String {
        let mut text = self
            .strings(lang)
            .get(key)
            .cloned()
            .unwrap_or_else(|| key.to_string());
        for (name, value) in vars {
            text = text.replace(&format!("{{{name}}}"), value);
        }
        text
    }

    /// Renders a template with the UI strings of `lang` as `t`; errors name the template.
    pub fn render(&self, lang: &str, template: &str, ctx: &tera::Context) -> Result<String, Error> {
        let tera = self
            .teras
            .get(lang)
            .or_else(|| self.teras.get("en"))
            .ok_or_else(|| {
                Error::new(
                    ErrorKind::Strings,
                    format!("no UI strings for language {lang}"),
                )
            })?;
        tera.render(template, ctx).map_err(|e| {
            Error::new(
                ErrorKind::Template,
                format!("rendering {template}: {}", tera_message(&e)),
            )
        })
    }
}

/// Tera's error with its whole source chain, which is where the useful part is.
fn tera_message(err: &tera::Error) -> String {
    let mut message = err.to_string();
    let mut source = std::error::Error::source(err);
    while let Some(s) = source {
        message.push_str(": ");
        message.push_str(&s.to_string());
        source = s.source();
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_theme_loads_and_languages_have_the_same_keys() {
        let theme = Theme::load(None).unwrap();
        let parse = |text: &str| toml::from_str::<BTreeMap<String, String>>(text).unwrap();
        let en = parse(STRINGS[0].1.default);
        let zh = parse(STRINGS[1].1.default);
        let en_keys: Vec<_> = en.keys().collect();
        let zh_keys: Vec<_> = zh.keys().collect();
        assert_eq!(
            en_keys, zh_keys,
            "en.toml and zh.toml must define the same keys"
        );
        assert_eq!(theme.text("zh", "tag_heading", &[("name", "x")]), "标签：x");
    }

    #[test]
    fn override_dir_replaces_one_file_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("i18n")).unwrap();
        std::fs::write(dir.path().join("i18n/en.toml"), "site_name = \"Custom\"\n").unwrap();
        let theme = Theme::load(Some(dir.path())).unwrap();
        assert_eq!(theme.text("en", "site_name", &[]), "Custom");
        // Keys the override lacks come from the embedded table.
        assert_eq!(theme.text("en", "home", &[]), "Home");
        assert_eq!(theme.text("zh", "home", &[]), "首页");
        assert!(theme.statics.iter().any(|(n, _)| *n == "style.css"));
    }

    #[test]
    fn broken_override_template_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("templates")).unwrap();
        std::fs::write(dir.path().join("templates/404.html"), "{% if %}").unwrap();
        let err = Theme::load(Some(dir.path())).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Template);
    }
}
