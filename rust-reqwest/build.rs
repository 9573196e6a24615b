//! Exposes the locked reqwest version as `REQWEST_VERSION` (read from the nearest Cargo.lock above this
//! crate, i.e. the workspace's), so the version the driver reports can never drift from what was built.

use std::env;
use std::fs;
use std::path::{Path, PathBuf};

fn find_lock(start: &Path) -> Option<PathBuf> {
    start.ancestors().map(|d| d.join("Cargo.lock")).find(|p| p.is_file())
}

/// The version of the first `[[package]]` named `reqwest` with major.minor 0.13 (any reqwest if none).
fn reqwest_version(lock: &str) -> Option<String> {
    let mut found: Vec<String> = Vec::new();
    for block in lock.split("[[package]]").skip(1) {
        let mut name = None;
        let mut version = None;
        for line in block.lines() {
            let line = line.trim();
            if let Some(v) = line.strip_prefix("name = ") {
                name = Some(v.trim_matches('"').to_string());
            } else if let Some(v) = line.strip_prefix("version = ") {
                version = Some(v.trim_matches('"').to_string());
            }
        }
        if let (Some(n), Some(v)) = (name, version) {
            if n == "reqwest" {
                found.push(v);
            }
        }
    }
    found.iter().find(|v| v.starts_with("0.13.")).cloned().or_else(|| found.into_iter().next())
}

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let version = match find_lock(&manifest_dir) {
        Some(lock) => {
            println!("cargo:rerun-if-changed={}", lock.display());
            match fs::read_to_string(&lock).ok().as_deref().and_then(reqwest_version) {
                Some(v) => v,
                None => {
                    println!("cargo:warning=no reqwest package in {}", lock.display());
                    "unknown".to_string()
                }
            }
        }
        None => {
            println!("cargo:warning=no Cargo.lock found above {}", manifest_dir.display());
            "unknown".to_string()
        }
    };
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-env=REQWEST_VERSION={version}");
}
