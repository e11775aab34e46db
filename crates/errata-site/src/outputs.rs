//! Every output of the site as a value, so that a full build renders all of them and an
//! incremental rebuild ([`crate::SiteState::rebuild`]) renders only those a change
//! reaches. The search index is not here: it is kept in memory and updated document by
//! document ([`crate::search`]).

use crate::Error;
use crate::catalog::Catalog;
use crate::pages::Ctx;
use crate::urls::{self, Lang};

/// One output: a page, or one of the site-wide files.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Out {
    /// `entries/<id>.html` (and `zh/…`).
    Entry(String, Lang),
    /// `articles/<id>.html`.
    Article(String, Lang),
    /// `domains/<domain>.html`.
    Domain(String, Lang),
    /// `tags/<slug>.html`, by slug (spellings with one slug share the page).
    Tag(String, Lang),
    /// `index.html`.
    Home(Lang),
    /// `translations.html`.
    Translations(Lang),
    /// `search.html`.
    Search(Lang),
    /// `404.html`.
    NotFound(Lang),
    /// `feed.xml`.
    Feed(Lang),
    /// `api/v1/<id>.json`.
    ApiEntry(String),
    /// `api/v1/index.json`.
    ApiIndex,
    /// `sitemap.xml`.
    Sitemap,
    /// `robots.txt`.
    Robots,
    /// `static/*`: the theme's CSS, JS and icons.
    Statics,
    /// `.nojekyll`.
    NoJekyll,
}

impl Out {
    /// Every output of a site with this catalog, pages first.
    pub(crate) fn all(catalog: &Catalog<'_>) -> Vec<Out> {
        let mut all = Vec::new();
        for lang in Lang::ALL {
            all.extend([
                Out::Home(lang),
                Out::Translations(lang),
                Out::Search(lang),
                Out::NotFound(lang),
            ]);
            all.extend(
                catalog
                    .entries
                    .keys()
                    .map(|id| Out::Entry(id.to_string(), lang)),
            );
            all.extend(
                catalog
                    .articles
                    .keys()
                    .map(|id| Out::Article(id.to_string(), lang)),
            );
            all.extend(
                catalog
                    .domains
                    .keys()
                    .map(|d| Out::Domain(d.to_string(), lang)),
            );
            all.extend(catalog.tags.keys().map(|slug| Out::Tag(slug.clone(), lang)));
        }
        for lang in Lang::ALL {
            all.push(Out::Feed(lang));
        }
        all.extend(
            catalog
                .entries
                .keys()
                .map(|id| Out::ApiEntry(id.to_string())),
        );
        all.extend([
            Out::ApiIndex,
            Out::Sitemap,
            Out::Robots,
            Out::Statics,
            Out::NoJekyll,
        ]);
        all
    }

    /// The number of HTML pages of a site with this catalog.
    pub(crate) fn page_count(catalog: &Catalog<'_>) -> usize {
        let per_lang = 4
            + catalog.entries.len()
            + catalog.articles.len()
            + catalog.domains.len()
            + catalog.tags.len();
        per_lang * Lang::ALL.len()
    }

    /// An HTML page (counted as one in build summaries).
    pub(crate) fn is_page(&self) -> bool {
        matches!(
            self,
            Out::Entry(..)
                | Out::Article(..)
                | Out::Domain(..)
                | Out::Tag(..)
                | Out::Home(_)
                | Out::Translations(_)
                | Out::Search(_)
                | Out::NotFound(_)
        )
    }

    /// The path this output writes (`None` for [`Out::Statics`], which writes several).
    pub(crate) fn path(&self) -> Option<String> {
        Some(match self {
            Out::Entry(id, lang) => lang.file(&urls::entry_page(id)),
            Out::Article(id, lang) => lang.file(&urls::article_page(id)),
            Out::Domain(d, lang) => lang.file(&urls::domain_page(d)),
            Out::Tag(slug, lang) => lang.file(&urls::tag_slug_page(slug)),
            Out::Home(lang) => lang.file("index.html"),
            Out::Translations(lang) => lang.file("translations.html"),
            Out::Search(lang) => lang.file("search.html"),
            Out::NotFound(lang) => lang.file("404.html"),
            Out::Feed(lang) => lang.file("feed.xml"),
            Out::ApiEntry(id) => format!("api/v1/{id}.json"),
            Out::ApiIndex => "api/v1/index.json".into(),
            Out::Sitemap => "sitemap.xml".into(),
            Out::Robots => "robots.txt".into(),
            Out::NoJekyll => ".nojekyll".into(),
            Out::Statics => return None,
        })
    }
}

impl Ctx<'_> {
    /// Renders one output: its files, or none when what it shows no longer exists (an
    /// entry, article, domain or tag that is gone).
    pub(crate) fn render_out(&self, out: &Out) -> Result<Vec<(String, Vec<u8>)>, Error> {
        let one = |(path, html): (String, String)| Ok(vec![(path, html.into_bytes())]);
        let c = self.catalog;
        match out {
            Out::Entry(id, lang) if c.entries.contains_key(id.as_str()) => {
                one(self.entry_page(id, *lang)?)
            }
            Out::Article(id, lang) if c.articles.contains_key(id.as_str()) => {
                one(self.article_page(id, *lang)?)
            }
            Out::Domain(d, lang) if c.domains.contains_key(d.as_str()) => {
                one(self.domain_page(d, *lang)?)
            }
            Out::Tag(slug, lang) if c.tags.contains_key(slug) => one(self.tag_page(slug, *lang)?),
            Out::Entry(..) | Out::Article(..) | Out::Domain(..) | Out::Tag(..) => Ok(Vec::new()),
            Out::Home(lang) => one(self.home_page(*lang)?),
            Out::Translations(lang) => one(self.translations_page(*lang)?),
            Out::Search(lang) => one(self.search_page(*lang)?),
            Out::NotFound(lang) => one(self.not_found_page(*lang)?),
            Out::Feed(lang) => Ok(vec![(
                lang.file("feed.xml"),
                crate::machine::feed(self, *lang)?.into_bytes(),
            )]),
            Out::ApiEntry(id) => Ok(crate::machine::api_entry(self, id).into_iter().collect()),
            Out::ApiIndex => Ok(vec![(
                "api/v1/index.json".into(),
                crate::machine::api_index(self),
            )]),
            Out::Sitemap => Ok(vec![(
                "sitemap.xml".into(),
                crate::machine::sitemap(self)?.into_bytes(),
            )]),
            Out::Robots => Ok(vec![(
                "robots.txt".into(),
                crate::machine::robots(self).into_bytes(),
            )]),
            Out::Statics => Ok(self
                .theme
                .statics
                .iter()
                .map(|(name, text)| (format!("static/{name}"), text.as_bytes().to_vec()))
                .collect()),
            // An empty marker so `file://` users and static hosts see what this is.
            Out::NoJekyll => Ok(vec![(".nojekyll".into(), Vec::new())]),
        }
    }
}
