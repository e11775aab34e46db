//! JSON Schema validation, with the schemas from `schema/` compiled once per process.

use std::sync::OnceLock;

use errata_model::{Anchor, Diagnostic};
use jsonschema::Validator;
use jsonschema::error::ValidationErrorKind;

/// The entry schema, as committed in `schema/entry.schema.json`.
pub const ENTRY_SCHEMA: &str = include_str!("../../../schema/entry.schema.json");
/// The article front matter schema, as committed in `schema/article.schema.json`.
pub const ARTICLE_SCHEMA: &str = include_str!("../../../schema/article.schema.json");

fn compile(text: &str) -> Result<Validator, String> {
    let schema: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&schema)
        .map_err(|e| e.to_string())
}

pub(crate) fn entry_validator() -> Result<&'static Validator, &'static str> {
    static V: OnceLock<Result<Validator, String>> = OnceLock::new();
    V.get_or_init(|| compile(ENTRY_SCHEMA))
        .as_ref()
        .map_err(String::as_str)
}

pub(crate) fn article_validator() -> Result<&'static Validator, &'static str> {
    static V: OnceLock<Result<Validator, String>> = OnceLock::new();
    V.get_or_init(|| compile(ARTICLE_SCHEMA))
        .as_ref()
        .map_err(String::as_str)
}

/// Which rule reports a schema error. Date formats and rate bounds have dedicated rules
/// with better messages (`date-format`, `rate-range`), which run on the raw JSON, so the
/// schema rule leaves those keywords to them instead of reporting twice.
pub(crate) fn owned_by_other_rule(kind: &ValidationErrorKind) -> bool {
    matches!(
        kind,
        ValidationErrorKind::Format { .. }
            | ValidationErrorKind::Minimum { .. }
            | ValidationErrorKind::Maximum { .. }
    )
}

/// Validates `value` and turns each schema error into a diagnostic of rule `rule`.
pub(crate) fn validate(
    validator: &Validator,
    value: &serde_json::Value,
    rule: &'static str,
    file: &std::path::Path,
    out: &mut Vec<Diagnostic>,
) {
    for error in validator.iter_errors(value) {
        let kind = error.kind();
        if owned_by_other_rule(kind) {
            continue;
        }
        let pointer = error.instance_path().as_str().to_string();
        let (anchor, message, help) = match kind {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                for key in unexpected {
                    let ptr = format!("{pointer}/{}", crate::text::pointer_token(key));
                    out.push(
                        Diagnostic::error(rule, file, Anchor::Key(ptr), format!("unknown key `{key}`"))
                            .with_help("remove it, or fix its spelling; unknown keys are errors so that typos never pass silently"),
                    );
                }
                continue;
            }
            ValidationErrorKind::Required { property } => {
                let name = property.as_str().unwrap_or("?");
                (
                    Anchor::Value(pointer),
                    format!("missing required key `{name}`"),
                    format!("add `\"{name}\"`; `errata new` writes a scaffold with every key"),
                )
            }
            ValidationErrorKind::Enum { options } => (
                Anchor::Value(pointer),
                format!("{} is not one of the allowed values", error.instance()),
                format!("use one of {options}"),
            ),
            _ => (
                Anchor::Value(pointer),
                error.to_string(),
                "see the schema in `schema/` for the expected shape".to_string(),
            ),
        };
        out.push(Diagnostic::error(rule, file, anchor, message).with_help(help));
    }
}
