//! The layers of the crate, checked: a module may import only from the layers below it.
//! From the bottom: `error`, `observability` and `secret` (import nothing of the crate),
//! `fairness`, `db`, `config`, `tenancy`, `school` (school tables, over `tenancy`'s bound
//! connection), `relay`, `auth` (tokens, keys, passwords, permissions), `cache`, `state`
//! (the `AppState` handlers reach), `request` (the stages of a request's pipeline and the
//! extractors stepping through them), `api`, `startup`, `cli`. So `auth` cannot reach for
//! a request's stages, nor anything below `request` for the state.

use std::{collections::BTreeSet, fs, path::Path};

const LAYERS: &[&[&str]] = &[
    &["error", "observability", "secret"],
    &["fairness"],
    &["db"],
    &["config"],
    &["tenancy"],
    &["school"],
    &["relay"],
    &["auth"],
    &["cache"],
    &["state"],
    &["request"],
    &["api"],
    &["startup"],
    &["cli"],
];

fn rank(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

/// The top-level modules named after `crate::` in `source`, including inside
/// `use crate::{a::.., b};` groups.
fn imported(source: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for (at, _) in source.match_indices("crate::") {
        let rest = &source[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 1;
            let mut item = String::new();
            let mut first_segment = true;
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 1 => {
                        if !item.is_empty() {
                            found.insert(std::mem::take(&mut item));
                        }
                        first_segment = true;
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    break;
                }
                if depth == 1 && first_segment {
                    if c.is_ascii_lowercase() || c == '_' {
                        item.push(c);
                    } else if !item.is_empty() {
                        found.insert(std::mem::take(&mut item));
                        first_segment = false;
                    }
                }
            }
            if !item.is_empty() {
                found.insert(item);
            }
        } else {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            found.insert(name);
        }
    }
    found
}

fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("src").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut all = Vec::new();
    files(&src, &mut all);
    let mut upward = Vec::new();
    for path in all {
        let relative = path.strip_prefix(&src).expect("under src");
        let top = relative
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or_default()
            .trim_end_matches(".rs")
            .to_owned();
        let Some(own) = rank(&top) else { continue };
        let source = fs::read_to_string(&path).expect("read");
        for module in imported(&source) {
            if module != top && rank(&module).is_some_and(|r| r >= own) {
                upward.push(format!("{} imports {module}", relative.display()));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports against the layers:\n{}",
        upward.join("\n")
    );
}

/// The layers below the HTTP edge know nothing of HTTP: queries, filters and hosts reach
/// them parsed (`api/` and the extractors in `request/` read requests), and they wait for
/// blocking work with `db::blocking`, not actix's. Of `request/`, only the stages that read
/// the request itself (its host, headers, method) may name actix.
#[test]
fn the_layers_below_the_edge_do_not_use_actix() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut below = Vec::new();
    for dir in ["fairness", "db", "tenancy", "school", "relay", "cache"] {
        files(&src.join(dir), &mut below);
    }
    for stage in ["tenant", "pace", "admit", "failed", "disclose"] {
        below.push(src.join("request").join(format!("{stage}.rs")));
    }
    below.push(src.join("config.rs"));
    let using: Vec<String> = below
        .iter()
        .filter(|path| fs::read_to_string(path).expect("read").contains("actix"))
        .map(|path| {
            path.strip_prefix(&src)
                .expect("under src")
                .display()
                .to_string()
        })
        .collect();
    assert!(using.is_empty(), "actix below the HTTP edge: {using:?}");
}

#[test]
fn grouped_imports_are_seen() {
    let found = imported("use crate::{a::{b, c}, d, e::F};\nlet x = crate::g::h();");
    assert_eq!(found, ["a", "d", "e", "g"].map(String::from).into());
}
