//! Reading C enums out of NVIDIA's headers: a small tokenizer for the part of C an enum
//! body uses, enumerator values (literals, or earlier enumerators), and Doxygen doc
//! comments turned into plain first sentences. Shared by the `gen-*` table commands.

use anyhow::{Context, Result, bail, ensure};

/// One enumerator as read from a header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enumerator {
    pub name: String,
    pub code: i64,
    pub description: String,
}

/// Which enum to read: `enum <tag> { … }` or `typedef enum [tag] { … } <name>;`.
#[derive(Debug, Clone, Copy)]
pub enum EnumName<'a> {
    /// `enum [attributes] <tag> {`.
    Tag(&'a str),
    /// `typedef enum [tag] { … } <name>;`.
    Typedef(&'a str),
}

impl std::fmt::Display for EnumName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EnumName::Tag(tag) => write!(f, "enum {tag}"),
            EnumName::Typedef(name) => write!(f, "typedef enum {{ … }} {name}"),
        }
    }
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
            // Doxygen's line forms: `///< …` / `//!< …` after an item (curand.h, nvml.h),
            // `/// …` / `//! …` before one; `////…` rules are ordinary comments.
            let line = &rest[2..end];
            if let Some(doc) = line.strip_prefix("/<").or_else(|| line.strip_prefix("!<")) {
                tokens.push(Token::TrailingDoc(doc.to_owned()));
            } else if let Some(doc) = line.strip_prefix('/').or_else(|| line.strip_prefix('!'))
                && !doc.starts_with('/')
            {
                tokens.push(Token::Doc(doc.to_owned()));
            }
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

/// Finds the enum `which` names and returns its enumerators in order.
///
/// A value is an integer literal (`= 3`, `= -1`, `= 0x8`), an earlier enumerator of the
/// same enum (`= CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH`, cuDNN's deprecated aliases),
/// or absent (the previous value plus one). One attribute macro between a name and its
/// `=` (`CUDNN_DEPRECATED_ENUM`) is skipped. Anything else (expressions, preprocessor
/// directives) is refused rather than evaluated wrongly.
pub fn parse_enum(header: &str, which: EnumName<'_>) -> Result<Vec<Enumerator>> {
    let tokens = tokenize(header)?;
    let start = body_start(&tokens, which)?;
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
                // `NAME ATTRIBUTE_MACRO = value`: the macro expands to an attribute.
                if matches!(tokens.get(i), Some(Token::Ident(_)))
                    && tokens.get(i + 1) == Some(&Token::Punct('='))
                {
                    i += 1;
                }
                let code = if tokens.get(i) == Some(&Token::Punct('=')) {
                    let (negative, at) = match tokens.get(i + 1) {
                        Some(Token::Punct('-')) => (true, i + 2),
                        _ => (false, i + 1),
                    };
                    let value = match tokens.get(at) {
                        Some(Token::Number(n)) => {
                            parse_int(n).with_context(|| format!("`{name}`: bad integer `{n}`"))?
                        }
                        Some(Token::Ident(other)) if !negative => out
                            .iter()
                            .find(|e| &e.name == other)
                            .map(|e| e.code)
                            .with_context(|| {
                                format!("`{name}` = `{other}`, which is not an earlier enumerator")
                            })?,
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
    ensure!(!out.is_empty(), "`{which}` has no enumerators");
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

/// The index of the first token inside the braces of the enum `which` names.
fn body_start(tokens: &[Token], which: EnumName<'_>) -> Result<usize> {
    let is_ident = |t: &Token, s: &str| matches!(t, Token::Ident(i) if i == s);
    let mut start = None;
    for (i, t) in tokens.iter().enumerate() {
        let found = match which {
            // `enum <idents…> tag {`
            EnumName::Tag(tag) => {
                if !is_ident(t, "enum") {
                    continue;
                }
                let mut j = i + 1;
                while matches!(tokens.get(j), Some(Token::Ident(n)) if n != tag) {
                    j += 1;
                }
                (tokens.get(j).is_some_and(|t| is_ident(t, tag))
                    && tokens.get(j + 1) == Some(&Token::Punct('{')))
                .then_some(j + 2)
            }
            // `typedef enum [tag] { … } name;`: enum bodies hold no braces, so the body
            // begins after the last `{` before this `}`.
            EnumName::Typedef(name) => {
                if !(is_ident(t, name)
                    && i > 0
                    && tokens[i - 1] == Token::Punct('}')
                    && tokens.get(i + 1) == Some(&Token::Punct(';')))
                {
                    continue;
                }
                let open = tokens[..i - 1]
                    .iter()
                    .rposition(|t| *t == Token::Punct('{'))
                    .with_context(|| format!("`}} {name};` without an opening brace"))?;
                let typedef = open >= 2
                    && (is_ident(&tokens[open - 1], "enum")
                        || (is_ident(&tokens[open - 2], "enum")
                            && matches!(tokens[open - 1], Token::Ident(_))));
                typedef.then_some(open + 1)
            }
        };
        if let Some(at) = found {
            ensure!(start.is_none(), "`{which}` is defined twice");
            start = Some(at);
        }
    }
    start.with_context(|| format!("no `{which}` definition in the header"))
}

/// Turns the raw text of a doc comment into plain text: strips the leading `*` of each
/// line, Doxygen markup (`\deprecated`, `\ref target "text"`, `\p x`, `::name`), and
/// normalises whitespace.
pub fn doc_to_text(raw: &str) -> String {
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
pub fn first_sentence(raw: &str) -> String {
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
