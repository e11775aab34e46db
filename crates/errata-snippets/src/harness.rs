//! Harness templates (`harness=<name>`): the files in `crates/errata-snippets/harness/`,
//! embedded at build time so the runner pack and the compile tier use the same text.

use errata_model::snippet::Lang;

/// A harness template.
#[derive(Debug, Clone, Copy)]
pub struct Harness {
    /// The name used in `harness=<name>`.
    pub name: &'static str,
    /// The language it wraps.
    pub lang: HarnessLang,
    /// The template; the fragment replaces `{{FRAGMENT}}`.
    pub template: &'static str,
    /// Compiled with `-c` only (no `main`): never linked or run.
    pub object_only: bool,
}

/// The language family a harness belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HarnessLang {
    /// CUDA C++.
    Cuda,
    /// Python.
    Python,
}

/// Every harness.
pub const HARNESSES: &[Harness] = &[
    Harness {
        name: "cuda-main",
        lang: HarnessLang::Cuda,
        template: include_str!("../harness/cuda-main.cu"),
        object_only: false,
    },
    Harness {
        name: "cuda-prelude",
        lang: HarnessLang::Cuda,
        template: include_str!("../harness/cuda-prelude.cu"),
        object_only: false,
    },
    Harness {
        name: "cuda-kernel",
        lang: HarnessLang::Cuda,
        template: include_str!("../harness/cuda-kernel.cu"),
        object_only: true,
    },
    Harness {
        name: "python-torch",
        lang: HarnessLang::Python,
        template: include_str!("../harness/python-torch.py"),
        object_only: false,
    },
];

const PLACEHOLDER: &str = "{{FRAGMENT}}";

/// Looks a harness up by name.
pub fn find(name: &str) -> Option<&'static Harness> {
    HARNESSES.iter().find(|h| h.name == name)
}

/// Checks that `name` exists and wraps `lang`.
pub fn lookup(name: &str, lang: &Lang) -> Result<&'static Harness, String> {
    let h = find(name).ok_or_else(|| {
        let known: Vec<_> = HARNESSES.iter().map(|h| h.name).collect();
        format!("unknown harness `{name}` (known: {})", known.join(", "))
    })?;
    let fits = matches!(
        (h.lang, lang),
        (HarnessLang::Cuda, Lang::Cuda) | (HarnessLang::Python, Lang::Python)
    );
    if fits {
        Ok(h)
    } else {
        Err(format!(
            "harness `{name}` does not wrap {} code",
            lang.name()
        ))
    }
}

impl Harness {
    /// Places `fragment` into the template.
    pub fn wrap(&self, fragment: &str) -> String {
        self.template.replacen(PLACEHOLDER, fragment, 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_template_has_one_placeholder() {
        for h in HARNESSES {
            assert_eq!(h.template.matches(PLACEHOLDER).count(), 1, "{}", h.name);
        }
    }

    #[test]
    fn lookup_checks_language() {
        assert!(lookup("cuda-main", &Lang::Cuda).is_ok());
        assert!(lookup("cuda-main", &Lang::Python).is_err());
        assert!(
            lookup("nope", &Lang::Cuda)
                .unwrap_err()
                .contains("known: cuda-main")
        );
        let wrapped = find("python-torch")
            .map(|h| h.wrap("x = 1"))
            .unwrap_or_default();
        assert!(wrapped.contains("import torch\n\nx = 1"));
    }
}
