//! `cargo xtask gen-cuda-errors [--check] [--header PATH]`: regenerates
//! `crates/errata-model/src/cuda_errors/table.rs` from CUDA's own `driver_types.h`.
//!
//! The header comes from NVIDIA's `nvidia-cuda-runtime` wheel on PyPI, pinned to one
//! exact version and checked against its sha256. The wheel is fetched with
//! `python3 -m pip download` into a cache directory (`$ERRATA_CACHE_DIR/wheels`, or
//! `<repo>/.errata-cache/wheels`) and the header is read out of it with Python's
//! `zipfile`, so no zip or HTTP crate is needed. `--header PATH` uses a local header
//! instead (offline use, other CUDA versions, tests).
//!
//! `--check` regenerates the table in memory and fails when the committed file differs.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};

use crate::c_header::{EnumName, Enumerator, parse_enum};
use crate::generated::{first_difference, rust_string, rustfmt};
use crate::wheel::{self, PinnedWheel};

/// NVIDIA's `nvidia-cuda-runtime` wheel, which ships the runtime's and the driver's
/// headers (`driver_types.h`, `cuda.h`). Its version is the CUDA version the compile
/// tier's nvcc and runtime wheels are pinned to (one constant, so the table and the
/// library that prints the errors agree). When it changes, update the file name and
/// sha256 and re-run `cargo xtask gen-cuda-errors` and `gen-cu-results`.
pub const RUNTIME_WHEEL: PinnedWheel = PinnedWheel {
    package: "nvidia-cuda-runtime",
    version: errata_snippets::toolchain::CUDA_WHEEL_VERSION,
    platform: "manylinux2014_x86_64",
    file: "nvidia_cuda_runtime-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl",
    sha256: "df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d",
};
/// Where `driver_types.h` lies inside the wheel.
const HEADER_IN_WHEEL: &str = "nvidia/cu13/include/driver_types.h";
/// The generated file, relative to the repository root.
const TABLE_PATH: &str = "crates/errata-model/src/cuda_errors/table.rs";

const USAGE: &str = "\
usage: cargo xtask gen-cuda-errors [--check] [--header PATH] [--label TEXT]

Regenerates crates/errata-model/src/cuda_errors/table.rs from CUDA's driver_types.h.

  --check          regenerate in memory; fail if the committed table differs
  --header PATH    read this driver_types.h instead of downloading the pinned wheel
  --label TEXT     the CUDA_HEADER_SOURCE text to record (default: the wheel and
                   path, or `local header <PATH>` with --header)

The header is cached in $ERRATA_CACHE_DIR/headers (default <repo>/.errata-cache/headers).";

struct Options {
    check: bool,
    header: Option<PathBuf>,
    label: Option<String>,
}

/// Entry point of `cargo xtask gen-cuda-errors`.
pub fn run(args: &[String]) -> Result<()> {
    let Some(opts) = parse_args(args)? else {
        println!("{USAGE}");
        return Ok(());
    };
    let root = crate::repo_root();

    let (header_text, label) = match &opts.header {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("cannot read header {}", path.display()))?;
            let label = format!("local header {}", path.display());
            (text, label)
        }
        None => {
            let text = wheel::header(&root, &RUNTIME_WHEEL, HEADER_IN_WHEEL)?;
            (text, RUNTIME_WHEEL.label(HEADER_IN_WHEEL))
        }
    };
    let label = opts.label.unwrap_or(label);

    let enumerators =
        parse_enum(&header_text, EnumName::Tag("cudaError")).context("parsing enum cudaError")?;
    let source = rustfmt(&render_table(&label, &enumerators)?)?;
    let table = root.join(TABLE_PATH);

    if opts.check {
        let committed = std::fs::read_to_string(&table)
            .with_context(|| format!("cannot read {}", table.display()))?;
        if let Some(difference) = first_difference(&committed, &source) {
            bail!(
                "{TABLE_PATH} is stale: it differs from what `cargo xtask gen-cuda-errors` \
                 generates from {label}\n{difference}\n\
                 run `cargo xtask gen-cuda-errors` and commit the result"
            );
        }
        println!(
            "{TABLE_PATH} is up to date ({} enumerators from {label})",
            enumerators.len()
        );
    } else {
        std::fs::write(&table, &source)
            .with_context(|| format!("cannot write {}", table.display()))?;
        println!(
            "wrote {TABLE_PATH} ({} enumerators from {label})",
            enumerators.len()
        );
    }
    Ok(())
}

/// `Ok(None)` means help was asked for.
fn parse_args(args: &[String]) -> Result<Option<Options>> {
    let mut opts = Options {
        check: false,
        header: None,
        label: None,
    };
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--check" => opts.check = true,
            "--header" => {
                let path = it.next().context("--header needs a PATH")?;
                opts.header = Some(PathBuf::from(path));
            }
            "--label" => {
                let text = it.next().context("--label needs a TEXT")?;
                opts.label = Some(text.clone());
            }
            "-h" | "--help" => return Ok(None),
            other => bail!("unknown argument `{other}`\n\n{USAGE}"),
        }
    }
    Ok(Some(opts))
}

/// The Rust source of `table.rs`, before rustfmt.
fn render_table(label: &str, enumerators: &[Enumerator]) -> Result<String> {
    let mut s = String::new();
    writeln!(
        s,
        "// @generated by `cargo xtask gen-cuda-errors`. Do not edit."
    )?;
    writeln!(s, "use super::CudaError;")?;
    writeln!(s)?;
    writeln!(s, "/// Where this table was generated from.")?;
    writeln!(
        s,
        "pub const CUDA_HEADER_SOURCE: &str = {};",
        rust_string(label)
    )?;
    writeln!(s)?;
    writeln!(s, "/// Every `cudaError_t` enumerator, in header order.")?;
    writeln!(s, "pub static CUDA_ERRORS: &[CudaError] = &[")?;
    for e in enumerators {
        writeln!(
            s,
            "    CudaError {{ name: {}, code: {}, description: {} }},",
            rust_string(&e.name),
            e.code,
            rust_string(&e.description)
        )?;
    }
    writeln!(s, "];")?;
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"
/** A different enum that must be ignored. */
enum __device_builtin__ cudaOther { cudaOtherA = 5 };

/**
 * CUDA error types
 */
enum __device_builtin__ cudaError
{
    /**
     * The API call returned with no errors. In the case of query calls, this
     * also means that the operation being queried is complete (see
     * ::cudaEventQuery() and ::cudaStreamQuery()).
     */
    cudaSuccess                           =      0,

    /**
     * \deprecated
     * This error return is deprecated as of CUDA 5.0. It is no longer an error.
     */
     cudaErrorOld       =    0x8,
    /**
     * Leaves the "quoted" state (i.e. the \\ one) in
     * \ref CUDART_DRIVER "Interactions with the Driver API". Then more.
     */
    cudaErrorNext,
    cudaErrorTrailing = 700, /**< Has a trailing doc comment. */
    // An ordinary comment is not documentation.
    cudaErrorUnknown                      =    999

    /**
     * Any unhandled CUDA driver error is added to this value
     */
    , cudaErrorApiFailureBase               =  10000
};
typedef __device_builtin__ enum cudaError cudaError_t;
"#;

    fn parse_cuda_error_enum(header: &str) -> Result<Vec<Enumerator>> {
        parse_enum(header, EnumName::Tag("cudaError"))
    }

    fn parsed() -> Vec<Enumerator> {
        match parse_cuda_error_enum(HEADER) {
            Ok(e) => e,
            Err(err) => panic!("fixture does not parse: {err:#}"),
        }
    }

    #[test]
    fn parses_names_values_and_order() {
        let all = parsed();
        let got: Vec<(&str, i64)> = all.iter().map(|e| (e.name.as_str(), e.code)).collect();
        assert_eq!(
            got,
            [
                ("cudaSuccess", 0),
                ("cudaErrorOld", 8),
                ("cudaErrorNext", 9),
                ("cudaErrorTrailing", 700),
                ("cudaErrorUnknown", 999),
                ("cudaErrorApiFailureBase", 10000),
            ]
        );
    }

    #[test]
    fn descriptions_are_first_sentences_without_markup() {
        let d: Vec<String> = parsed().into_iter().map(|e| e.description).collect();
        assert_eq!(d[0], "The API call returned with no errors.");
        assert_eq!(d[1], "This error return is deprecated as of CUDA 5.0.");
        assert_eq!(
            d[2],
            "Leaves the \"quoted\" state (i.e. the \\\\ one) in Interactions with the Driver API."
        );
        assert_eq!(d[3], "Has a trailing doc comment.");
        assert_eq!(d[4], "");
        assert_eq!(
            d[5],
            "Any unhandled CUDA driver error is added to this value"
        );
    }

    #[test]
    fn rendered_strings_are_escaped() {
        assert_eq!(rust_string(r#"a "b" \c"#), r#""a \"b\" \\c""#);
        assert_eq!(rust_string("tab\there"), r#""tab\u{9}here""#);
    }

    #[test]
    fn rejects_what_it_cannot_evaluate() {
        for bad in [
            "int x;",
            "enum cudaError { a = 1 ",
            "enum cudaError { a = b + 1 };",
            "enum cudaError { a = 1, a = 2 };",
            "enum cudaError {\n#if X\n a = 1\n#endif\n};",
            "enum cudaError { };",
            "enum cudaError { a = 1 }; enum cudaError { b = 2 };",
            "enum cudaError { a = 99999999999 };",
            "enum cudaError { /** unterminated",
        ] {
            assert!(parse_cuda_error_enum(bad).is_err(), "accepted {bad:?}");
        }
    }

    #[test]
    fn rendered_table_is_valid_and_formatted() {
        let source = render_table("test", &parsed()).map(|s| rustfmt(&s));
        let source = match source {
            Ok(Ok(source)) => source,
            Ok(Err(err)) | Err(err) => panic!("cannot render the table: {err:#}"),
        };
        assert!(
            source.starts_with("// @generated by `cargo xtask gen-cuda-errors`. Do not edit.\n")
        );
        assert!(source.contains("name: \"cudaErrorApiFailureBase\",\n        code: 10000,"));
        assert_eq!(first_difference(&source, &source), None);
        let other = source.replacen("10000", "10001", 1);
        let diff = first_difference(&source, &other).unwrap_or_default();
        assert!(diff.contains("code: 10000"), "{diff}");
    }

    #[test]
    fn pinned_wheel_is_consistent() {
        let w = RUNTIME_WHEEL;
        assert!(
            w.file
                .starts_with(&format!("nvidia_cuda_runtime-{}-", w.version))
        );
        assert!(w.file.contains(w.platform));
        assert_eq!(w.sha256.len(), 64);
        assert!(first_difference("a\n", "a\r\n").is_some());
    }

    #[test]
    fn arguments() {
        let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(parse_args(&args(&["--bogus"])).is_err());
        assert!(parse_args(&args(&["--header"])).is_err());
        assert!(matches!(parse_args(&args(&["--help"])), Ok(None)));
        let Ok(Some(opts)) = parse_args(&args(&["--check", "--header", "h.h"])) else {
            panic!("valid arguments rejected");
        };
        assert!(opts.check);
        assert_eq!(opts.header, Some(PathBuf::from("h.h")));
    }
}
