//! reqwest-driver's open loop (`--rate`) against the benchmark server, in both modes: the schedule it
//! keeps, late starts, `--duration`, `--record histogram`, and a stalling server's effect on the
//! corrected latency.

use crate::common;

use common::{array, document, server, total};

const MS: u64 = 1_000_000;

/// A low rate keeps its schedule: every intended start is the uniform one, the whole schedule is sent
/// (count + missed is exactly the schedule before D, nearly all of it sent), nothing starts late.
#[test]
fn a_low_rate_keeps_its_uniform_schedule() {
    let url = format!("{}/", server());
    for mode in ["async", "sync"] {
        // 20 requests/s over 2 workers for 1 s: each worker every 100 ms, worker 1 from 50 ms
        let doc = document(&["--url", &url, "--mode", mode, "--workers", "2", "--rate", "20", "--duration", "1"]);
        let wl = &doc["workload"];
        assert_eq!(
            (wl["loop"].as_str(), wl["rate"].as_f64(), wl["duration_s"].as_f64()),
            (Some("open"), Some(20.0), Some(1.0))
        );
        assert_eq!(
            (wl["arrival"].as_str(), wl["requests"].as_u64(), wl["record"].as_str()),
            (Some("uniform"), None, Some("samples"))
        );
        assert!(wl["seed"].is_null(), "{mode}: a uniform schedule draws nothing from the seed");
        assert_eq!(total(&doc, "count") + total(&doc, "missed"), 20, "{mode}");
        assert!(total(&doc, "count") >= 19, "{mode}: {doc}");
        assert_eq!((total(&doc, "late"), total(&doc, "failure_count")), (0, 0), "{mode}");
        for (w, worker) in doc["workers"].as_array().unwrap().iter().enumerate() {
            let intended = array(worker, "intended_ns").unwrap();
            let want: Vec<u64> = (0..intended.len() as u64).map(|k| (w as u64 + 2 * k) * 50 * MS).collect();
            assert_eq!(intended, want, "{mode}: worker {w}");
            assert!(array(worker, "start_ns").unwrap().iter().all(|&s| s < 1000 * MS), "started before D");
        }
        // the run ends after the last intended start (950 ms) and long before D plus the timeout
        let wall = doc["wall_ns"].as_u64().unwrap();
        assert!((950 * MS..20_000 * MS).contains(&wall), "{mode}: wall {wall}");
    }
}

/// `--requests N` with `--rate`: N requests each; Poisson arrivals are reproducible for a seed.
#[test]
fn poisson_arrivals_are_seeded() {
    let url = format!("{}/", server());
    let run = |seed: &str| {
        let args = ["--url", &url, "--workers", "2", "--rate", "400", "--requests", "10", "--arrival", "poisson"];
        document(&[&args[..], &["--seed", seed]].concat())
    };
    let (a, b, c) = (run("3"), run("3"), run("4"));
    assert_eq!((a["workload"]["arrival"].as_str(), a["workload"]["seed"].as_u64()), (Some("poisson"), Some(3)));
    let intended = |doc: &serde_json::Value| -> Vec<Vec<u64>> {
        doc["workers"].as_array().unwrap().iter().map(|w| array(w, "intended_ns").unwrap()).collect()
    };
    assert_eq!(intended(&a), intended(&b));
    assert_ne!(intended(&a), intended(&c));
    // worker w uses seed S + w: worker 1 of seed 3 is worker 0 of seed 4
    assert_eq!(intended(&a)[1], intended(&c)[0]);
    assert_eq!(total(&a, "count"), 20);
}

/// `--record histogram`: no per-request arrays, the buckets of the successful requests (checked by
/// `common::check`), corrected latencies never below the service times.
#[test]
fn histograms_in_both_loops_and_modes() {
    let url = format!("{}/", server());
    for mode in ["async", "sync"] {
        let args = ["--url", &url, "--mode", mode, "--workers", "2", "--record", "histogram"];
        let doc = document(&[&args[..], &["--rate", "200", "--duration", "0.5"]].concat());
        assert!(total(&doc, "count") >= 90, "{mode}");
        for w in doc["workers"].as_array().unwrap() {
            let max = |kind: &str| w["histograms"][kind]["counts"].as_array().unwrap().last().unwrap()[0].as_u64();
            assert!(max("corrected") >= max("service"), "{mode}: {w}");
        }
        let doc = document(&[&args[..], &["--requests", "7"]].concat());
        assert_eq!(total(&doc, "count"), 14);
        assert!(doc["workers"][0]["histograms"].get("corrected").is_none());
    }
}

/// A server that pauses every 40th request for 300 ms, at 50 requests/s on one connection: the requests
/// scheduled during a pause start late and their corrected latency counts the wait, while their
/// service time does not (coordinated omission corrected).
#[test]
fn a_stall_is_charged_to_the_requests_behind_it() {
    for mode in ["async", "sync"] {
        let url = format!("{}/stall?every=40&ms=300", server()); // a new server counts from 0
        let doc = document(&["--url", &url, "--mode", mode, "--workers", "1", "--rate", "50", "--requests", "60"]);
        let w = &doc["workers"][0];
        let (start, service, intended) =
            (array(w, "start_ns").unwrap(), array(w, "latencies_ns").unwrap(), array(w, "intended_ns").unwrap());
        let corrected: Vec<u64> = (0..60).map(|k| start[k] + service[k] - intended[k]).collect();
        let slow = |v: &[u64]| v.iter().filter(|&&l| l >= 100 * MS).count();
        // the stalled request itself, then those intended 20, 40, ... ms after it while it was stalled
        assert!(slow(&service) >= 1, "{mode}: the stall happened");
        assert!(slow(&corrected) >= slow(&service) + 5, "{mode}: {} vs {}", slow(&corrected), slow(&service));
        assert!(w["late"].as_u64().unwrap() >= 10, "{mode}: {}", w["late"]);
        assert_eq!(w["failure_count"], 0);
    }
}
