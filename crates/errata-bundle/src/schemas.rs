//! The JSON Schemas a bundle carries, embedded in the binary at build time.
//!
//! `errata bundle` and `errata build` must work on a data directory anywhere, from any
//! working directory: the schemas are the ones this program was built with (the same
//! files `errata check` validates against), not whatever `schema/` the current
//! directory happens to hold. [`crate::BundleOptions::schema_dir`] can still point at a
//! directory, to bundle schemas that are being edited.

use std::path::Path;

use serde_json::Value;

use crate::Error;

/// The manifest schema, as committed in `schema/bundle-manifest.schema.json`. A bundle is
/// never checked against a schema it carries itself.
pub const MANIFEST_SCHEMA: &str = include_str!("../../../schema/bundle-manifest.schema.json");

/// Every schema under `schema/`, by file name, sorted (the `schema/<name>` members).
pub const EMBEDDED: [(&str, &str); 4] = [
    (
        "article.schema.json",
        include_str!("../../../schema/article.schema.json"),
    ),
    ("bundle-manifest.schema.json", MANIFEST_SCHEMA),
    (
        "entry.schema.json",
        include_str!("../../../schema/entry.schema.json"),
    ),
    (
        "run-record.schema.json",
        include_str!("../../../schema/run-record.schema.json"),
    ),
];

/// The schema files to bundle, `(file name, bytes)`: the embedded ones when `dir` is
/// empty, else every `*.json` in `dir`.
pub(crate) fn load(dir: &Path) -> Result<Vec<(String, Vec<u8>)>, Error> {
    if dir.as_os_str().is_empty() {
        return Ok(EMBEDDED
            .iter()
            .map(|(name, text)| (name.to_string(), text.as_bytes().to_vec()))
            .collect());
    }
    let mut out = Vec::new();
    for item in std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))? {
        let item = item.map_err(|e| Error::io(dir, e))?;
        let name = item.file_name().to_string_lossy().into_owned();
        if name.ends_with(".json") && item.path().is_file() {
            let bytes = std::fs::read(item.path()).map_err(|e| Error::io(&item.path(), e))?;
            out.push((name, bytes));
        }
    }
    out.sort();
    Ok(out)
}

/// `x-schema-version` of `entry.schema.json` among `schemas` (the bundle's
/// `schema_version`).
pub(crate) fn entry_schema_version(
    schemas: &[(String, Vec<u8>)],
    dir: &Path,
) -> Result<String, Error> {
    let where_ = || {
        if dir.as_os_str().is_empty() {
            "the embedded schemas".to_string()
        } else {
            dir.display().to_string()
        }
    };
    let bytes = schemas
        .iter()
        .find(|(name, _)| name == "entry.schema.json")
        .map(|(_, b)| b)
        .ok_or_else(|| Error::Invalid(format!("{}: no entry.schema.json", where_())))?;
    let value: Value = serde_json::from_slice(bytes)
        .map_err(|e| Error::Invalid(format!("{}/entry.schema.json: {e}", where_())))?;
    let version = value
        .get("x-schema-version")
        .and_then(Value::as_str)
        .ok_or_else(|| {
            Error::Invalid(format!(
                "{}/entry.schema.json: no \"x-schema-version\"",
                where_()
            ))
        })?;
    version
        .parse::<crate::Version>()
        .map_err(|e| Error::Invalid(format!("entry schema x-schema-version: {e}")))?;
    Ok(version.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_schemas_are_json_and_versioned() {
        for (name, text) in EMBEDDED {
            let v: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(v.get("$schema").is_some(), "{name}");
        }
        let names: Vec<&str> = EMBEDDED.iter().map(|(n, _)| *n).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted);
        let schemas = load(Path::new("")).unwrap_or_default();
        assert_eq!(schemas.len(), EMBEDDED.len());
        assert!(entry_schema_version(&schemas, Path::new("")).is_ok());
    }

    #[test]
    fn every_committed_schema_is_embedded() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema");
        let on_disk = load(&dir).unwrap_or_default();
        let embedded = load(Path::new("")).unwrap_or_default();
        assert_eq!(
            on_disk.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            embedded.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            "a schema was added to schema/: add it to errata_bundle::schemas::EMBEDDED"
        );
    }
}
