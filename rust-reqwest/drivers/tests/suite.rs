//! reqwest-driver's integration tests, one binary (each file a module), so that the driver's
//! client, the benchmark server and quinn are compiled and linked into one test binary, not one per file.

mod common;
#[path = "common/h3.rs"]
mod h3server;
#[path = "../../tests/support/mod.rs"]
mod support;

mod client_http3;
mod driver;
mod http2;
mod http3;
mod open_loop;
mod phases;
mod streams;
mod uploads;
mod usage;
