//! From what a script imports to what a registry installs. Most Python packages are imported by
//! their own name; the well-known ones that are not are in a small table. A Node import names
//! its package (`@scope/name/sub` → `@scope/name`).

use super::Ecosystem;

/// Python imports whose package on PyPI has another name.
const PYTHON_MISMATCHES: &[(&str, &str)] = &[
    ("yaml", "PyYAML"),
    ("cv2", "opencv-python"),
    ("PIL", "Pillow"),
    ("bs4", "beautifulsoup4"),
    ("sklearn", "scikit-learn"),
    ("skimage", "scikit-image"),
    ("dateutil", "python-dateutil"),
    ("dotenv", "python-dotenv"),
    ("jwt", "PyJWT"),
    ("Crypto", "pycryptodome"),
    ("OpenSSL", "pyOpenSSL"),
    ("serial", "pyserial"),
    ("usb", "pyusb"),
    ("magic", "python-magic"),
    ("docx", "python-docx"),
    ("pptx", "python-pptx"),
    ("git", "GitPython"),
    ("MySQLdb", "mysqlclient"),
    ("psycopg2", "psycopg2-binary"),
    ("attr", "attrs"),
    ("fitz", "PyMuPDF"),
    ("dns", "dnspython"),
    ("zmq", "pyzmq"),
    ("slugify", "python-slugify"),
    ("multipart", "python-multipart"),
    ("jose", "python-jose"),
    ("kafka", "kafka-python"),
    ("websocket", "websocket-client"),
    ("telegram", "python-telegram-bot"),
    ("gi", "PyGObject"),
    ("Levenshtein", "python-Levenshtein"),
    ("googleapiclient", "google-api-python-client"),
    ("pkg_resources", "setuptools"),
];

/// What the table says about an import.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TableMatch {
    /// A known mismatch: the package has another name.
    Mismatch(String),
    /// The import's own name (or, for Node, the package its specifier names).
    SameName(String),
}

impl TableMatch {
    pub fn package(&self) -> &str {
        match self {
            TableMatch::Mismatch(p) | TableMatch::SameName(p) => p,
        }
    }
}

/// The package to install for an import (a top-level Python module, or a Node specifier).
/// `None` when the Node specifier names no package (a relative path).
pub fn package_for(ecosystem: Ecosystem, module: &str) -> Option<TableMatch> {
    match ecosystem {
        Ecosystem::Python => {
            let top = module.split('.').next().unwrap_or(module);
            let known = PYTHON_MISMATCHES
                .iter()
                .find(|(import, _)| *import == top)
                .map(|(_, package)| TableMatch::Mismatch((*package).to_string()));
            Some(known.unwrap_or_else(|| TableMatch::SameName(top.to_string())))
        }
        Ecosystem::Node => node_package(module).map(TableMatch::SameName),
    }
}

/// `@scope/name/sub/path` → `@scope/name`; `name/sub` → `name`; a relative, absolute or
/// scheme specifier → `None`.
pub(super) fn node_package(specifier: &str) -> Option<String> {
    if specifier.starts_with(['.', '/']) || specifier.contains(':') {
        return None;
    }
    let mut parts = specifier.split('/');
    let first = parts.next()?;
    let name = if first.starts_with('@') {
        format!("{first}/{}", parts.next()?)
    } else {
        first.to_string()
    };
    valid_package_name(Ecosystem::Node, &name).then_some(name)
}

/// A name a registry could hold, and nothing an installer would read as an option or a path.
pub fn valid_package_name(ecosystem: Ecosystem, name: &str) -> bool {
    if name.is_empty() || name.len() > 214 {
        return false;
    }
    match ecosystem {
        // PEP 508: letters and digits at both ends, '.', '_' and '-' inside.
        Ecosystem::Python => {
            let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
            edge(name.chars().next())
                && edge(name.chars().last())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        }
        Ecosystem::Node => {
            let part_ok = |part: &str| {
                !part.is_empty()
                    && !part.starts_with(['.', '_', '-'])
                    && part
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '~'))
            };
            match name.strip_prefix('@') {
                Some(scoped) => match scoped.split_once('/') {
                    Some((scope, package)) => part_ok(scope) && part_ok(package),
                    None => false,
                },
                None => part_ok(name),
            }
        }
    }
}

/// The name as the registry compares it: PEP 503 for PyPI (case and `-_.` runs folded), exact
/// for npm.
pub(super) fn canonical(ecosystem: Ecosystem, name: &str) -> String {
    match ecosystem {
        Ecosystem::Python => {
            let mut out = String::with_capacity(name.len());
            for c in name.chars() {
                if matches!(c, '-' | '_' | '.') {
                    if !out.ends_with('-') {
                        out.push('-');
                    }
                } else {
                    out.extend(c.to_lowercase());
                }
            }
            out
        }
        Ecosystem::Node => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_mismatches_map_and_others_keep_their_name() {
        let py = |m: &str| package_for(Ecosystem::Python, m).map(|t| t.package().to_string());
        assert_eq!(py("yaml").as_deref(), Some("PyYAML"));
        assert_eq!(py("cv2").as_deref(), Some("opencv-python"));
        assert_eq!(py("PIL").as_deref(), Some("Pillow"));
        assert_eq!(py("bs4").as_deref(), Some("beautifulsoup4"));
        assert_eq!(py("sklearn").as_deref(), Some("scikit-learn"));
        assert_eq!(py("dateutil.parser").as_deref(), Some("python-dateutil"));
        assert_eq!(
            package_for(Ecosystem::Python, "six"),
            Some(TableMatch::SameName("six".to_string()))
        );
    }

    #[test]
    fn node_specifiers_name_their_package() {
        let node = |s: &str| package_for(Ecosystem::Node, s).map(|t| t.package().to_string());
        assert_eq!(node("@slack/webhook").as_deref(), Some("@slack/webhook"));
        assert_eq!(node("lodash/fp/map").as_deref(), Some("lodash"));
        assert_eq!(node("@scope/pkg/dist/x.js").as_deref(), Some("@scope/pkg"));
        assert_eq!(node("./helpers"), None);
        assert_eq!(node("/abs/x"), None);
        assert_eq!(node("node:fs"), None);
        assert_eq!(node("@scope"), None);
    }

    #[test]
    fn names_an_installer_would_misread_are_not_package_names() {
        for bad in ["-e", "--index-url", ".hidden", "a b", "x/y", "", "pkg-"] {
            assert!(!valid_package_name(Ecosystem::Python, bad), "{bad}");
        }
        for bad in ["-g", "--registry", "@x", "@/y", "a b", "../x", "x:y"] {
            assert!(!valid_package_name(Ecosystem::Node, bad), "{bad}");
        }
        assert!(valid_package_name(Ecosystem::Python, "python-dateutil"));
        assert!(valid_package_name(Ecosystem::Node, "@slack/webhook"));
    }

    #[test]
    fn pypi_names_compare_the_way_pypi_does() {
        assert_eq!(canonical(Ecosystem::Python, "PyYAML"), "pyyaml");
        assert_eq!(
            canonical(Ecosystem::Python, "python_dateutil"),
            "python-dateutil"
        );
        assert_eq!(
            canonical(Ecosystem::Python, "zope..interface"),
            "zope-interface"
        );
    }
}
