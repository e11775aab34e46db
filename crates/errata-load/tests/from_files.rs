//! `KnowledgeBase::from_files` loads bytes in memory exactly as `load` loads the same
//! files from disk (the fuzz targets rely on it).

use std::path::{Path, PathBuf};

use errata_load::KnowledgeBase;

#[test]
fn from_files_equals_load() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/seeds");
    let mut files: Vec<(PathBuf, Vec<u8>)> = Vec::new();
    for sub in ["signatures/cuda", "articles/cuda"] {
        for e in std::fs::read_dir(seeds.join(sub)).unwrap() {
            let path = e.unwrap().path();
            files.push((
                root.join(sub).join(path.file_name().unwrap()),
                std::fs::read(&path).unwrap(),
            ));
        }
    }
    // Problems the loader reports: invalid UTF-8, a JSON syntax error, no front matter,
    // and a file that is neither an entry nor an article (ignored by both).
    files.push((
        root.join("signatures/cuda/bad.json"),
        b"{\"id\": \xff}".to_vec(),
    ));
    files.push((
        root.join("signatures/cuda/syntax.json"),
        b"{\"id\": ".to_vec(),
    ));
    files.push((
        root.join("articles/cuda/bare.md"),
        b"# no front matter\n".to_vec(),
    ));
    files.push((root.join("articles/cuda/notes.txt"), b"ignored".to_vec()));
    for (path, bytes) in &files {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    files.reverse();

    let loaded = KnowledgeBase::load(root).unwrap();
    let memory = KnowledgeBase::from_files(root, files);
    assert_eq!(loaded.entries.len(), 2);
    assert_eq!(loaded.articles.len(), 4);
    let entries = |kb: &KnowledgeBase| {
        kb.entries
            .iter()
            .map(|e| {
                (
                    e.path.clone(),
                    e.path_id.clone(),
                    e.text().to_string(),
                    format!("{:?}", e.entry),
                )
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(entries(&memory), entries(&loaded));
    let articles = |kb: &KnowledgeBase| {
        kb.articles
            .iter()
            .map(|a| format!("{a:?}"))
            .collect::<Vec<_>>()
    };
    assert_eq!(articles(&memory), articles(&loaded));
    let sources = |kb: &KnowledgeBase| {
        kb.sources()
            .iter()
            .map(|s| (s.path.clone(), s.text.to_string(), s.invalid_utf8_at))
            .collect::<Vec<_>>()
    };
    assert_eq!(sources(&memory), sources(&loaded));
    assert!(!loaded.diagnostics.is_empty());
    assert_eq!(memory.diagnostics, loaded.diagnostics);
}
