//! reqwest-driver's bad usage (docs/raw-format.md): exit status 2, nothing on stdout, one line on stderr
//! naming the flag; nothing is sent.

use crate::common;

use common::driver;

#[test]
fn bad_usage_is_one_line_naming_the_flag() {
    // nobody listens on port 9 (discard): a driver that ran anyway would print a document of failures
    let url = "http://127.0.0.1:9/";
    let cases: &[(&[&str], &str)] = &[
        (&["--rate", "0"], "--rate"),
        (&["--rate", "-3"], "--rate"),
        (&["--rate", "fast"], "--rate"),
        (&["--rate", "2000001", "--workers", "2"], "--rate"),
        (&["--duration", "2"], "--duration"),
        (&["--rate", "5", "--duration", "2", "--requests", "4"], "--duration"),
        (&["--rate", "5", "--duration", "0"], "--duration"),
        (&["--method", "POST", "--body-size", "-1"], "--body-size"),
        (&["--method", "PUT", "--body-size", "1073741825"], "--body-size"),
        (&["--body-size", "10"], "--body-size"),
        (&["--method", "PATCH"], "--method"),
        (&["--arrival", "bursty", "--rate", "5"], "--arrival"),
        (&["--record", "everything"], "--record"),
        (&["--workers", "0"], "--workers"),
        (&["--connection", "new", "--client-scope", "shared"], "--connection"),
        (&["--client-scope", "global"], "--client-scope"),
        (&["--http", "3"], "--http"),
        // --arrival and --seed describe an open loop's schedule; --timeout is (0, a day]
        (&["--arrival", "poisson"], "--arrival"),
        (&["--seed", "7"], "--seed"),
        (&["--timeout", "0"], "--timeout"),
        (&["--timeout", "86401"], "--timeout"),
        // streamed bodies and targets
        (&["--chunk-size", "0"], "--chunk-size"),
        (&["--chunk-size", "16777217", "--download", "stream"], "--chunk-size"),
        (&["--upload", "stream"], "--upload"),
        (&["--upload", "sideways", "--method", "POST"], "--upload"),
        (&["--download", "sideways"], "--download"),
        (&["--targets", "/no/such/targets.txt"], "--targets"),
    ];
    for (args, flag) in cases {
        let out = driver(&[&["--url", url][..], args].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("reqwest-driver: error: ") && err.contains(flag), "{args:?}: {err}");
    }
    // an unusable --url is bad usage, not N failed requests
    for bad in ["ftp://127.0.0.1:9/", "http://", "127.0.0.1:9"] {
        let out = driver(&["--url", bad]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(out.stdout.is_empty() && err.lines().count() == 1 && err.contains("--url"), "{bad}: {err}");
    }
    // --targets gives each request its method and body; a bad line is named by its number
    let dir = std::env::temp_dir().join(format!("reqwest-driver-usage-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("targets.txt");
    std::fs::write(&file, format!("GET {url}\n# fine\n\nPOST {url} @{}/missing.bin\n", dir.display())).unwrap();
    let good = dir.join("good.txt");
    std::fs::write(&good, format!("GET {url}\n")).unwrap();
    let (bad_line, good) = (file.to_str().unwrap(), good.to_str().unwrap());
    for (args, flag, says) in [
        (&["--targets", bad_line][..], "--targets", "line 4: cannot read the body file"),
        (&["--targets", good, "--method", "POST", "--body-size", "3"], "--method", "--targets"),
        (&["--targets", good, "--body-size", "0"], "--body-size", "--targets"),
    ] {
        let out = driver(&[&["--url", url][..], args].concat());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            (out.status.code(), out.stdout.is_empty(), err.lines().count()),
            (Some(2), true, 1),
            "{args:?}: {err}"
        );
        assert!(err.starts_with(&format!("reqwest-driver: error: {flag}")) && err.contains(says), "{args:?}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
    let out = driver(&["--workers", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--url"));
    let out = driver(&["--help"]);
    assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).contains("--rate <R>"));
}
