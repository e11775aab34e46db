//! Semantic versions of the data, and how a diff bumps them.

use std::fmt;
use std::str::FromStr;

/// `MAJOR.MINOR.PATCH` (no pre-release or build suffixes: data versions are plain).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Incompatible changes: an entry removed, the entry schema broken.
    pub major: u64,
    /// Compatible additions: new entries or articles.
    pub minor: u64,
    /// Content changes.
    pub patch: u64,
}

/// The version of a first bundle (no `--previous`, no `--version`).
pub const INITIAL: Version = Version {
    major: 1,
    minor: 0,
    patch: 0,
};

/// How much a change set bumps the version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bump {
    /// Nothing changed: same version.
    None,
    /// Content changed.
    Patch,
    /// Something was added.
    Minor,
    /// Something was removed, or the schema changed incompatibly.
    Major,
}

impl Bump {
    /// `none`, `patch`, `minor` or `major`.
    pub fn as_str(self) -> &'static str {
        match self {
            Bump::None => "none",
            Bump::Patch => "patch",
            Bump::Minor => "minor",
            Bump::Major => "major",
        }
    }
}

impl fmt::Display for Bump {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Version {
    /// This version bumped.
    pub fn bump(self, bump: Bump) -> Version {
        match bump {
            Bump::None => self,
            Bump::Patch => Version {
                patch: self.patch + 1,
                ..self
            },
            Bump::Minor => Version {
                minor: self.minor + 1,
                patch: 0,
                ..self
            },
            Bump::Major => Version {
                major: self.major + 1,
                minor: 0,
                patch: 0,
            },
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl FromStr for Version {
    type Err = String;

    fn from_str(s: &str) -> Result<Version, String> {
        let parts: Vec<&str> = s.split('.').collect();
        let number = |p: &str| -> Result<u64, String> {
            if p.is_empty()
                || (p.len() > 1 && p.starts_with('0'))
                || !p.bytes().all(|b| b.is_ascii_digit())
            {
                return Err(format!("`{s}` is not a version MAJOR.MINOR.PATCH"));
            }
            p.parse().map_err(|_| format!("`{s}`: number too large"))
        };
        match parts.as_slice() {
            [a, b, c] => Ok(Version {
                major: number(a)?,
                minor: number(b)?,
                patch: number(c)?,
            }),
            _ => Err(format!("`{s}` is not a version MAJOR.MINOR.PATCH")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_print_and_bump() {
        let v: Version = "1.4.2".parse().unwrap();
        assert_eq!(v.to_string(), "1.4.2");
        assert_eq!(v.bump(Bump::Patch).to_string(), "1.4.3");
        assert_eq!(v.bump(Bump::Minor).to_string(), "1.5.0");
        assert_eq!(v.bump(Bump::Major).to_string(), "2.0.0");
        assert_eq!(v.bump(Bump::None), v);
        for bad in ["1.2", "1.2.3.4", "01.2.3", "1.x.3", "", "1.2.3-rc1"] {
            assert!(bad.parse::<Version>().is_err(), "{bad}");
        }
    }
}
