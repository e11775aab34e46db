//! `errata.toml`: the project configuration at the repository root.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

/// The parsed `errata.toml`. Every key is optional; a missing file means all defaults.
///
/// ```toml
/// data_dir = "data"
/// base_url = "/"
/// languages = ["en", "zh"]
/// repo_url = "https://github.com/errata-kb/errata"
///
/// [rules]
/// stale = "error"          # promote a warning
/// regex-overlap = "allow"  # silence a rule
/// ```
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// The knowledge base directory, relative to the config file.
    pub data_dir: PathBuf,
    /// The URL path the site is served under (`/`, or `/errata/` on a sub-path).
    pub base_url: String,
    /// Site languages; the first is the default.
    pub languages: Vec<String>,
    /// Repository URL, for "edit this entry" links.
    pub repo_url: Option<String>,
    /// Branch for "edit this entry" links.
    pub repo_branch: String,
    /// Rule id → `error` | `warning` | `allow`.
    pub rules: BTreeMap<String, RuleLevel>,
}

/// A configured rule level.
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RuleLevel {
    /// Report as an error.
    Error,
    /// Report as a warning.
    Warning,
    /// Do not report.
    Allow,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            data_dir: PathBuf::from("data"),
            base_url: "/".into(),
            languages: vec!["en".into(), "zh".into()],
            repo_url: None,
            repo_branch: "main".into(),
            rules: BTreeMap::new(),
        }
    }
}

impl Config {
    /// Reads `errata.toml` in `dir` if it exists; `data_dir` is made relative to `dir`.
    /// A file that exists but does not parse is an error (exit code 2).
    pub fn discover(dir: &Path) -> Result<Config, String> {
        let path = dir.join("errata.toml");
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let mut config =
                    Config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
                if dir != Path::new(".") && !dir.as_os_str().is_empty() {
                    config.data_dir = dir.join(&config.data_dir);
                }
                Ok(config)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    /// Parses the text of an `errata.toml`.
    pub fn parse(text: &str) -> Result<Config, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_overrides_and_rejects_unknown_keys() {
        let c = Config::parse(
            "data_dir = \"kb\"\n[rules]\nstale = \"error\"\nregex-overlap = \"allow\"\n",
        )
        .unwrap();
        assert_eq!(c.data_dir, PathBuf::from("kb"));
        assert_eq!(c.rules["stale"], RuleLevel::Error);
        assert_eq!(c.base_url, "/");
        assert!(Config::parse("data-dir = 1").is_err());
        assert!(Config::parse("[rules]\nstale = \"loud\"").is_err());
    }
}
