//! Canonical entry formatting (`errata fmt`): keys in schema order, 2-space indent,
//! trailing newline. Unknown keys are kept (after the known ones, sorted) so that
//! formatting never loses data; `errata check` reports them.

use serde_json::{Map, Value};

use crate::schema::ENTRY_SCHEMA;

/// Formats an entry's JSON text canonically. Idempotent: formatting the output again
/// gives the same bytes.
///
/// ```
/// let text = r#"{"signature": "x", "id": "cuda/a"}"#;
/// assert_eq!(errata_check::canonical_entry(text).unwrap(), "{\n  \"id\": \"cuda/a\",\n  \"signature\": \"x\"\n}\n");
/// ```
pub fn canonical_entry(text: &str) -> Result<String, String> {
    let value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let schema: Value = serde_json::from_str(ENTRY_SCHEMA).map_err(|e| e.to_string())?;
    let ordered = reorder(value, &schema, &schema);
    let mut out = serde_json::to_string_pretty(&ordered).map_err(|e| e.to_string())?;
    out.push('\n');
    Ok(out)
}

fn reorder(value: Value, schema: &Value, root: &Value) -> Value {
    let schema = resolve_ref(schema, root);
    match value {
        Value::Object(map) => {
            let props = schema.get("properties").and_then(Value::as_object);
            let mut rest = map;
            let mut out = Map::new();
            if let Some(props) = props {
                for (key, sub) in props {
                    if let Some(v) = rest.remove(key) {
                        out.insert(key.clone(), reorder(v, sub, root));
                    }
                }
            }
            let mut unknown: Vec<_> = rest.into_iter().collect();
            unknown.sort_by(|a, b| a.0.cmp(&b.0));
            out.extend(unknown);
            Value::Object(out)
        }
        Value::Array(items) => {
            let item_schema = schema.get("items").unwrap_or(&Value::Null);
            Value::Array(
                items
                    .into_iter()
                    .map(|v| reorder(v, item_schema, root))
                    .collect(),
            )
        }
        other => other,
    }
}

/// Follows a local `$ref` (`#/$defs/x`), so nested objects defined once are ordered too.
fn resolve_ref<'a>(schema: &'a Value, root: &'a Value) -> &'a Value {
    match schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
    {
        Some(pointer) => root.pointer(pointer).unwrap_or(schema),
        None => schema,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_order_unknown_keys_kept_and_idempotent() {
        let text = r#"{"zzz": 1, "dead_ends": [{"sources": [], "action": "a"}], "id": "cuda/a"}"#;
        let once = canonical_entry(text).unwrap();
        assert_eq!(
            once,
            "{\n  \"id\": \"cuda/a\",\n  \"dead_ends\": [\n    {\n      \"action\": \"a\",\n      \"sources\": []\n    }\n  ],\n  \"zzz\": 1\n}\n"
        );
        assert_eq!(canonical_entry(&once).unwrap(), once);
    }
}
