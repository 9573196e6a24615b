//! `--targets FILE` (docs/raw-format.md, "Targets"): the requests every worker cycles through instead of
//! `--url`'s, one per line, `METHOD URL` or `METHOD URL @BODYFILE`; bodies are read once, at start.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::options::{url_problem, Method, MAX_BODY_SIZE};

/// One line of the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub method: Method,
    pub url: String,
    /// The request body (`None`: the line named none).
    pub body: Option<Bytes>,
}

/// The targets of `file`, their bodies read; the error is one line that starts with `--targets`.
pub fn read(file: &Path) -> Result<Vec<Target>, String> {
    let text =
        std::fs::read_to_string(file).map_err(|e| format!("--targets {}: cannot read it ({e})", file.display()))?;
    parse(&text, read_body).map_err(|(line, why)| match line {
        0 => format!("--targets {}: {why}", file.display()),
        n => format!("--targets {}, line {n}: {why}", file.display()),
    })
}

fn read_body(path: &Path) -> Result<Bytes, String> {
    let size = std::fs::metadata(path).map_err(|e| format!("cannot read the body file {}: {e}", path.display()))?.len();
    if size > MAX_BODY_SIZE {
        return Err(format!("the body file {} is above 1 GiB", path.display()));
    }
    let body = std::fs::read(path).map_err(|e| format!("cannot read the body file {}: {e}", path.display()))?;
    Ok(body.into())
}

/// The targets of a file's `text`, bodies read by `read` (once per distinct path: the runner repeats a body
/// over `--hosts` origins); an error is `(line number, why)`, line 0 for the whole file.
pub fn parse(text: &str, mut read: impl FnMut(&Path) -> Result<Bytes, String>) -> Result<Vec<Target>, (usize, String)> {
    let mut bodies: HashMap<PathBuf, Bytes> = HashMap::new();
    let mut targets = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.first().is_none_or(|f| f.starts_with('#')) {
            continue;
        }
        let method = match fields[0] {
            "GET" => Method::Get,
            "POST" => Method::Post,
            "PUT" => Method::Put,
            other => return Err((n, format!("the method {other:?} is not GET, POST or PUT"))),
        };
        let (url, body) = match fields[1..] {
            [url] => (url, None),
            [url, body] => (url, Some(body)),
            _ => return Err((n, "a target is METHOD URL [@BODYFILE] (no spaces in either)".into())),
        };
        if let Some(why) = url_problem(url) {
            return Err((n, format!("the URL {why}")));
        }
        let body = match body {
            None => None,
            Some(_) if method == Method::Get => return Err((n, "a GET sends no body".into())),
            Some(b) => {
                let path = match b.strip_prefix('@').map(Path::new) {
                    Some(p) if p.is_absolute() => p,
                    _ => return Err((n, format!("the body file must be an absolute path, got {b:?}"))),
                };
                Some(match bodies.get(path) {
                    Some(bytes) => bytes.clone(),
                    None => {
                        let bytes = read(path).map_err(|why| (n, why))?;
                        bodies.insert(path.to_owned(), bytes.clone());
                        bytes
                    }
                })
            }
        };
        targets.push(Target { method, url: url.to_owned(), body });
    }
    if targets.is_empty() {
        return Err((0, "no targets in it (one `METHOD URL [@BODYFILE]` per line)".into()));
    }
    Ok(targets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bodies(path: &Path) -> Result<Bytes, String> {
        match path.to_str() {
            Some("/b/seven") => Ok(Bytes::from_static(b"seven b")),
            _ => Err(format!("cannot read the body file {}", path.display())),
        }
    }

    #[test]
    fn lines_are_targets_comments_and_blanks_skipped() {
        let text = "# the runner's form\nGET http://127.0.0.1:1/bytes/10\n\n   \n  # indented\r\n\
                    POST http://127.0.0.1:1/upload @/b/seven\r\nPUT https://h/x @/b/seven\nPOST http://h/e\n";
        let got = parse(text, bodies).unwrap();
        let seven = Some(Bytes::from_static(b"seven b"));
        assert_eq!(
            got,
            [
                Target { method: Method::Get, url: "http://127.0.0.1:1/bytes/10".into(), body: None },
                Target { method: Method::Post, url: "http://127.0.0.1:1/upload".into(), body: seven.clone() },
                Target { method: Method::Put, url: "https://h/x".into(), body: seven },
                Target { method: Method::Post, url: "http://h/e".into(), body: None },
            ]
        );
    }

    #[test]
    fn a_body_is_read_once() {
        let mut reads = 0;
        let text = "POST http://h/a @/b/seven\nPOST http://h/b @/b/seven\nPUT http://h/c @/b/seven\n";
        let got = parse(text, |p| {
            reads += 1;
            bodies(p)
        })
        .unwrap();
        assert_eq!((got.len(), reads), (3, 1));
    }

    #[test]
    fn a_bad_line_is_named_by_its_number() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "no targets"),
            ("# only a comment\n\n", 0, "no targets"),
            ("GET http://h/\nDELETE http://h/\n", 2, "DELETE"),
            ("get http://h/\n", 1, "\"get\""),
            ("GET\n", 1, "METHOD URL"),
            ("GET http://h/ @/b/seven extra\n", 1, "METHOD URL"),
            ("\nPOST http://h/ /b/seven\n", 2, "absolute path"),
            ("POST http://h/ @b/seven\n", 1, "absolute path"),
            ("POST http://h/ @\n", 1, "absolute path"),
            ("POST http://h/ @/no/such\n", 1, "/no/such"),
            ("GET http://h/ @/b/seven\n", 1, "a GET sends no body"),
            ("GET /bytes/10\n", 1, "the URL"),
            ("GET ftp://h/\n", 1, "http:// or https://"),
            ("GET http://h:0/\n", 1, "port"),
            ("Host: example.com\n", 1, "\"Host:\""),
        ];
        for (text, line, why) in cases {
            let (n, got) = parse(text, bodies).expect_err(text);
            assert_eq!(n, *line, "{text:?}: {got}");
            assert!(got.contains(why) && !got.contains('\n'), "{text:?}: {got}");
        }
    }

    #[test]
    fn the_file_is_named_in_the_error() {
        let err = read(Path::new("/no/such/targets.txt")).unwrap_err();
        assert!(err.starts_with("--targets /no/such/targets.txt: cannot read it"), "{err}");
        let dir = std::env::temp_dir().join(format!("harness-targets-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (file, body) = (dir.join("t.txt"), dir.join("body.bin"));
        std::fs::write(&body, b"0123456789").unwrap();
        std::fs::write(
            &file,
            format!("GET http://h/\nPOST http://h/ @{}\nPOST http://h/ @{}/none\n", body.display(), dir.display()),
        )
        .unwrap();
        let err = read(&file).unwrap_err();
        assert!(err.starts_with(&format!("--targets {}, line 3: cannot read the body file", file.display())), "{err}");
        std::fs::write(&file, format!("GET http://h/\nPOST http://h/ @{}\n", body.display())).unwrap();
        let got = read(&file).unwrap();
        assert_eq!(got[1].body.as_deref(), Some(&b"0123456789"[..]));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
