//! The real values of CUDA's `cudaError_t`, generated from `driver_types.h`.
//!
//! The table in `table.rs` is written by `cargo xtask gen-cuda-errors` from the header
//! shipped in NVIDIA's `nvidia-cuda-runtime` pip wheel (never typed by hand);
//! `cargo xtask gen-cuda-errors --check` fails when it is stale.
//!
//! What the runtime prints for each code (`cudaGetErrorString`) is not in the header: it
//! is in `data/cuda-error-strings.tsv`, printed by the wheel's own libcudart
//! (`cargo xtask nvcc --error-strings`), and read here by [`runtime_string`].

use std::sync::OnceLock;

mod table;

pub use table::{CUDA_ERRORS, CUDA_HEADER_SOURCE};

/// `code<TAB>cudaGetErrorName<TAB>cudaGetErrorString` of every code libcudart knows,
/// `#` lines first (which libcudart printed them).
pub const RUNTIME_STRINGS_TSV: &str = include_str!("../../data/cuda-error-strings.tsv");

/// `code<TAB>name` of `cudaError_t` as CUDA 2.x numbered it (cited data, see the file).
pub const CUDA2_TSV: &str = include_str!("../../data/cuda-errors-cuda2.tsv");

/// Whether a bare `cudaError_t` number means the same enumerator in every CUDA release:
/// CUDA 10.1 renumbered the runtime's errors below 128 (4 was `cudaErrorLaunchFailure`
/// before, `cudaErrorCudartUnloading` after), so such a number is read only where the
/// old numbering ([`CUDA2_TSV`]) and today's agree. 128 and above were never used
/// before the renumbering, except `cudaErrorApiFailureBase` (10000).
pub fn same_in_every_release(code: i32) -> bool {
    let old = |code: i32| {
        CUDA2_TSV
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| l.split_once('\t'))
            .find(|(c, _)| c.trim().parse::<i32>().ok() == Some(code))
            .map(|(_, name)| name.trim())
    };
    match code {
        10000 => false,
        c if c < 128 => old(c).is_some_and(|name| by_code(c).is_some_and(|e| e.name == name)),
        _ => true,
    }
}

/// One enumerator of `cudaError_t`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CudaError {
    /// The enumerator name, e.g. `cudaErrorIllegalAddress`.
    pub name: &'static str,
    /// Its numeric value, e.g. `700`.
    pub code: i32,
    /// The first sentence of the header's doc comment.
    pub description: &'static str,
}

/// Looks an error up by name.
pub fn by_name(name: &str) -> Option<&'static CudaError> {
    CUDA_ERRORS.iter().find(|e| e.name == name)
}

/// Looks an error up by number.
pub fn by_code(code: i32) -> Option<&'static CudaError> {
    CUDA_ERRORS.iter().find(|e| e.code == code)
}

/// `(name, cudaGetErrorString text)` of every code but `cudaSuccess`, in code order.
pub fn runtime_strings() -> &'static [(&'static str, &'static str)] {
    static TABLE: OnceLock<Vec<(&'static str, &'static str)>> = OnceLock::new();
    TABLE.get_or_init(|| {
        RUNTIME_STRINGS_TSV
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let mut cols = l.splitn(3, '\t');
                let code = cols.next()?;
                let name = cols.next()?;
                let text = cols.next()?;
                (code != "0").then_some((name, text))
            })
            .collect()
    })
}

/// The `cudaError_t` codes the runtime can return: every code with a runtime string
/// (all but `cudaSuccess`, and not the `cudaErrorApiFailureBase` marker).
pub fn runtime_code_count() -> usize {
    runtime_strings().len()
}

/// The enumerator an `error_code` value names (`cudaErrorX` or `cudaErrorX (N)`), if it
/// is a `cudaError_t` the runtime returns.
pub fn named_by(error_code: &str) -> Option<&'static str> {
    let name = error_code.split('(').next().unwrap_or(error_code).trim();
    runtime_strings()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(n, _)| *n)
}

/// The runtime codes a knowledge base covers: those named by an entry's `error_code`,
/// or by an alias that is exactly an enumerator (two codes with one runtime string, such
/// as `cudaErrorInvalidKernelImage` and `cudaErrorInvalidSource`, share one entry).
pub fn covered<'a>(
    entries: impl IntoIterator<Item = &'a crate::Entry>,
) -> std::collections::BTreeSet<&'static str> {
    let mut out = std::collections::BTreeSet::new();
    for e in entries {
        out.extend(e.error_code.as_deref().and_then(named_by));
        // Only an alias that is the name itself: "cudaErrorX: text" is a log line.
        out.extend(e.aliases.iter().filter_map(|a| named_by(a)));
    }
    out
}

/// What `cudaGetErrorString` returns for the enumerator `name`, as libcudart prints it.
pub fn runtime_string(name: &str) -> Option<&'static str> {
    runtime_strings()
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

#[cfg(test)]
mod tests {
    //! Facts read from `driver_types.h` in `nvidia-cuda-runtime` 13.5.37. If a newer
    //! header changes one of them, the table was regenerated: check the header and
    //! update the fact here deliberately.

    #[test]
    fn numbers_renumbered_in_cuda_10_1_are_not_read_bare() {
        use super::same_in_every_release as same;
        // Same enumerator before and after: out of memory, insufficient driver.
        assert!(same(2) && same(35) && same(13));
        // Renumbered: 4 was a launch failure, 11 invalid value, 30 unknown, 38 no device.
        assert!(!same(4) && !same(11) && !same(30) && !same(1));
        // Never in the old numbering below 128, so unknown there: not read.
        assert!(!same(46) && !same(98));
        // Today's codes from 128 up were never used before.
        assert!(same(700) && same(999) && same(201));
        assert!(!same(10000));
    }

    use std::collections::HashSet;

    use super::*;

    #[test]
    fn table_is_generated() {
        assert!(
            CUDA_HEADER_SOURCE.starts_with("nvidia-cuda-runtime 13."),
            "{CUDA_HEADER_SOURCE}"
        );
        assert!(CUDA_ERRORS.len() > 100, "only {} errors", CUDA_ERRORS.len());
        assert_eq!(
            CUDA_ERRORS.first().map(|e| (e.name, e.code)),
            Some(("cudaSuccess", 0))
        );
    }

    #[test]
    fn facts_from_the_header() {
        let code = |name: &str| by_name(name).map(|e| e.code);
        assert_eq!(code("cudaErrorMemoryAllocation"), Some(2));
        assert_eq!(code("cudaErrorCudartUnloading"), Some(4));
        assert_eq!(code("cudaErrorIllegalAddress"), Some(700));
        assert_eq!(code("cudaErrorLaunchFailure"), Some(719));
        assert_eq!(code("cudaErrorUnknown"), Some(999));
        assert_eq!(code("cudaErrorApiFailureBase"), Some(10000));
        // Deprecated enumerators stay in the header, and so in the table.
        assert_eq!(code("cudaErrorProfilerNotInitialized"), Some(6));
        // A name people (and language models) invent: it is not in the runtime API.
        assert_eq!(by_name("cudaErrorDriverNotReady"), None);
        assert_eq!(
            by_code(804).map(|e| e.name),
            Some("cudaErrorCompatNotSupportedOnDevice")
        );
        assert_eq!(
            by_name("cudaErrorIllegalAddress").map(|e| e.description),
            Some(
                "The device encountered a load or store instruction on an invalid memory address."
            )
        );
    }

    #[test]
    fn runtime_strings_are_libcudarts() {
        assert_eq!(
            runtime_string("cudaErrorIllegalAddress"),
            Some("an illegal memory access was encountered")
        );
        assert_eq!(
            runtime_string("cudaErrorInvalidValue"),
            Some("invalid argument")
        );
        // Two codes, one string: the runtime does not tell them apart in text.
        assert_eq!(
            runtime_string("cudaErrorInvalidSource"),
            runtime_string("cudaErrorInvalidKernelImage")
        );
        assert_eq!(runtime_string("cudaSuccess"), None);
        assert_eq!(runtime_string("cudaErrorDriverNotReady"), None);
        // Every code but cudaSuccess has a string, and every string's code is in the table.
        let named: HashSet<&str> = runtime_strings().iter().map(|(n, _)| *n).collect();
        for e in CUDA_ERRORS
            .iter()
            .filter(|e| e.code != 0 && e.code < 10_000)
        {
            assert!(named.contains(e.name), "{} has no runtime string", e.name);
        }
        for (name, _) in runtime_strings() {
            assert!(
                by_name(name).is_some(),
                "{name} is not in the header's table"
            );
        }
    }

    #[test]
    fn coverage_counts_error_codes_and_enumerator_aliases() {
        assert_eq!(runtime_code_count(), 137);
        assert_eq!(named_by("cudaErrorAssert (710)"), Some("cudaErrorAssert"));
        assert_eq!(named_by("cudaErrorApiFailureBase"), None);
        assert_eq!(named_by("CUBLAS_STATUS_EXECUTION_FAILED (13)"), None);
        let entry = |code: Option<&str>, aliases: &[&str]| crate::Entry {
            error_code: code.map(String::from),
            aliases: aliases.iter().map(|a| a.to_string()).collect(),
            ..crate::Entry::default()
        };
        let kb = [
            entry(
                Some("cudaErrorInvalidKernelImage (200)"),
                &["cudaErrorInvalidSource"],
            ),
            entry(
                Some("cudaErrorAssert"),
                &["cudaErrorLaunchFailure: unspecified launch failure"],
            ),
            entry(None, &[]),
        ];
        let got: Vec<&str> = covered(&kb).into_iter().collect();
        assert_eq!(
            got,
            [
                "cudaErrorAssert",
                "cudaErrorInvalidKernelImage",
                "cudaErrorInvalidSource"
            ]
        );
    }

    #[test]
    fn names_and_codes_are_unique_and_described() {
        let mut names = HashSet::new();
        let mut codes = HashSet::new();
        for e in CUDA_ERRORS {
            assert!(names.insert(e.name), "duplicate name {}", e.name);
            assert!(codes.insert(e.code), "duplicate code {}", e.code);
            assert!(e.name.starts_with("cuda"), "{}", e.name);
            assert!(
                !e.description.trim().is_empty(),
                "{} has no description",
                e.name
            );
        }
    }
}
