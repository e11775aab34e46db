//! Outcome records (`<data>/outcomes/**/*.jsonl`) as the pages use them: the
//! `errata_outcomes::Index` of the loaded files, folded into an item's counted basis when
//! its rate is shown. The entry file itself is never rewritten.

use errata_load::OutcomeDoc;
use errata_outcomes::Index;

/// Every entry's outcome records.
#[derive(Debug, Default)]
pub(crate) struct Outcomes(Index);

impl Outcomes {
    /// From loaded outcome files.
    pub fn from_docs(docs: &[OutcomeDoc]) -> Outcomes {
        Outcomes(Index::new(docs.iter().flat_map(|d| {
            d.records().map(move |r| (d.path_id.as_deref(), r))
        })))
    }

    /// Reads `<data>/outcomes/`.
    pub fn load(data_root: &std::path::Path) -> Outcomes {
        Outcomes::from_docs(&errata_load::load_outcomes(data_root))
    }
}

impl std::ops::Deref for Outcomes {
    type Target = Index;
    fn deref(&self) -> &Index {
        &self.0
    }
}
