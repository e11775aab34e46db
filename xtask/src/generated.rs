//! Generated Rust sources: string literals, rustfmt, and the `--check` comparison of a
//! committed file with what a generator writes now.

use std::fmt::Write as _;
use std::io::Write as _;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail, ensure};

/// Describes the first line where `committed` and `generated` differ, if they do.
pub fn first_difference(committed: &str, generated: &str) -> Option<String> {
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

/// A Rust string literal (with quotes) for `s`.
pub fn rust_string(s: &str) -> String {
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

/// Formats Rust source with `rustfmt --edition 2024` (stdin to stdout), so that the
/// generated file passes `cargo fmt --check`.
pub fn rustfmt(source: &str) -> Result<String> {
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

/// Writes `source` to `rel` (relative to the repository root), or with `check` compares it
/// with the committed file and fails when they differ, naming `command` to re-run.
/// `what` says what the file holds (`139 enumerators from <header>`), for the message.
pub fn write_or_check(
    rel: &str,
    source: &str,
    check: bool,
    command: &str,
    what: &str,
) -> Result<()> {
    let path = crate::repo_root().join(rel);
    if check {
        let committed = std::fs::read_to_string(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        if let Some(difference) = first_difference(&committed, source) {
            bail!(
                "{rel} is stale: it differs from what `cargo xtask {command}` generates \
                 ({what})\n{difference}\nrun `cargo xtask {command}` and commit the result"
            );
        }
        println!("{rel} is up to date ({what})");
    } else {
        std::fs::write(&path, source)
            .with_context(|| format!("cannot write {}", path.display()))?;
        println!("wrote {rel} ({what})");
    }
    Ok(())
}
