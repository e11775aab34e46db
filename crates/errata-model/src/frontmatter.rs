use serde::{Deserialize, Serialize};

/// The YAML front matter of an article. As with [`crate::Entry`], the schema
/// (`schema/article.schema.json`) is the authority; this type is lenient.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FrontMatter {
    /// The article's title.
    pub title: String,
    /// `<domain>/<slug>`, equal to the file path under `articles/` (without `.zh`).
    pub id: String,
    /// Publication date, `YYYY-MM-DD`.
    pub date: String,
    /// Ids of the entries this article is about.
    pub signatures: Vec<String>,
    /// Free-form tags.
    pub tags: Vec<String>,
    /// In a translation (`<slug>.zh.md`): the id of the article it translates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation_of: Option<String>,
    /// In a translation: the sha256 (lower-case hex) of the source article's file bytes
    /// when it was translated. A different hash means the translation is outdated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_hash: Option<String>,
}
