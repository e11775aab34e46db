//! Decode a bare GPU error number or name into every family's meaning.
//!
//! A log line often carries only a number ("error 700", "status 13", "Xid 79") or an
//! enumerator name. [`decode`] answers with every family that has that value, each
//! meaning from NVIDIA's own tables, and the knowledge-base entry where one exists. It
//! never picks one family for a bare number: the caller narrows with a [`Family`].

use std::collections::BTreeMap;

use errata_consumer::Entry;
use errata_model::status_codes::{self, StatusTable};
use serde::Serialize;

/// A family of numbered GPU errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Family {
    /// The runtime API's `cudaError_t`.
    CudaError,
    /// The driver API's `CUresult`.
    CuResult,
    /// `cublasStatus_t`.
    Cublas,
    /// `cudnnStatus_t`.
    Cudnn,
    /// `ncclResult_t`.
    Nccl,
    /// `cufftResult`.
    Cufft,
    /// `cusolverStatus_t`.
    Cusolver,
    /// `cusparseStatus_t`.
    Cusparse,
    /// `curandStatus_t`.
    Curand,
    /// `nvmlReturn_t`.
    Nvml,
    /// The kernel driver's Xid numbers.
    Xid,
}

impl Family {
    /// Every family, in the order meanings are listed.
    pub const ALL: [Family; 11] = [
        Family::CudaError,
        Family::CuResult,
        Family::Cublas,
        Family::Cudnn,
        Family::Nccl,
        Family::Cufft,
        Family::Cusolver,
        Family::Cusparse,
        Family::Curand,
        Family::Nvml,
        Family::Xid,
    ];

    /// The name a meaning carries: the C type, or `Xid`.
    pub fn type_name(self) -> &'static str {
        match self {
            Family::CudaError => "cudaError_t",
            Family::Xid => "Xid",
            other => other.table().map_or("", |t| t.type_name),
        }
    }

    /// The short name `--family` takes besides the type name.
    pub fn short_name(self) -> &'static str {
        match self {
            Family::CudaError => "cuda",
            Family::CuResult => "cu",
            Family::Cublas => "cublas",
            Family::Cudnn => "cudnn",
            Family::Nccl => "nccl",
            Family::Cufft => "cufft",
            Family::Cusolver => "cusolver",
            Family::Cusparse => "cusparse",
            Family::Curand => "curand",
            Family::Nvml => "nvml",
            Family::Xid => "xid",
        }
    }

    /// The family `name` names: a short name (`cublas`) or a type name
    /// (`cublasStatus_t`), in any case.
    pub fn parse(name: &str) -> Option<Family> {
        let name = name.trim();
        Family::ALL.into_iter().find(|f| {
            f.short_name().eq_ignore_ascii_case(name) || f.type_name().eq_ignore_ascii_case(name)
        })
    }

    fn table(self) -> Option<&'static StatusTable> {
        let type_name = match self {
            Family::CuResult => "CUresult",
            Family::Cublas => "cublasStatus_t",
            Family::Cudnn => "cudnnStatus_t",
            Family::Nccl => "ncclResult_t",
            Family::Cufft => "cufftResult",
            Family::Cusolver => "cusolverStatus_t",
            Family::Cusparse => "cusparseStatus_t",
            Family::Curand => "curandStatus_t",
            Family::Nvml => "nvmlReturn_t",
            Family::CudaError | Family::Xid => return None,
        };
        status_codes::TABLES
            .iter()
            .copied()
            .find(|t| t.type_name == type_name)
    }

    /// Every value of the family as `(name, number, description)`.
    fn values(self) -> Vec<(&'static str, i64, &'static str)> {
        match self {
            Family::CudaError => errata_model::cuda_errors::CUDA_ERRORS
                .iter()
                .map(|e| {
                    // What the runtime prints for it, else the header's comment.
                    let text =
                        errata_model::cuda_errors::runtime_string(e.name).unwrap_or(e.description);
                    (e.name, i64::from(e.code), text)
                })
                .collect(),
            Family::Xid => errata_model::xid::catalog()
                .iter()
                .map(|x| (x.name, i64::from(x.xid), x.description))
                .collect(),
            other => other
                .table()
                .map(|t| {
                    t.codes
                        .iter()
                        .map(|c| (c.name, c.code, c.description))
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

/// One family's meaning of the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Meaning {
    /// The family's type name: `cudaError_t`, `CUresult`, …, `Xid`.
    pub family: &'static str,
    /// The enumerator (for an Xid, NVIDIA's mnemonic, or `Xid N` when it has none).
    pub name: String,
    /// Its number.
    pub number: i64,
    /// What it means, in NVIDIA's words (for `cudaError_t`, what
    /// `cudaGetErrorString` returns); empty when the header says nothing.
    pub description: String,
    /// The knowledge-base entry that explains it, when there is one.
    pub entry: Option<String>,
}

/// What [`decode`] found: the value as asked, and every meaning.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decoded {
    /// The value as it was asked for (trimmed).
    pub value: String,
    /// Every family's meaning, in [`Family::ALL`] order; empty when none has it.
    pub meanings: Vec<Meaning>,
}

/// Why a value cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// Empty input.
    Empty,
    /// A `--family` that is not one of [`Family::ALL`].
    UnknownFamily(String),
    /// Not a number (decimal, or `0x` hex) nor an enumerator-like name.
    NotAValue(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Empty => write!(f, "nothing to decode: give a number (700, 0x2bc) or a name"),
            Error::UnknownFamily(name) => {
                let known: Vec<String> = Family::ALL
                    .iter()
                    .map(|f| format!("{} ({})", f.short_name(), f.type_name()))
                    .collect();
                write!(f, "unknown family `{name}`; one of: {}", known.join(", "))
            }
            Error::NotAValue(text) => write!(
                f,
                "`{text}` is neither a number (decimal or 0x hex) nor an enumerator name"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// The value a user typed: a number, or a name.
enum Query {
    Number(i64),
    Name(String),
}

fn parse_value(text: &str) -> Result<Query, Error> {
    let t = text.trim();
    if t.is_empty() {
        return Err(Error::Empty);
    }
    let (negative, digits) = match t.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, t),
    };
    let number = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None if digits.bytes().all(|b| b.is_ascii_digit()) => digits.parse::<i64>().ok(),
        None => None,
    };
    if let Some(n) = number {
        return Ok(Query::Number(if negative { -n } else { n }));
    }
    let is_name = t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && t.starts_with(|c: char| c.is_ascii_alphabetic());
    if is_name {
        Ok(Query::Name(t.to_string()))
    } else {
        Err(Error::NotAValue(t.to_string()))
    }
}

/// The entry for each family value: an entry's `error_code` names it (`Name` or
/// `Name (N)`); an Xid entry's id is `xid/<N>-…`. The first entry by id wins.
fn entries_by_value(entries: &[Entry]) -> BTreeMap<(Family, i64), String> {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    sorted.sort_by(|a, b| a.id.cmp(&b.id));
    let mut out = BTreeMap::new();
    for e in sorted {
        if let Some(n) =
            e.id.strip_prefix("xid/")
                .and_then(|rest| rest.split('-').next())
                .and_then(|n| n.parse::<i64>().ok())
        {
            out.entry((Family::Xid, n)).or_insert_with(|| e.id.clone());
        }
        let value = e.error_code.as_deref().and_then(status_codes::value_of);
        if let Some((family, n)) = value.and_then(|(t, n)| Some((Family::parse(t)?, n))) {
            out.entry((family, n)).or_insert_with(|| e.id.clone());
        }
    }
    out
}

/// Every meaning of `value` (a decimal or `0x` number, or an enumerator name), in
/// `family` only when one is given, with the entry from `entries` that explains it.
pub fn decode(value: &str, family: Option<&str>, entries: &[Entry]) -> Result<Decoded, Error> {
    let only = match family {
        Some(name) => Some(Family::parse(name).ok_or_else(|| Error::UnknownFamily(name.into()))?),
        None => None,
    };
    let query = parse_value(value)?;
    let by_value = entries_by_value(entries);
    let mut meanings = Vec::new();
    for f in Family::ALL
        .into_iter()
        .filter(|f| only.is_none_or(|o| o == *f))
    {
        for (name, number, description) in f.values() {
            let hit = match &query {
                Query::Number(n) => *n == number,
                // Names are matched exactly, then without regard to case (`cudaerrorillegaladdress`).
                Query::Name(q) => q == name || q.eq_ignore_ascii_case(name),
            };
            if hit {
                meanings.push(Meaning {
                    family: f.type_name(),
                    name: if name.is_empty() && f == Family::Xid {
                        format!("Xid {number}")
                    } else {
                        name.to_string()
                    },
                    number,
                    description: description.to_string(),
                    entry: by_value.get(&(f, number)).cloned(),
                });
            }
        }
    }
    Ok(Decoded {
        value: value.trim().to_string(),
        meanings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str, error_code: Option<&str>) -> Entry {
        let mut v = serde_json::json!({"id": id, "signature": id, "regex": "x"});
        if let Some(code) = error_code {
            v["error_code"] = code.into();
        }
        Entry::from_value(v).expect("entry")
    }

    fn families(d: &Decoded) -> Vec<(&str, &str)> {
        d.meanings
            .iter()
            .map(|m| (m.family, m.name.as_str()))
            .collect()
    }

    #[test]
    fn a_number_has_every_family_s_meaning_and_its_entry() {
        let entries = [
            entry(
                "cuda/illegal-memory-access",
                Some("cudaErrorIllegalAddress (700)"),
            ),
            entry(
                "cublas/execution-failed",
                Some("CUBLAS_STATUS_EXECUTION_FAILED (13)"),
            ),
            entry("xid/13-graphics-engine-exception", None),
        ];
        let d = decode("700", None, &entries).expect("decode");
        assert_eq!(
            families(&d),
            [
                ("cudaError_t", "cudaErrorIllegalAddress"),
                ("CUresult", "CUDA_ERROR_ILLEGAL_ADDRESS")
            ]
        );
        assert_eq!(
            d.meanings[0].entry.as_deref(),
            Some("cuda/illegal-memory-access")
        );
        assert_eq!(
            d.meanings[0].description,
            "an illegal memory access was encountered"
        );
        assert_eq!(d.meanings[1].entry, None);
        // 13 is a different error in six families: all of them, never a guess.
        let d = decode("13", None, &entries).expect("decode");
        let names: Vec<&str> = d.meanings.iter().map(|m| m.family).collect();
        assert_eq!(
            names,
            [
                "cudaError_t",
                "cublasStatus_t",
                "cufftResult",
                "cusolverStatus_t",
                "nvmlReturn_t",
                "Xid"
            ]
        );
        let linked: Vec<Option<&str>> = d.meanings.iter().map(|m| m.entry.as_deref()).collect();
        assert_eq!(
            linked,
            [
                None,
                Some("cublas/execution-failed"),
                None,
                None,
                None,
                Some("xid/13-graphics-engine-exception")
            ]
        );
    }

    #[test]
    fn hex_names_families_and_bad_input() {
        let d = decode("0x2bc", Some("cuda"), &[]).expect("decode");
        assert_eq!(families(&d), [("cudaError_t", "cudaErrorIllegalAddress")]);
        let d = decode("CURAND_STATUS_LAUNCH_FAILURE", None, &[]).expect("decode");
        assert_eq!(d.meanings[0].number, 201);
        let d = decode("cudaerrorillegaladdress", None, &[]).expect("decode");
        assert_eq!(d.meanings[0].number, 700);
        let d = decode("79", Some("Xid"), &[]).expect("decode");
        assert!(d.meanings[0].description.contains("fallen off the bus"));
        assert_eq!(Family::parse("cublasStatus_t"), Some(Family::Cublas));
        assert!(
            decode("123456", None, &[])
                .expect("decode")
                .meanings
                .is_empty()
        );
        assert_eq!(decode("  ", None, &[]), Err(Error::Empty));
        assert!(matches!(
            decode("7 00", None, &[]),
            Err(Error::NotAValue(_))
        ));
        assert!(matches!(
            decode("1", Some("cuda13"), &[]),
            Err(Error::UnknownFamily(_))
        ));
        assert!(matches!(
            decode("0xZZ", None, &[]),
            Err(Error::NotAValue(_))
        ));
    }
}
