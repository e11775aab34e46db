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
    /// Text put before the template: [`CUDA_COMMON`] for CUDA harnesses, empty otherwise.
    pub prelude: &'static str,
    /// The template; the fragment replaces `{{FRAGMENT}}`.
    pub template: &'static str,
    /// Compiled with `-c` only (no `main`): never linked or run.
    pub object_only: bool,
    /// Compiled with relocatable device code and linked with `cudadevrt`: device code
    /// may launch kernels (CUDA Dynamic Parallelism).
    pub device_launches: bool,
}

/// The language family a harness belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HarnessLang {
    /// CUDA C++.
    Cuda,
    /// Python.
    Python,
}

/// The includes and `CUDA_CHECK` every CUDA harness starts with
/// (`harness/cuda-common.h`, the one copy of them).
pub const CUDA_COMMON: &str = include_str!("../harness/cuda-common.h");

/// Every harness.
pub const HARNESSES: &[Harness] = &[
    Harness {
        name: "cuda-main",
        lang: HarnessLang::Cuda,
        prelude: CUDA_COMMON,
        template: include_str!("../harness/cuda-main.cu"),
        object_only: false,
        device_launches: false,
    },
    Harness {
        name: "cuda-prelude",
        lang: HarnessLang::Cuda,
        prelude: CUDA_COMMON,
        template: include_str!("../harness/cuda-prelude.cu"),
        object_only: false,
        device_launches: false,
    },
    Harness {
        name: "cuda-cdp",
        lang: HarnessLang::Cuda,
        prelude: CUDA_COMMON,
        template: include_str!("../harness/cuda-cdp.cu"),
        object_only: false,
        device_launches: true,
    },
    Harness {
        name: "cuda-kernel",
        lang: HarnessLang::Cuda,
        prelude: CUDA_COMMON,
        template: include_str!("../harness/cuda-kernel.cu"),
        object_only: true,
        device_launches: false,
    },
    Harness {
        name: "python-torch",
        lang: HarnessLang::Python,
        prelude: "",
        template: include_str!("../harness/python-torch.py"),
        object_only: false,
        device_launches: false,
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
    /// Places `fragment` into the template, after the prelude.
    pub fn wrap(&self, fragment: &str) -> String {
        let mut out =
            String::with_capacity(self.prelude.len() + self.template.len() + fragment.len());
        out.push_str(self.prelude);
        out.push_str(&self.template.replacen(PLACEHOLDER, fragment, 1));
        out
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
    fn cuda_harnesses_share_one_prelude() {
        assert!(CUDA_COMMON.contains("#define CUDA_CHECK(expr)"));
        assert!(!CUDA_COMMON.contains(PLACEHOLDER));
        for h in HARNESSES {
            // The templates themselves no longer repeat it.
            assert!(!h.template.contains("CUDA_CHECK(expr)"), "{}", h.name);
            assert!(!h.template.contains("#include"), "{}", h.name);
            let wrapped = h.wrap("FRAGMENT_TEXT");
            let defines = wrapped.matches("#define CUDA_CHECK(expr)").count();
            match h.lang {
                HarnessLang::Cuda => {
                    assert_eq!(defines, 1, "{}", h.name);
                    assert!(wrapped.starts_with(CUDA_COMMON), "{}", h.name);
                    let at = wrapped.find("FRAGMENT_TEXT").unwrap_or(0);
                    assert!(at > wrapped.find("#define CUDA_CHECK").unwrap_or(usize::MAX));
                }
                HarnessLang::Python => assert_eq!(defines, 0, "{}", h.name),
            }
        }
        let main = find("cuda-main").map(|h| h.wrap("CUDA_CHECK(cudaFree(0));"));
        let main = main.unwrap_or_default();
        assert!(main.contains("int main() {\nCUDA_CHECK(cudaFree(0));\n    return 0;\n}"));
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
