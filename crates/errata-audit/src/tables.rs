//! The cited tables the audit reasons with (each file's header names its sources and
//! the date they were read; `data/`):
//!
//! - `cuda-driver-minimum.tsv`: NVIDIA's CUDA release notes, the minimum driver of each
//!   toolkit release and of each major version under minor-version compatibility;
//! - `torch-cuda-arches.tsv`: the compute capabilities each PyTorch release's wheels
//!   were built for, per CUDA build (PyTorch's build scripts and release matrix);
//! - `gpu-compute-capability.tsv`: NVIDIA's list of GPUs and their compute capability.
//! - `torch-pinned-libraries.tsv`: the cuDNN and NCCL wheels each PyTorch release on PyPI
//!   pins, read from the release wheels' own METADATA.

use std::sync::OnceLock;

use crate::version;

/// `toolkit<TAB>linux_min_driver<TAB>windows_min_driver<TAB>kind`.
pub const CUDA_DRIVER_MINIMUM: &str = include_str!("../data/cuda-driver-minimum.tsv");
/// `torch<TAB>cuda_build<TAB>arch_list<TAB>source_url`.
pub const TORCH_CUDA_ARCHES: &str = include_str!("../data/torch-cuda-arches.tsv");
/// `compute_capability<TAB>gpu_name`.
pub const GPU_COMPUTE_CAPABILITY: &str = include_str!("../data/gpu-compute-capability.tsv");
/// `torch<TAB>wheel<TAB>cudnn_package<TAB>cudnn_version<TAB>nccl_package<TAB>nccl_version<TAB>source<TAB>metadata_sha256`.
pub const TORCH_PINNED_LIBRARIES: &str = include_str!("../data/torch-pinned-libraries.tsv");

fn rows(tsv: &'static str) -> impl Iterator<Item = Vec<&'static str>> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split('\t').map(str::trim).collect())
}

/// One row of NVIDIA's driver table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverMinimum {
    /// `12.4.1`, or `12.x` for a minor-version-compatibility row.
    pub toolkit: &'static str,
    pub linux: &'static str,
    pub windows: &'static str,
    pub minor_compat: bool,
}

pub fn driver_minimums() -> &'static [DriverMinimum] {
    static T: OnceLock<Vec<DriverMinimum>> = OnceLock::new();
    T.get_or_init(|| {
        rows(CUDA_DRIVER_MINIMUM)
            .filter(|r| r.len() >= 4)
            .map(|r| DriverMinimum {
                toolkit: r[0],
                linux: r[1],
                windows: r[2],
                minor_compat: r[3] == "minor-compat",
            })
            .collect()
    })
}

/// The oldest driver that runs what a CUDA `build` (`12.6`, `10.2`) compiled: from CUDA
/// 11 on, any driver of the major version's minor-version-compatibility branch; before,
/// the release's own driver. `None` when the table has no row for it.
pub fn minimum_driver(build: &str, windows: bool) -> Option<&'static str> {
    let v = version::parse(build)?;
    let pick = |m: &DriverMinimum| if windows { m.windows } else { m.linux };
    let major = *v.first()?;
    if major >= 11 {
        let key = format!("{major}.x");
        return driver_minimums()
            .iter()
            .find(|m| m.minor_compat && m.toolkit == key)
            .map(pick)
            .filter(|d| version::parse(d).is_some());
    }
    // The first row of that release (`10.2` → `10.2.89`).
    driver_minimums()
        .iter()
        .filter(|m| !m.minor_compat)
        .find(|m| {
            version::parse(m.toolkit)
                .is_some_and(|t| t.len() >= 2 && v.len() >= 2 && t[..2] == v[..2])
        })
        .map(pick)
        .filter(|d| version::parse(d).is_some())
}

/// The compute capabilities of `torch`'s release wheels for CUDA `build` (`12.6`), and
/// the release the row is for: the same release when the table has it, else the
/// nearest release with the same CUDA build.
pub fn torch_arches(torch: &str, build: &str) -> Option<(Vec<String>, String)> {
    let tv = version::parse(torch)?;
    let bv = version::parse(build)?;
    let cu = format!("cu{}", bv.iter().map(u64::to_string).collect::<String>());
    let mut best: Option<(u64, Vec<String>, String)> = None;
    for r in rows(TORCH_CUDA_ARCHES).filter(|r| r.len() >= 3) {
        if !r[1].split(',').any(|b| b == cu) || r[2].contains(' ') {
            continue;
        }
        let Some(rv) = version::parse(r[0]) else {
            continue;
        };
        // Distance in minor releases within the major; another major is far.
        let distance = if rv.first() == tv.first() {
            rv.get(1).unwrap_or(&0).abs_diff(*tv.get(1).unwrap_or(&0))
        } else {
            1000
        };
        if best.as_ref().is_none_or(|(d, ..)| distance < *d) {
            let arches = r[2].split(';').map(str::to_string).collect();
            best = Some((distance, arches, r[0].to_string()));
        }
    }
    best.filter(|(d, ..)| *d < 1000).map(|(_, a, r)| (a, r))
}

/// The compute capability NVIDIA lists for a GPU named `name` (`NVIDIA GeForce RTX 5090
/// D`): the longest listed name the reported one contains, as a whole word.
pub fn compute_capability(name: &str) -> Option<&'static str> {
    static T: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();
    let table = T.get_or_init(|| {
        rows(GPU_COMPUTE_CAPABILITY)
            .filter(|r| r.len() >= 2)
            .map(|r| (r[0], r[1].to_ascii_lowercase()))
            .collect()
    });
    let name = name.to_ascii_lowercase();
    let contains_word = |hay: &str, needle: &str| {
        hay.match_indices(needle).any(|(i, _)| {
            let before = hay[..i].chars().next_back();
            let after = hay[i + needle.len()..].chars().next();
            before.is_none_or(|c| !c.is_ascii_alphanumeric())
                && after.is_none_or(|c| !c.is_ascii_alphanumeric())
        })
    };
    table
        .iter()
        .filter(|(_, n)| contains_word(&name, n))
        .max_by_key(|(_, n)| n.len())
        .map(|(cc, _)| *cc)
}

/// Whether code built for `arches` (`8.0`, `9.0`, `12.0+PTX`) runs on a GPU of
/// capability `cc`: a binary for X.y runs on X.z with z ≥ y; PTX for a capability at or
/// below `cc` is compiled for it by the driver.
pub fn runs_on(arches: &[String], cc: &str) -> bool {
    let Some(c) = version::parse(cc) else {
        return true;
    };
    arches.iter().any(|a| {
        let ptx = a.ends_with("+PTX");
        let Some(v) = version::parse(a.trim_end_matches("+PTX")) else {
            return false;
        };
        let same_major = v.first() == c.first() && v.get(1) <= c.get(1);
        same_major || (ptx && version::compare(&v, &c).is_le())
    })
}

/// The NCCL wheel PyTorch release `torch` (`2.2.0`, `2.2.0+cu121`: the local part is
/// ignored) pins on PyPI, as `(package, version)`: `("nvidia-nccl-cu12", "2.19.3")`.
/// `None` for a release the table lacks or one that pins no NCCL wheel.
pub fn torch_nccl_pin(torch: &str) -> Option<(&'static str, &'static str)> {
    let release = torch.split('+').next()?;
    rows(TORCH_PINNED_LIBRARIES)
        .filter(|r| r.len() >= 6)
        .find(|r| r[0] == release)
        .filter(|r| r[4] != "-")
        .map(|r| (r[4], r[5]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tables_read_and_answer() {
        assert_eq!(minimum_driver("12.6", false), Some("525"));
        assert_eq!(minimum_driver("11.8", false), Some("450.80.02"));
        assert_eq!(minimum_driver("10.2", false), Some("440.33"));
        assert_eq!(minimum_driver("9.9", false), None);
        let (arches, release) = torch_arches("2.6.0+cu126", "12.6").expect("cu126 rows");
        assert_eq!(release, "2.7");
        assert!(!arches.iter().any(|a| a.starts_with("12.0")));
        assert!(runs_on(&arches, "8.6") && runs_on(&arches, "8.9"));
        assert!(!runs_on(&arches, "12.0"));
        assert!(runs_on(&["9.0+PTX".to_string()], "12.0"));
        assert_eq!(compute_capability("NVIDIA H100 80GB HBM3"), Some("9.0"));
        assert_eq!(
            compute_capability("NVIDIA GeForce RTX 4080 Laptop GPU"),
            Some("8.9")
        );
        assert_eq!(compute_capability("Tesla V100-PCIE-16GB"), Some("7.0"));
        assert_eq!(
            compute_capability("NVIDIA GeForce RTX 5090 D"),
            Some("12.0")
        );
        assert_eq!(compute_capability("no such card"), None);
    }

    #[test]
    fn the_pins_read_from_each_release_wheel() {
        assert_eq!(
            torch_nccl_pin("2.2.0"),
            Some(("nvidia-nccl-cu12", "2.19.3"))
        );
        assert_eq!(
            torch_nccl_pin("2.11.0+cu130"),
            Some(("nvidia-nccl-cu13", "2.28.9"))
        );
        // 1.13 links its NCCL in; a release the table lacks has no pin.
        assert_eq!(torch_nccl_pin("1.13.1"), None);
        assert_eq!(torch_nccl_pin("2.99.0"), None);
        let mut last: Option<Vec<u64>> = None;
        for r in rows(TORCH_PINNED_LIBRARIES) {
            assert_eq!(r.len(), 8, "{r:?}");
            let torch = version::parse(r[0]).expect("a release");
            assert!(
                last.as_ref()
                    .is_none_or(|l| version::compare(l, &torch).is_lt()),
                "releases ascend once each: {r:?}"
            );
            last = Some(torch);
            assert!(r[1].starts_with(&format!("torch-{}", r[0])), "{r:?}");
            for (package, v) in [(r[2], r[3]), (r[4], r[5])] {
                if package == "-" {
                    assert_eq!(v, "-", "{r:?}");
                    continue;
                }
                assert!(
                    package.starts_with("nvidia-cudnn-cu") || package.starts_with("nvidia-nccl-cu"),
                    "{r:?}"
                );
                assert!(version::parse(v).is_some(), "{r:?}");
            }
            assert!(r[6].starts_with("https://files.pythonhosted.org/"), "{r:?}");
            assert!(
                r[7].len() == 64 && r[7].bytes().all(|b| b.is_ascii_hexdigit()),
                "{r:?}"
            );
        }
    }

    #[test]
    fn every_row_parses() {
        for m in driver_minimums() {
            assert!(version::parse(m.linux).is_some(), "{m:?}");
        }
        for r in rows(TORCH_CUDA_ARCHES).filter(|r| !r[2].contains(' ')) {
            for a in r[2].split(';') {
                assert!(
                    version::parse(a.trim_end_matches("+PTX")).is_some(),
                    "{r:?}"
                );
            }
        }
        for r in rows(GPU_COMPUTE_CAPABILITY) {
            assert_eq!(r.len(), 2, "{r:?}");
            assert!(version::parse(r[0]).is_some(), "{r:?}");
        }
    }
}
