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
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail, ensure};

/// The PyPI distribution that ships the CUDA runtime headers.
const WHEEL_PACKAGE: &str = "nvidia-cuda-runtime";
/// The pinned version of [`WHEEL_PACKAGE`]: the CUDA version the compile tier's nvcc
/// and runtime wheels are pinned to (one constant, so the table and the library that
/// prints the errors agree). When it changes, update [`WHEEL_FILE`] and
/// [`WHEEL_SHA256`] and re-run `cargo xtask gen-cuda-errors`.
const WHEEL_VERSION: &str = errata_snippets::toolchain::CUDA_WHEEL_VERSION;
/// The wheel is platform-specific only because of the shared libraries in it; the
/// headers are the same everywhere, so one platform is pinned for reproducibility.
const WHEEL_PLATFORM: &str = "manylinux2014_x86_64";
/// The wheel's file name as published on PyPI.
const WHEEL_FILE: &str =
    "nvidia_cuda_runtime-13.5.37-py3-none-manylinux2014_x86_64.manylinux_2_17_x86_64.whl";
/// sha256 of [`WHEEL_FILE`].
const WHEEL_SHA256: &str = "df2b79a8852f10d1fef8c848489c49eebb5754051bf870202a862831412b179d";
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

The wheel is cached in $ERRATA_CACHE_DIR/wheels (default <repo>/.errata-cache/wheels).";

/// One enumerator of `enum cudaError` as read from the header.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Enumerator {
    name: String,
    code: i64,
    description: String,
}

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
            let wheel = fetch_wheel(&cache_dir(&root))?;
            let text = read_from_zip(&wheel, HEADER_IN_WHEEL)?;
            let label = format!("{WHEEL_PACKAGE} {WHEEL_VERSION} ({HEADER_IN_WHEEL})");
            (text, label)
        }
    };
    let label = opts.label.unwrap_or(label);

    let enumerators = parse_cuda_error_enum(&header_text).context("parsing enum cudaError")?;
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

/// Describes the first line where `committed` and `generated` differ, if they do.
fn first_difference(committed: &str, generated: &str) -> Option<String> {
    if committed == generated {
        return None;
    }
    let mut old = committed.lines();
    let mut new = generated.lines();
    let mut line = 1;
    loop {
        match (old.next(), new.next()) {
            (Some(a), Some(b)) if a == b => line += 1,
            (None, None) => {
                return Some("the files differ only in line endings or trailing newline".into());
            }
            (a, b) => {
                let show = |l: Option<&str>| {
                    l.map_or("<end of file>".to_owned(), |l| format!("`{}`", l.trim()))
                };
                return Some(format!(
                    "first difference at line {line}: committed {}, generated {}",
                    show(a),
                    show(b)
                ));
            }
        }
    }
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

fn cache_dir(root: &Path) -> PathBuf {
    match std::env::var_os("ERRATA_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join("wheels"),
        _ => root.join(".errata-cache").join("wheels"),
    }
}

/// Returns the path of the pinned wheel in `cache`, downloading it when it is missing,
/// and verifies its sha256 either way.
fn fetch_wheel(cache: &Path) -> Result<PathBuf> {
    let wheel = cache.join(WHEEL_FILE);
    if !wheel.is_file() {
        std::fs::create_dir_all(cache)
            .with_context(|| format!("cannot create cache directory {}", cache.display()))?;
        eprintln!(
            "downloading {WHEEL_PACKAGE}=={WHEEL_VERSION} into {}",
            cache.display()
        );
        let status = Command::new("python3")
            .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
            .args(["--platform", WHEEL_PLATFORM, "--disable-pip-version-check"])
            .arg(format!("{WHEEL_PACKAGE}=={WHEEL_VERSION}"))
            .arg("-d")
            .arg(cache)
            .status()
            .context("cannot run `python3 -m pip` (is Python 3 with pip installed?)")?;
        ensure!(
            status.success(),
            "`python3 -m pip download {WHEEL_PACKAGE}=={WHEEL_VERSION}` failed ({status}); \
             to work offline pass --header PATH/TO/driver_types.h"
        );
        ensure!(
            wheel.is_file(),
            "pip did not leave {WHEEL_FILE} in {}",
            cache.display()
        );
    }
    let digest = sha256_file(&wheel)?;
    ensure!(
        digest == WHEEL_SHA256,
        "{} has sha256 {digest}, expected {WHEEL_SHA256}; delete it to download it again",
        wheel.display()
    );
    Ok(wheel)
}

/// Runs a short Python program and returns its standard output.
fn python(program: &str, args: &[&std::ffi::OsStr]) -> Result<Vec<u8>> {
    let output = Command::new("python3")
        .arg("-c")
        .arg(program)
        .args(args)
        .output()
        .context("cannot run `python3`")?;
    ensure!(
        output.status.success(),
        "python3 failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(output.stdout)
}

fn sha256_file(path: &Path) -> Result<String> {
    const PROGRAM: &str = "import hashlib, sys\n\
        print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())";
    let out = python(PROGRAM, &[path.as_os_str()])
        .with_context(|| format!("hashing {}", path.display()))?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// Reads one member of a zip archive (a wheel) as UTF-8 text.
fn read_from_zip(archive: &Path, member: &str) -> Result<String> {
    const PROGRAM: &str = "import sys, zipfile\n\
        sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))";
    let bytes = python(PROGRAM, &[archive.as_os_str(), member.as_ref()])
        .with_context(|| format!("reading {member} from {}", archive.display()))?;
    String::from_utf8(bytes).with_context(|| format!("{member} is not UTF-8"))
}

/// A lexical token of the part of C that an enum body uses.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// `/** … */` before an item: the raw text between the delimiters.
    Doc(String),
    /// `/**< … */` after an item.
    TrailingDoc(String),
    Ident(String),
    Number(String),
    Punct(char),
}

/// Tokenises C source, dropping whitespace and ordinary comments. Preprocessor
/// directives become `Punct('#')` followed by their tokens, so that a directive inside
/// the enum is noticed (and refused) rather than silently evaluated wrongly.
fn tokenize(src: &str) -> Result<Vec<Token>> {
    let mut tokens = Vec::new();
    let mut rest = src;
    while let Some(c) = rest.chars().next() {
        if c.is_whitespace() {
            rest = &rest[c.len_utf8()..];
        } else if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").context("unterminated /* comment")?;
            let body = &after[..end];
            if let Some(doc) = body.strip_prefix("*<").or_else(|| body.strip_prefix("!<")) {
                tokens.push(Token::TrailingDoc(doc.to_owned()));
            } else if let Some(doc) = body.strip_prefix('*').or_else(|| body.strip_prefix('!')) {
                // `/**/` is an empty ordinary comment, not a doc comment.
                if !body.is_empty() {
                    tokens.push(Token::Doc(doc.to_owned()));
                }
            }
            rest = &after[end + 2..];
        } else if rest.starts_with("//") {
            let end = rest.find('\n').unwrap_or(rest.len());
            rest = &rest[end..];
        } else if c == '"' || c == '\'' {
            // A string or character literal: skip it, honouring escapes.
            let mut end = None;
            let mut escaped = false;
            for (i, ch) in rest.char_indices().skip(1) {
                if escaped {
                    escaped = false;
                } else if ch == '\\' {
                    escaped = true;
                } else if ch == c {
                    end = Some(i + 1);
                    break;
                } else if ch == '\n' {
                    break;
                }
            }
            match end {
                Some(end) => rest = &rest[end..],
                // Not a literal after all (an apostrophe in a `#error` line, say):
                // keep going, it matters only if it is inside the enum.
                None => {
                    tokens.push(Token::Punct(c));
                    rest = &rest[1..];
                }
            }
        } else if c.is_ascii_alphabetic() || c == '_' {
            let end = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            tokens.push(Token::Ident(rest[..end].to_owned()));
            rest = &rest[end..];
        } else if c.is_ascii_digit() {
            let end = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_' || ch == '.'))
                .unwrap_or(rest.len());
            tokens.push(Token::Number(rest[..end].to_owned()));
            rest = &rest[end..];
        } else {
            tokens.push(Token::Punct(c));
            rest = &rest[c.len_utf8()..];
        }
    }
    Ok(tokens)
}

/// Parses a C integer literal (decimal, hex, octal; `u`/`l` suffixes ignored).
fn parse_int(text: &str) -> Option<i64> {
    let digits = text.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(hex, 16).ok()
    } else if digits.len() > 1 && digits.starts_with('0') {
        i64::from_str_radix(&digits[1..], 8).ok()
    } else {
        digits.parse().ok()
    }
}

/// Finds `enum [attributes] cudaError { … }` and returns its enumerators in order.
fn parse_cuda_error_enum(header: &str) -> Result<Vec<Enumerator>> {
    let tokens = tokenize(header)?;
    let is_ident = |t: &Token, s: &str| matches!(t, Token::Ident(i) if i == s);

    // The body starts after `enum <idents…> cudaError {`.
    let mut start = None;
    for (i, t) in tokens.iter().enumerate() {
        if !is_ident(t, "enum") {
            continue;
        }
        let mut j = i + 1;
        while matches!(tokens.get(j), Some(Token::Ident(n)) if n != "cudaError") {
            j += 1;
        }
        if tokens.get(j).is_some_and(|t| is_ident(t, "cudaError"))
            && tokens.get(j + 1) == Some(&Token::Punct('{'))
        {
            ensure!(start.is_none(), "`enum cudaError {{` appears twice");
            start = Some(j + 2);
        }
    }
    let start = start.context("no `enum cudaError { … }` definition in the header")?;

    let mut out: Vec<Enumerator> = Vec::new();
    let mut pending_doc: Option<String> = None;
    let mut next_value: i64 = 0;
    let mut i = start;
    loop {
        let token = tokens
            .get(i)
            .context("the enum body is not closed by `}`")?;
        i += 1;
        match token {
            Token::Punct('}') => break,
            Token::Punct(',') => {}
            Token::Punct('#') => bail!("a preprocessor directive inside the enum is not supported"),
            Token::Doc(text) => pending_doc = Some(text.clone()),
            Token::TrailingDoc(text) => {
                if let Some(last) = out.last_mut()
                    && last.description.is_empty()
                {
                    last.description = first_sentence(text);
                }
            }
            Token::Ident(name) => {
                let code = if tokens.get(i) == Some(&Token::Punct('=')) {
                    let (negative, at) = match tokens.get(i + 1) {
                        Some(Token::Punct('-')) => (true, i + 2),
                        _ => (false, i + 1),
                    };
                    let value = match tokens.get(at) {
                        Some(Token::Number(n)) => {
                            parse_int(n).with_context(|| format!("`{name}`: bad integer `{n}`"))?
                        }
                        other => bail!(
                            "`{name}`: its value is not an integer literal ({other:?}); \
                             expressions are not supported"
                        ),
                    };
                    i = at + 1;
                    ensure!(
                        matches!(
                            tokens.get(i),
                            Some(Token::Punct(',' | '}'))
                                | Some(Token::Doc(_))
                                | Some(Token::TrailingDoc(_))
                        ),
                        "`{name}`: its value is not a single integer literal"
                    );
                    if negative { -value } else { value }
                } else {
                    next_value
                };
                ensure!(
                    !out.iter().any(|e| &e.name == name),
                    "`{name}` appears twice"
                );
                next_value = code + 1;
                let description = pending_doc.take().map(|d| first_sentence(&d));
                out.push(Enumerator {
                    name: name.clone(),
                    code,
                    description: description.unwrap_or_default(),
                });
            }
            other => bail!("unexpected token in the enum body: {other:?}"),
        }
    }
    ensure!(!out.is_empty(), "`enum cudaError` has no enumerators");
    for e in &out {
        ensure!(
            i32::try_from(e.code).is_ok(),
            "`{}` = {} does not fit in an i32",
            e.name,
            e.code
        );
    }
    Ok(out)
}

/// Turns the raw text of a doc comment into plain text: strips the leading `*` of each
/// line, Doxygen markup (`\deprecated`, `\ref target "text"`, `\p x`, `::name`), and
/// normalises whitespace.
fn doc_to_text(raw: &str) -> String {
    let joined = raw
        .lines()
        .map(|line| {
            let line = line.trim();
            line.strip_prefix('*').unwrap_or(line)
        })
        .collect::<Vec<_>>()
        .join(" ");
    let words: Vec<&str> = joined.split_whitespace().collect();
    let mut out: Vec<String> = Vec::new();
    let mut k = 0;
    while k < words.len() {
        let word = words[k];
        k += 1;
        let command = word
            .strip_prefix('\\')
            .or_else(|| word.strip_prefix('@'))
            .filter(|c| !c.is_empty() && c.chars().all(|ch| ch.is_ascii_alphabetic()));
        match command {
            // `\ref target "Link text"` reads as its link text, `\ref target` as target.
            Some("ref") => {
                let Some(target) = words.get(k) else { continue };
                k += 1;
                if words.get(k).is_some_and(|w| w.starts_with('"')) {
                    let mut text = Vec::new();
                    while let Some(w) = words.get(k) {
                        k += 1;
                        text.push(*w);
                        // The opening quote is the first byte of the first word.
                        let rest = if text.len() == 1 { &w[1..] } else { w };
                        if rest.contains('"') {
                            break;
                        }
                    }
                    out.push(text.join(" ").replace('"', ""));
                } else {
                    out.push(strip_scope(target).to_owned());
                }
            }
            // Inline formatting commands: keep the word they format.
            Some("p" | "c" | "a" | "e" | "b" | "em") => {
                if let Some(w) = words.get(k) {
                    k += 1;
                    out.push(strip_scope(w).to_owned());
                }
            }
            // Block markers such as `\deprecated`, `\note`, `\brief`: drop the marker.
            Some(_) => {}
            None => out.push(strip_scope(word).to_owned()),
        }
    }
    out.join(" ")
}

/// `::cudaMalloc()` → `cudaMalloc()` (Doxygen's link marker), also after `(`.
fn strip_scope(word: &str) -> String {
    let lead: String = word.chars().take_while(|c| *c == '(').collect();
    let rest = &word[lead.len()..];
    format!("{lead}{}", rest.strip_prefix("::").unwrap_or(rest))
}

/// The first sentence of a doc comment, as plain text.
fn first_sentence(raw: &str) -> String {
    let text = doc_to_text(raw);
    let bytes = text.as_bytes();
    for (i, _) in text.match_indices('.') {
        let at_end = i + 1 == bytes.len();
        let before_space = bytes.get(i + 1).is_some_and(|b| b.is_ascii_whitespace());
        if !(at_end || before_space) {
            continue;
        }
        let word_start = text[..i].rfind(' ').map_or(0, |s| s + 1);
        let word = text[word_start..i]
            .trim_start_matches(|c: char| !c.is_alphanumeric())
            .to_ascii_lowercase();
        if matches!(
            word.as_str(),
            "e.g" | "i.e" | "etc" | "vs" | "cf" | "approx"
        ) {
            continue;
        }
        return text[..=i].to_owned();
    }
    text
}

/// A Rust string literal (with quotes) for `s`.
fn rust_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
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

/// Formats Rust source with `rustfmt --edition 2024` (stdin to stdout), so that the
/// generated file passes `cargo fmt --check`.
fn rustfmt(source: &str) -> Result<String> {
    let mut child = Command::new("rustfmt")
        .args(["--edition", "2024", "--emit", "stdout"])
        .current_dir(crate::repo_root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("cannot run `rustfmt` (install it with `rustup component add rustfmt`)")?;
    let mut stdin = child.stdin.take().context("rustfmt has no stdin")?;
    // Write from a thread so that a large output cannot deadlock on a full pipe.
    let input = source.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().context("waiting for rustfmt")?;
    match writer.join() {
        Ok(result) => result.context("writing to rustfmt")?,
        Err(_) => bail!("the thread writing to rustfmt panicked"),
    }
    ensure!(
        output.status.success(),
        "rustfmt failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    String::from_utf8(output.stdout).context("rustfmt printed non-UTF-8")
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
        assert!(WHEEL_FILE.starts_with(&format!("nvidia_cuda_runtime-{WHEEL_VERSION}-")));
        assert!(WHEEL_FILE.contains(WHEEL_PLATFORM));
        assert_eq!(WHEEL_SHA256.len(), 64);
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
