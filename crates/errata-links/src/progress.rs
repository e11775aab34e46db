//! A progress bar on stderr, only when stderr is a terminal.

use std::io::IsTerminal;

/// A progress bar over the URLs being checked; silent unless enabled and stderr is a
/// terminal (never in CI logs, never mixed into piped output).
#[derive(Clone)]
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
}

impl Progress {
    /// A bar of `total` steps, shown when `enabled` and stderr is a terminal.
    pub fn new(total: usize, enabled: bool) -> Progress {
        let bar = (enabled && total > 0 && std::io::stderr().is_terminal()).then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            let style = indicatif::ProgressStyle::with_template(
                "{spinner} checking links [{bar:30}] {pos}/{len} {wide_msg}",
            )
            .map(|s| s.progress_chars("=> "));
            if let Ok(style) = style {
                bar.set_style(style);
            }
            bar
        });
        Progress { bar }
    }

    /// One URL done.
    pub fn done(&self, url: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(url.to_string());
            bar.inc(1);
        }
    }

    /// Removes the bar.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
