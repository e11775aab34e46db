//! `errata migrate`: brings an entry written for schema 1 (no `basis`, no
//! `dead_ends_zh`: the seeds' shape, other knowledge bases' canons) to schema 2 without
//! inventing anything. Every rate without a basis is marked `{"kind": "estimate"}` (which
//! is what it was: nobody counted), and an entry without `dead_ends_zh` gets one empty
//! string per dead end, for `zh-missing` to point at. A `confidence` above what the
//! entry's `verification_tier` supports (`tier-unsupported`) is lowered to that ceiling.
//! Schema 3 requires `operator_action`, which only a reader of the entry can choose:
//! migration leaves it out and reports the entry as needing one (the schema rule then
//! points at it).
//! The result is canonically formatted (as by `errata fmt`); running it again changes
//! nothing.

use serde_json::{Value, json};

use crate::canonical::canonical_entry;
use crate::rules::confidence_ceiling;

/// What one migration did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Migration {
    /// Rates marked `estimate`.
    pub estimates: usize,
    /// Empty `dead_ends_zh` items added (each one a `zh-missing` to translate).
    pub untranslated: usize,
    /// Whether `confidence` was lowered to its tier's ceiling.
    pub confidence_lowered: bool,
    /// Whether the entry lacks `operator_action` (left for a person to choose; not a
    /// change).
    pub action_missing: bool,
}

impl Migration {
    /// Whether the entry changed.
    pub fn changed(&self) -> bool {
        self.estimates > 0 || self.untranslated > 0 || self.confidence_lowered
    }
}

/// Migrates one entry's text; an error when it is not a JSON object.
pub fn migrate_entry(text: &str) -> Result<(String, Migration), String> {
    let mut value: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Some(entry) = value.as_object_mut() else {
        return Err("not a JSON object".into());
    };
    let mut m = Migration::default();
    for (list, key) in [("dead_ends", "fail_rate"), ("workarounds", "success_rate")] {
        let items = entry.get_mut(list).and_then(Value::as_array_mut);
        for item in items.into_iter().flatten() {
            if let Some(obj) = item.as_object_mut()
                && obj.contains_key(key)
                && !obj.contains_key("basis")
            {
                obj.insert("basis".into(), json!({"kind": "estimate"}));
                m.estimates += 1;
            }
        }
    }
    if !entry.contains_key("dead_ends_zh") {
        let n = entry
            .get("dead_ends")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        entry.insert("dead_ends_zh".into(), json!(vec![""; n]));
        m.untranslated = n;
    }
    m.action_missing = !entry.contains_key("operator_action");
    let tier = entry
        .get("verification_tier")
        .and_then(Value::as_str)
        .unwrap_or("ai_generated");
    let ceiling = confidence_ceiling(tier);
    if entry
        .get("confidence")
        .and_then(Value::as_f64)
        .is_some_and(|c| c > ceiling + 1e-9)
    {
        entry.insert("confidence".into(), json!(ceiling));
        m.confidence_lowered = true;
    }
    let text = serde_json::to_string(&value).map_err(|e| e.to_string())?;
    Ok((canonical_entry(&text)?, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_estimates_adds_empty_translations_and_is_idempotent() {
        let old = r#"{"id": "cuda/a", "verification_tier": "ai_generated", "confidence": 0.85, "dead_ends": [{"action": "a", "fail_rate": 0.8}, {"action": "b", "fail_rate": 0.5, "basis": {"kind": "reports", "n": 2, "k": 1}}],
                      "workarounds": [{"action": "w", "success_rate": 0.9}]}"#;
        let (new, m) = migrate_entry(old).unwrap();
        assert_eq!(
            m,
            Migration {
                estimates: 2,
                untranslated: 2,
                confidence_lowered: true,
                action_missing: true,
            }
        );
        assert_eq!(v_confidence(&new), 0.5);
        let v: Value = serde_json::from_str(&new).unwrap();
        assert_eq!(v["dead_ends"][0]["basis"], json!({"kind": "estimate"}));
        assert_eq!(v["dead_ends"][1]["basis"]["kind"], "reports");
        assert_eq!(v["workarounds"][0]["basis"], json!({"kind": "estimate"}));
        assert_eq!(v["dead_ends_zh"], json!(["", ""]));
        // Canonical order: basis right after the rate, dead_ends_zh after dead_ends.
        assert!(new.find("\"fail_rate\"") < new.find("\"basis\""));
        assert!(new.find("\"dead_ends_zh\"") < new.find("\"workarounds\""));
        let (again, m2) = migrate_entry(&new).unwrap();
        assert_eq!(again, new);
        assert!(!m2.changed());
        // The operator action is a reader's choice: never invented, always reported.
        assert!(m2.action_missing && !new.contains("operator_action"));
    }

    fn v_confidence(text: &str) -> f64 {
        serde_json::from_str::<Value>(text).unwrap()["confidence"]
            .as_f64()
            .unwrap()
    }

    #[test]
    fn not_an_object() {
        assert!(migrate_entry("[1]").is_err());
        assert!(migrate_entry("{").is_err());
    }
}
