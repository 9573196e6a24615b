//! reqwest-bench's integration tests, one binary (each file a module), so that reqwest, hyper
//! and quinn are compiled and linked into one test binary, not one per file.

mod support;

mod client;
mod idle;
mod phases;
mod quic_endpoint;
mod tls;
