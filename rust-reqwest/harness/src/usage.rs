//! The contract's usage errors (exit status 2, one line): clap's errors in the wording of the contract's declaration
//! (python/clientbench/schema/contract.json: `--flag: ...`), and the parsers of the flags' values, whose errors are
//! that wording after `--flag: `.

use std::process::ExitCode;

use crate::options::{MAX_BODY_SIZE, MAX_CHUNK_SIZE, MAX_TIMEOUT_S};

/// The most `--workers` a driver here takes (a `u32`; the contract sets no bound above).
const ANY: u64 = u32::MAX as u64;

/// Parse the driver's arguments; bad usage is one line on stderr (clap's error without its usage
/// block) and exit status 2, `--help` / `--version` print and exit 0.
pub fn parse_args<A: clap::Parser>(prog: &str) -> Result<A, ExitCode> {
    A::try_parse().map_err(|e| usage_error(prog, &e))
}

fn usage_error(prog: &str, e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    eprintln!("{prog}: error: {}", clap_message(e));
    ExitCode::from(2)
}

/// clap's error in the contract's wording (`--flag: ...`): an unknown flag, a flag without its value, a value
/// not among its choices, a value its parser refused, no --url; anything else as clap says it, on one line.
pub(crate) fn clap_message(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let text = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => v.first().cloned(),
        _ => None,
    };
    // "--workers <WORKERS>": the flag is its first word
    let flag = text(ContextKind::InvalidArg).and_then(|a| a.split_whitespace().next().map(str::to_owned));
    let value = text(ContextKind::InvalidValue);
    let said = match (e.kind(), flag) {
        (ErrorKind::UnknownArgument, Some(f)) => Some(format!("{f}: unknown flag")),
        (ErrorKind::MissingRequiredArgument, Some(f)) => Some(format!("{f}: required")),
        (ErrorKind::InvalidValue, Some(f)) if value.as_deref().is_none_or(str::is_empty) => {
            Some(format!("{f}: needs a value"))
        }
        (ErrorKind::InvalidValue, Some(f)) => match e.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(valid)) => {
                Some(format!("{f}: must be one of {}, got '{}'", valid.join(", "), value.unwrap_or_default()))
            }
            _ => None,
        },
        (ErrorKind::ValueValidation, Some(f)) => std::error::Error::source(e).map(|why| format!("{f}: {why}")),
        _ => None,
    };
    said.unwrap_or_else(|| one_line(&e.render().to_string()).trim_start_matches("error: ").to_owned())
}

/// clap's message up to its usage block, on one line.
pub(crate) fn one_line(rendered: &str) -> String {
    let lines = rendered.lines().map(str::trim).take_while(|l| !l.is_empty() && !l.starts_with("Usage:"));
    lines.collect::<Vec<_>>().join(" ")
}

// The values' parsers: each error is the contract's wording after `--flag: ` (clap_message puts the flag first).

/// A whole number from `min` to `max` (`max` [`ANY`]: no bound the contract sets).
fn whole(text: &str, min: u64, max: u64) -> Result<u64, String> {
    match text.parse::<i128>() {
        Ok(v) if (i128::from(min)..=i128::from(max)).contains(&v) => Ok(v as u64),
        _ if max == ANY => Err(format!("must be a whole number >= {min}, got '{text}'")),
        _ => Err(format!("must be a whole number from {min} to {max}, got '{text}'")),
    }
}

pub(crate) fn at_least_one(text: &str) -> Result<u32, String> {
    whole(text, 1, ANY).map(|v| v as u32)
}

pub(crate) fn at_least_zero(text: &str) -> Result<u32, String> {
    whole(text, 0, ANY).map(|v| v as u32)
}

pub(crate) fn parse_seed(text: &str) -> Result<u64, String> {
    whole(text, 0, u64::MAX)
}

/// A finite number above 0, at most `max` (None: no bound above).
fn positive(text: &str, max: Option<f64>) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(v) if v > 0.0 && v.is_finite() && max.is_none_or(|m| v <= m) => Ok(v),
        _ => Err(match max {
            Some(m) => format!("must be a positive number, at most {m}, got '{text}'"),
            None => format!("must be a positive number, got '{text}'"),
        }),
    }
}

pub(crate) fn parse_seconds(text: &str) -> Result<f64, String> {
    positive(text, None)
}

pub(crate) fn parse_timeout(text: &str) -> Result<f64, String> {
    positive(text, Some(MAX_TIMEOUT_S))
}

pub(crate) fn parse_rate(text: &str) -> Result<f64, String> {
    positive(text, None)
}

pub(crate) fn parse_chunk_size(text: &str) -> Result<usize, String> {
    whole(text, 1, MAX_CHUNK_SIZE as u64).map(|v| v as usize)
}

pub(crate) fn parse_body_size(text: &str) -> Result<u64, String> {
    whole(text, 0, MAX_BODY_SIZE)
}
