//! clientbench-server's integration tests, one binary (each file a module): every file
//! linked on its own would build the server, axum, reqwest and quinn into a test binary of its own.

mod common;

mod bad_input;
mod client_api;
mod h2;
mod h3_flags;
#[path = "h3.rs"] // `h3` is the h3 crate
mod h3_server;
mod hosts;
mod load;
mod process;
mod router;
mod tls;
mod upload;
