//! `cargo xtask gen-cublas-status | gen-cudnn-status | gen-nccl-results | gen-cu-results |
//! gen-cufft-results | gen-cusolver-status | gen-cusparse-status | gen-curand-status |
//! gen-nvml-returns [--check] [--header PATH]`: regenerate the status tables of cuBLAS
//! (`cublasStatus_t`), cuDNN (`cudnnStatus_t`), NCCL (`ncclResult_t`), the driver API
//! (`CUresult`), cuFFT (`cufftResult`), cuSOLVER (`cusolverStatus_t`), cuSPARSE
//! (`cusparseStatus_t`), cuRAND (`curandStatus_t`) and NVML (`nvmlReturn_t`) in
//! `crates/errata-model/src/status_codes/` from the vendors' own headers.
//!
//! Each header comes from NVIDIA's pip wheel of that library, pinned to one file and its
//! sha256 (see [`crate::wheel`]); `--header PATH` reads a local header instead (offline
//! use, tests). `--check` regenerates in memory and fails when the committed table
//! differs: CI runs it, so a table cannot drift from its pinned header.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::c_header::{EnumName, Enumerator, parse_enum};
use crate::generated::{rust_string, rustfmt, write_or_check};
use crate::wheel::{self, PinnedWheel};

/// One generated table: which enum of which header, and where it is written.
struct Table {
    /// The xtask command that writes it.
    command: &'static str,
    /// The C type, e.g. `cublasStatus_t`.
    type_name: &'static str,
    /// How the header defines it.
    which: EnumName<'static>,
    /// The pinned wheel the header comes from.
    wheel: PinnedWheel,
    /// The header's path inside the wheel.
    member: &'static str,
    /// The generated module: `crates/errata-model/src/status_codes/<module>.rs`.
    module: &'static str,
}

const CUBLAS: Table = Table {
    command: "gen-cublas-status",
    type_name: "cublasStatus_t",
    which: EnumName::Typedef("cublasStatus_t"),
    // The cuBLAS of CUDA 13.5 (`cuda-toolkit==13.5.0` requires nvidia-cublas 13.10.0.20).
    wheel: PinnedWheel {
        package: "nvidia-cublas",
        version: "13.10.0.20",
        platform: "manylinux_2_5_x86_64",
        file: "nvidia_cublas-13.10.0.20-py3-none-manylinux1_x86_64.manylinux_2_5_x86_64.whl",
        sha256: "dcc6d63884c53d07e267ce7e6feac17b2538cebaafec5db865736c3e28e4dc84",
    },
    member: "nvidia/cu13/include/cublas_api.h",
    module: "cublas",
};

const CUDNN: Table = Table {
    command: "gen-cudnn-status",
    type_name: "cudnnStatus_t",
    which: EnumName::Typedef("cudnnStatus_t"),
    wheel: PinnedWheel {
        package: "nvidia-cudnn-cu13",
        version: "9.28.1.4",
        platform: "manylinux_2_27_x86_64",
        file: "nvidia_cudnn_cu13-9.28.1.4-py3-none-manylinux_2_27_x86_64.whl",
        sha256: "a54f205b1db1f2895d99f398754db1369816f0569dd459731f925635cf7b65ec",
    },
    // cuDNN 9 defines its status codes in the graph API's header (cudnn.h includes it).
    member: "nvidia/cudnn/include/cudnn_graph.h",
    module: "cudnn",
};

const NCCL: Table = Table {
    command: "gen-nccl-results",
    type_name: "ncclResult_t",
    which: EnumName::Typedef("ncclResult_t"),
    wheel: PinnedWheel {
        package: "nvidia-nccl-cu13",
        version: "2.32.3",
        platform: "manylinux_2_27_x86_64",
        file: "nvidia_nccl_cu13-2.32.3-py3-none-manylinux_2_27_x86_64.whl",
        sha256: "1459723080ac889d73a26edfa3e04383a7928ab31ac8f0ec43b3ea9548b04ff3",
    },
    member: "nvidia/nccl/include/nccl.h",
    module: "nccl",
};

const CU_RESULT: Table = Table {
    command: "gen-cu-results",
    type_name: "CUresult",
    which: EnumName::Tag("cudaError_enum"),
    // The driver API's header ships in the runtime wheel, beside driver_types.h.
    wheel: crate::gen_cuda_errors::RUNTIME_WHEEL,
    member: "nvidia/cu13/include/cuda.h",
    module: "cu_result",
};

// The math libraries and NVML of CUDA 13.5: the versions `cuda-toolkit==13.5.0` requires
// (its `all` extra), each header read from that wheel.

const CUFFT: Table = Table {
    command: "gen-cufft-results",
    type_name: "cufftResult",
    which: EnumName::Typedef("cufftResult"),
    wheel: PinnedWheel {
        package: "nvidia-cufft",
        version: "12.5.0.14",
        platform: "manylinux_2_17_x86_64",
        file: "nvidia_cufft-12.5.0.14-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        sha256: "b8be26837a5abad2b5b74f3e92dd29f622a42934b355be0961a48712cbba23ad",
    },
    member: "nvidia/cu13/include/cufft.h",
    module: "cufft",
};

const CUSOLVER: Table = Table {
    command: "gen-cusolver-status",
    type_name: "cusolverStatus_t",
    which: EnumName::Typedef("cusolverStatus_t"),
    wheel: PinnedWheel {
        package: "nvidia-cusolver",
        version: "12.4.1.2",
        platform: "manylinux_2_27_x86_64",
        file: "nvidia_cusolver-12.4.1.2-py3-none-manylinux_2_27_x86_64.whl",
        sha256: "b3b8e02fd2f2df869369af075dc3a179d43f6f7b85e94632a7dce556697be044",
    },
    member: "nvidia/cu13/include/cusolver_common.h",
    module: "cusolver",
};

const CUSPARSE: Table = Table {
    command: "gen-cusparse-status",
    type_name: "cusparseStatus_t",
    which: EnumName::Typedef("cusparseStatus_t"),
    wheel: PinnedWheel {
        package: "nvidia-cusparse",
        version: "12.9.4.2",
        platform: "manylinux_2_17_x86_64",
        file: "nvidia_cusparse-12.9.4.2-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        sha256: "072667e58c851a318738f5527a12eb225cbf058803f2ea451c722d8cf8edddec",
    },
    member: "nvidia/cu13/include/cusparse.h",
    module: "cusparse",
};

const CURAND: Table = Table {
    command: "gen-curand-status",
    type_name: "curandStatus_t",
    // `enum curandStatus { … }; typedef enum curandStatus curandStatus_t;`
    which: EnumName::Tag("curandStatus"),
    wheel: PinnedWheel {
        package: "nvidia-curand",
        version: "10.4.5.25",
        platform: "manylinux_2_27_x86_64",
        file: "nvidia_curand-10.4.5.25-py3-none-manylinux_2_27_x86_64.whl",
        sha256: "22bb226a857e5888fe6b54ae465fc4371296bcff13a35f79e19691bcf454f529",
    },
    member: "nvidia/cu13/include/curand.h",
    module: "curand",
};

const NVML: Table = Table {
    command: "gen-nvml-returns",
    type_name: "nvmlReturn_t",
    which: EnumName::Typedef("nvmlReturn_t"),
    wheel: PinnedWheel {
        package: "nvidia-nvml-dev",
        version: "13.5.37",
        platform: "manylinux_2_17_x86_64",
        file: "nvidia_nvml_dev-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
        sha256: "7394fcbefa9ba537e8238cbb1caa4cd2db6bbfbff208d217a8a884947113ae6d",
    },
    member: "nvidia/cu13/include/nvml.h",
    module: "nvml",
};

/// `cargo xtask gen-cufft-results`.
pub fn run_cufft(args: &[String]) -> Result<()> {
    run(&CUFFT, args)
}

/// `cargo xtask gen-cusolver-status`.
pub fn run_cusolver(args: &[String]) -> Result<()> {
    run(&CUSOLVER, args)
}

/// `cargo xtask gen-cusparse-status`.
pub fn run_cusparse(args: &[String]) -> Result<()> {
    run(&CUSPARSE, args)
}

/// `cargo xtask gen-curand-status`.
pub fn run_curand(args: &[String]) -> Result<()> {
    run(&CURAND, args)
}

/// `cargo xtask gen-nvml-returns`.
pub fn run_nvml(args: &[String]) -> Result<()> {
    run(&NVML, args)
}

/// `cargo xtask gen-cublas-status`.
pub fn run_cublas(args: &[String]) -> Result<()> {
    run(&CUBLAS, args)
}

/// `cargo xtask gen-cudnn-status`.
pub fn run_cudnn(args: &[String]) -> Result<()> {
    run(&CUDNN, args)
}

/// `cargo xtask gen-nccl-results`.
pub fn run_nccl(args: &[String]) -> Result<()> {
    run(&NCCL, args)
}

/// `cargo xtask gen-cu-results`.
pub fn run_cu_result(args: &[String]) -> Result<()> {
    run(&CU_RESULT, args)
}

fn usage(t: &Table) -> String {
    format!(
        "usage: cargo xtask {cmd} [--check] [--header PATH]\n\n\
         Regenerates crates/errata-model/src/status_codes/{module}.rs ({ty}) from {member}\n\
         in {pkg}=={ver}.\n\n  \
         --check        regenerate in memory; fail if the committed table differs\n  \
         --header PATH  read this header instead of the pinned wheel's",
        cmd = t.command,
        module = t.module,
        ty = t.type_name,
        member = t.member,
        pkg = t.wheel.package,
        ver = t.wheel.version,
    )
}

struct Options {
    check: bool,
    header: Option<PathBuf>,
}

/// `Ok(None)`: help was asked for.
fn parse_args(t: &Table, args: &[String]) -> Result<Option<Options>> {
    let mut opts = Options {
        check: false,
        header: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--check" => opts.check = true,
            "--header" => {
                let path = it.next().context("--header needs a PATH")?;
                opts.header = Some(PathBuf::from(path));
            }
            "-h" | "--help" => return Ok(None),
            other => bail!("unknown argument `{other}`\n\n{}", usage(t)),
        }
    }
    Ok(Some(opts))
}

fn run(t: &Table, args: &[String]) -> Result<()> {
    let Some(opts) = parse_args(t, args)? else {
        println!("{}", usage(t));
        return Ok(());
    };
    let root = crate::repo_root();
    let (text, label) = match &opts.header {
        Some(path) => (
            std::fs::read_to_string(path)
                .with_context(|| format!("cannot read header {}", path.display()))?,
            format!("local header {}", path.display()),
        ),
        None => (
            wheel::header(&root, &t.wheel, t.member)?,
            t.wheel.label(t.member),
        ),
    };
    let codes = parse_enum(&text, t.which)
        .with_context(|| format!("parsing {} in {label}", t.type_name))?;
    let source = rustfmt(&render(t, &label, &codes)?)?;
    let rel = format!("crates/errata-model/src/status_codes/{}.rs", t.module);
    write_or_check(
        &rel,
        &source,
        opts.check,
        t.command,
        &format!("{} values from {label}", codes.len()),
    )
}

/// The Rust source of one table, before rustfmt.
fn render(t: &Table, label: &str, codes: &[Enumerator]) -> Result<String> {
    let mut s = String::new();
    writeln!(
        s,
        "// @generated by `cargo xtask {}`. Do not edit.",
        t.command
    )?;
    writeln!(s, "use super::{{StatusCode, StatusTable}};")?;
    writeln!(s)?;
    writeln!(s, "/// Every `{}` value, in header order.", t.type_name)?;
    writeln!(s, "pub static TABLE: StatusTable = StatusTable {{")?;
    writeln!(s, "    type_name: {},", rust_string(t.type_name))?;
    writeln!(s, "    source: {},", rust_string(label))?;
    writeln!(s, "    codes: &[")?;
    for c in codes {
        writeln!(
            s,
            "        StatusCode {{ name: {}, code: {}, description: {} }},",
            rust_string(&c.name),
            c.code,
            rust_string(&c.description)
        )?;
    }
    writeln!(s, "    ],")?;
    writeln!(s, "}};")?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doxygen_line_comments_describe_items() {
        // The shapes of curand.h (`///<`) and nvml.h (`//!<`); a `////` rule is not a doc.
        let header = "////////////////\n\
            enum curandStatus {\n\
                CURAND_STATUS_SUCCESS = 0, ///< No errors\n\
                /// Generator not initialized\n\
                CURAND_STATUS_NOT_INITIALIZED = 101,\n\
            };\n\
            typedef enum nvmlReturn_enum {\n\
                NVML_SUCCESS = 0,  //!< The operation was successful\n\
                // an ordinary comment\n\
                NVML_ERROR_UNINITIALIZED = 1,\n\
            } nvmlReturn_t;\n";
        let got = |which| {
            parse_enum(header, which)
                .unwrap_or_default()
                .into_iter()
                .map(|e| (e.name, e.description))
                .collect::<Vec<_>>()
        };
        let s = |a: &str, b: &str| (a.to_string(), b.to_string());
        assert_eq!(
            got(EnumName::Tag("curandStatus")),
            [
                s("CURAND_STATUS_SUCCESS", "No errors"),
                s("CURAND_STATUS_NOT_INITIALIZED", "Generator not initialized")
            ]
        );
        assert_eq!(
            got(EnumName::Typedef("nvmlReturn_t")),
            [
                s("NVML_SUCCESS", "The operation was successful"),
                s("NVML_ERROR_UNINITIALIZED", "")
            ]
        );
    }

    #[test]
    fn typedef_enums_aliases_and_attribute_macros() {
        // The shapes of cublas_api.h, nccl.h and cuDNN 9's cudnn_graph.h.
        let header = r#"
typedef enum {
  CUBLAS_STATUS_SUCCESS = 0,
  CUBLAS_STATUS_NOT_INITIALIZED = 1,
  CUBLAS_STATUS_LICENSE_ERROR = 16
} cublasStatus_t;
typedef enum {
    CUDNN_STATUS_SUCCESS = 0, /**< Operation completed successfully. @since cuDNN 9.0.0 */
    CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH = 3007, /**< GPU architecture mismatch. @since cuDNN 9.0.0 */
    CUDNN_STATUS_INVALID_VALUE CUDNN_DEPRECATED_ENUM = 2001 /* please transition */, /**< @deprecated Use CUDNN_STATUS_BAD_PARAM. */
    CUDNN_STATUS_ARCH_MISMATCH CUDNN_DEPRECATED_ENUM = CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH,
} cudnnStatus_t;
"#;
        let cublas = parse_enum(header, EnumName::Typedef("cublasStatus_t")).unwrap_or_default();
        let got: Vec<(&str, i64)> = cublas.iter().map(|e| (e.name.as_str(), e.code)).collect();
        assert_eq!(
            got,
            [
                ("CUBLAS_STATUS_SUCCESS", 0),
                ("CUBLAS_STATUS_NOT_INITIALIZED", 1),
                ("CUBLAS_STATUS_LICENSE_ERROR", 16)
            ]
        );
        let cudnn = parse_enum(header, EnumName::Typedef("cudnnStatus_t")).unwrap_or_default();
        let got: Vec<(&str, i64, &str)> = cudnn
            .iter()
            .map(|e| (e.name.as_str(), e.code, e.description.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "CUDNN_STATUS_SUCCESS",
                    0,
                    "Operation completed successfully."
                ),
                (
                    "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH",
                    3007,
                    "GPU architecture mismatch."
                ),
                (
                    "CUDNN_STATUS_INVALID_VALUE",
                    2001,
                    "Use CUDNN_STATUS_BAD_PARAM."
                ),
                ("CUDNN_STATUS_ARCH_MISMATCH", 3007, ""),
            ]
        );
        // A value naming an enumerator that is not (yet) defined is refused.
        let bad = "typedef enum { A = B, B = 1 } t;";
        assert!(parse_enum(bad, EnumName::Typedef("t")).is_err());
        assert!(parse_enum(header, EnumName::Typedef("ncclResult_t")).is_err());
    }

    #[test]
    fn pinned_wheels_are_consistent() {
        for t in [
            &CUBLAS, &CUDNN, &NCCL, &CU_RESULT, &CUFFT, &CUSOLVER, &CUSPARSE, &CURAND, &NVML,
        ] {
            let w = t.wheel;
            let stem = w.package.replace('-', "_");
            assert!(
                w.file.starts_with(&format!("{stem}-{}-", w.version)),
                "{}",
                w.file
            );
            assert!(w.file.contains(w.platform), "{}", w.file);
            assert_eq!(w.sha256.len(), 64);
            assert!(usage(t).contains(t.command));
        }
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(parse_args(&CUBLAS, &args(&["--bogus"])).is_err());
        assert!(matches!(parse_args(&CUBLAS, &args(&["-h"])), Ok(None)));
    }
}
