//! Compact JSON straight from JSON text, without building a tree: the bytes that
//! `serde_json::to_string(&serde_json::from_str::<Value>(text)?)` gives, at a fraction of
//! the allocations (the deserializer's events are fed to the serializer as they come).
//!
//! The two agree because both go through the same deserializer and the same serializer
//! calls: numbers as `u64`/`i64`/`f64`, strings re-escaped, objects in document order.
//! The one difference, a key repeated in one object (a tree keeps the last value, this
//! keeps both), cannot reach a bundle: the loader rejects such files.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{self, Serialize, SerializeMap, SerializeSeq, Serializer};

/// `text` as compact JSON (the form of `entries.jsonl`).
pub(crate) fn compact(text: &str) -> serde_json::Result<String> {
    let mut out = Vec::with_capacity(text.len());
    let mut de = serde_json::Deserializer::from_str(text);
    let mut ser = serde_json::Serializer::new(&mut out);
    Transcode::new(&mut de).serialize(&mut ser)?;
    de.end()?;
    // The serializer writes UTF-8 only.
    String::from_utf8(out).map_err(|e| ser::Error::custom(e.to_string()))
}

/// A deserializer, serialized: [`Serialize`] for "whatever comes next in `D`".
struct Transcode<D>(RefCell<Option<D>>);

impl<D> Transcode<D> {
    fn new(d: D) -> Self {
        Transcode(RefCell::new(Some(d)))
    }
}

impl<'de, D: Deserializer<'de>> Serialize for Transcode<D> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self
            .0
            .borrow_mut()
            .take()
            .ok_or_else(|| ser::Error::custom("a value serialized twice"))?;
        d.deserialize_any(Emit(s)).map_err(ser::Error::custom)
    }
}

/// Emits each value the deserializer visits into the serializer `S`.
struct Emit<S>(S);

/// Carries a serializer's error through the deserializer's error type.
fn fail<E: de::Error>(e: impl fmt::Display) -> E {
    E::custom(e)
}

impl<'de, S: Serializer> Visitor<'de> for Emit<S> {
    type Value = S::Ok;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<S::Ok, E> {
        self.0.serialize_bool(v).map_err(fail)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<S::Ok, E> {
        self.0.serialize_i64(v).map_err(fail)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<S::Ok, E> {
        self.0.serialize_u64(v).map_err(fail)
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<S::Ok, E> {
        self.0.serialize_f64(v).map_err(fail)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<S::Ok, E> {
        self.0.serialize_str(v).map_err(fail)
    }

    fn visit_unit<E: de::Error>(self) -> Result<S::Ok, E> {
        self.0.serialize_unit().map_err(fail)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<S::Ok, A::Error> {
        let mut out = self.0.serialize_seq(seq.size_hint()).map_err(fail)?;
        while seq.next_element_seed(Element(&mut out))?.is_some() {}
        out.end().map_err(fail)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<S::Ok, A::Error> {
        let mut out = self.0.serialize_map(map.size_hint()).map_err(fail)?;
        while map.next_key_seed(Key(&mut out))?.is_some() {
            map.next_value_seed(Value(&mut out))?;
        }
        out.end().map_err(fail)
    }
}

/// The next array element, serialized into the array being written.
struct Element<'a, T>(&'a mut T);

impl<'de, T: SerializeSeq> DeserializeSeed<'de> for Element<'_, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.serialize_element(&Transcode::new(d)).map_err(fail)
    }
}

/// The next object key, serialized into the object being written.
struct Key<'a, T>(&'a mut T);

impl<'de, T: SerializeMap> DeserializeSeed<'de> for Key<'_, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.serialize_key(&Transcode::new(d)).map_err(fail)
    }
}

/// The next object value, serialized into the object being written.
struct Value<'a, T>(&'a mut T);

impl<'de, T: SerializeMap> DeserializeSeed<'de> for Value<'_, T> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.0.serialize_value(&Transcode::new(d)).map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn via_tree(text: &str) -> String {
        serde_json::from_str::<serde_json::Value>(text)
            .and_then(|v| serde_json::to_string(&v))
            .unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn same_bytes_as_through_a_tree() {
        for text in [
            "{}",
            "[]",
            "null",
            "  {\n  \"b\": 1,\n  \"a\": [true, false, null, -0, 0.90, 1e3, -12, 18446744073709551615, 1.5e300, 123456789012345678901234567890],\n  \"s\": \"caf\\u00e9 \\/ \\\" \\\\ \\n \\t \\u0001 \\ud83d\\ude00 内存\",\n  \"o\": {\"z\": {}, \"y\": [[]], \"\": \"\"}\n}\n",
            "\"just a string\"",
            "3.0",
        ] {
            assert_eq!(compact(text).unwrap_or_default(), via_tree(text), "{text}");
        }
        for bad in ["", "{", "[1,]", "{\"a\" 1}", "1 2", "nul"] {
            assert!(compact(bad).is_err(), "{bad}");
        }
    }
}
