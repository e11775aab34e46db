//! `error-code-unknown` (error): `error_code` is not a real `cudaError_t` value.
//!
//! `error_code` is a `cudaError_t` enumerator name, optionally with its number:
//! `cudaErrorIllegalAddress` or `cudaErrorIllegalAddress (700)`. Both the name and the
//! number are checked against the table generated from CUDA's own `driver_types.h`
//! (`cargo xtask gen-cuda-errors`), never against memory: for example, there is no
//! `cudaErrorDriverNotReady`, and 804 is `cudaErrorCompatNotSupportedOnDevice`. When the
//! name is unknown but the number is real, the help names the enumerator with that number.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic, cuda_errors};

use super::diag;
use crate::context::Ctx;

const RULE: &str = "error-code-unknown";

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(code) = doc.entry.as_ref().and_then(|e| e.error_code.as_deref()) else {
        return;
    };
    if let Err((message, help)) = check_code(code) {
        out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::Value("/error_code".into()),
                message,
            )
            .with_help(help),
        );
    }
}

fn check_code(text: &str) -> Result<(), (String, String)> {
    let text = text.trim();
    let (name, number) = match text.split_once('(') {
        Some((name, rest)) => {
            let num = rest
                .strip_suffix(')')
                .map(str::trim)
                .and_then(|n| n.parse::<i32>().ok());
            let Some(num) = num else {
                return Err((
                    format!("`{text}` is not `cudaErrorName` or `cudaErrorName (N)`"),
                    "write e.g. `cudaErrorIllegalAddress (700)`".into(),
                ));
            };
            (name.trim(), Some(num))
        }
        None => (text, None),
    };
    match (cuda_errors::by_name(name), number) {
        (Some(e), Some(n)) if e.code != n => Err((
            format!("`{name}` is {}, not {n}", e.code),
            match cuda_errors::by_code(n) {
                Some(other) => format!("{n} is `{}`; write `{name} ({})`", other.name, e.code),
                None => format!("write `{name} ({})`", e.code),
            },
        )),
        (Some(_), _) => Ok(()),
        (None, number) => {
            let hint = match number.and_then(cuda_errors::by_code) {
                Some(e) => format!("{} is `{}` ({})", e.code, e.name, e.description),
                None => "use a `cudaError_t` name from CUDA's driver_types.h (`errata explain error-code-unknown`)".into(),
            };
            Err((
                format!(
                    "`{name}` is not a cudaError_t value in {}",
                    cuda_errors::CUDA_HEADER_SOURCE
                ),
                hint,
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::check_code;

    #[test]
    fn names_and_numbers_from_the_header() {
        assert!(check_code("cudaErrorIllegalAddress").is_ok());
        assert!(check_code("cudaErrorIllegalAddress (700)").is_ok());
        assert!(check_code("cudaErrorIllegalAddress (701)").is_err());
        let (msg, help) = check_code("cudaErrorDriverNotReady (804)").unwrap_err();
        assert!(msg.contains("not a cudaError_t"), "{msg}");
        assert!(
            help.contains("cudaErrorCompatNotSupportedOnDevice"),
            "{help}"
        );
        assert!(check_code("cudaErrorCudartUnloading (4)").is_ok());
    }

    #[test]
    fn reported_at_the_field() {
        let mut e = valid_entry("cuda/a");
        e["error_code"] = "cudaErrorDriverNotReady (804)".into();
        assert_eq!(
            entry_diags(&e, "error-code-unknown")[0].pointer(),
            Some("/error_code")
        );
    }
}
