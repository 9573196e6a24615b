package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBadUsageIsOneLineNamingTheFlag(t *testing.T) {
	for _, c := range []struct{ args, flag string }{
		{"--url http://h/ --rate x", "--rate"},
		{"--url http://h/ --rate 0", "--rate"},
		{"--url http://h/ --duration 1", "--duration"},
		{"--url http://h/ --rate 5 --duration 1 --requests 3", "--requests"},
		{"--url http://h/ --rate 2000000 --workers 1", "--rate"},
		{"--url http://h/ --body-size 3", "--body-size"},
		{"--url http://h/ --method POST --body-size -1", "--body-size"},
		{"--url http://h/ --method POST --body-size 1073741825", "--body-size"},
		{"--url http://h/ --workers 0", "--workers"},
		{"--url http://h/ --warmup -1", "--warmup"},
		{"--url http://h/ --timeout nan", "--timeout"},
		{"--url http://h/ --connection close", "--connection"},
		{"--url http://h/ --arrival burst", "--arrival"},
		{"--url http://h/ --record all", "--record"},
		{"--url http://h/ --method DELETE", "--method"},
		{"--url http://h/ --ca-file /no/such/ca.pem", "--ca-file"},
		{"--url http://h/ --ca-file x --insecure", "--insecure"},
		{"--url http://h/ --bogus", "--bogus"},
		{"--workers 2", "--url"},
		{"--url http://h/ --client-scope all", "--client-scope"},
		{"--url http://h/ --http 3", "--http"},
		{"--url http://h/ --client-scope shared --connection new", "--client-scope"},
		// the contract's rules (docs/raw-format.md, "Command line")
		{"--url http://h/ --arrival poisson", "--arrival"},
		{"--url http://h/ --seed 3", "--seed"},
		{"--url http://h/ --rate 5 --seed -1", "--seed"},
		{"--url http://h/ --rate 5 --seed 18446744073709551616", "--seed"},
		{"--url http://h/ --timeout 0", "--timeout"},
		{"--url http://h/ --timeout 86401", "--timeout"},
		{"--url ftp://h/", "--url"},
		{"--url http://", "--url"},
		{"--url 127.0.0.1:8080", "--url"},
		{"--url http://h:0/", "--url"},
		{"--url http://h:65536/", "--url"},
		// streamed bodies and targets
		{"--url http://h/ --upload chunked", "--upload"},
		{"--url http://h/ --download lazily", "--download"},
		{"--url http://h/ --chunk-size 0", "--chunk-size"},
		{"--url http://h/ --chunk-size 16777217", "--chunk-size"},
		{"--url http://h/ --chunk-size 1k", "--chunk-size"},
		{"--url http://h/ --upload stream", "--upload"},
		{"--url http://h/ --targets /no/such/targets", "--targets"},
		{"--url http://h/ --targets " + os.DevNull, "--targets"}, // no targets in it
	} {
		_, err := ParseOptions(strings.Fields(c.args), io.Discard)
		var usage *UsageError
		if !errors.As(err, &usage) {
			t.Errorf("%s: want a usage error, got %v", c.args, err)
			continue
		}
		if strings.Contains(usage.msg, "\n") || !strings.Contains(usage.msg, c.flag) {
			t.Errorf("%s: %q should be one line naming %s", c.args, usage.msg, c.flag)
		}
	}
}

func TestDefaultsAndTheUpload(t *testing.T) {
	o, err := ParseOptions([]string{"--url", "http://h/"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Workers != 10 || o.Requests != 100 || o.Timeout != 30 || o.Connection != "keep-alive" || o.OpenLoop() ||
		o.Method != "GET" || o.Body != nil || o.Record != "samples" {
		t.Errorf("defaults: %+v", o)
	}
	o, err = ParseOptions(strings.Fields("--url http://h/ --rate 10 --duration 2 --method PUT --body-size 3"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Requests != 0 || o.Duration != 2 || string(o.Body) != "abc" ||
		string(o.Expected) != "3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("open loop upload: %+v", o)
	}
	if got := string(UploadBody(28)); got != "abcdefghijklmnopqrstuvwxyzab" {
		t.Errorf("body %q", got)
	}
}

func TestTheOpenLoopsFlagsAndTheirDefaults(t *testing.T) {
	o, err := ParseOptions(strings.Fields("--url HTTP://[::1]:8080/x --rate 10 --seed 18446744073709551615"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Arrival != "uniform" || o.Seed != 1<<64-1 {
		t.Errorf("%+v", o)
	}
	o, err = ParseOptions(strings.Fields("--url http://h/ --rate 10"), io.Discard)
	if err != nil || o.Seed != 1 || o.Arrival != "uniform" {
		t.Errorf("defaults: %+v %v", o, err)
	}
}

func TestStreamedBodiesFlagsAndTheirDefaults(t *testing.T) {
	o, err := ParseOptions([]string{"--url", "http://h/"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.Upload != "whole" || o.Download != "whole" || o.ChunkSize != 65536 || len(o.Targets) != 1 ||
		o.Targets[0].URL != "http://h/" || o.Targets[0].Check {
		t.Errorf("defaults: %+v", o)
	}
	// a streamed upload is never whole in memory: no Body, the answer hashed from the pattern
	o, err = ParseOptions(strings.Fields("--url http://h/ --method POST --body-size 3 --upload stream --chunk-size 1"),
		io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if tg := o.Targets[0]; o.Body != nil || tg.Body != nil || tg.Size != 3 || !tg.Check || o.ChunkSize != 1 ||
		string(o.Expected) != "3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad" {
		t.Errorf("streamed upload: %+v %+v", o, tg)
	}
	if _, err := ParseOptions(strings.Fields("--url http://h/ --download stream --chunk-size 16777216"), io.Discard); err != nil {
		t.Errorf("a 16 MiB chunk: %v", err)
	}
}

// writes a targets file (and a body file beside it) into a test's folder
func targetsFile(t *testing.T, lines ...string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body"), []byte("hello body"), 0o600); err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(strings.Join(lines, "\n"), "@BODY", "@"+filepath.Join(dir, "body"))
	path := filepath.Join(dir, "targets")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestATargetsFileIsReadOnceWithItsBodies(t *testing.T) {
	path := targetsFile(t, "# a comment", "", "GET http://h/a", "  POST http://h:8080/upload @BODY  ",
		"PUT https://[::1]/x @BODY", "POST http://h/empty")
	o, err := ParseOptions([]string{"--url", "http://h/a", "--targets", path, "--upload", "stream"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, tg := range o.Targets {
		got = append(got, tg.Method+" "+tg.URL+" "+string(tg.Body))
		if tg.Check || tg.Size != int64(len(tg.Body)) {
			t.Errorf("%+v: a target's answer is not compared; its size is its body's", tg)
		}
	}
	want := []string{"GET http://h/a ", "POST http://h:8080/upload hello body", "PUT https://[::1]/x hello body",
		"POST http://h/empty "}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("targets %q, want %q", got, want)
	}
	if &o.Targets[1].Body[0] != &o.Targets[2].Body[0] {
		t.Errorf("a body file named twice is read twice")
	}
}

func TestABadTargetIsOneLineNamingTheFileAndTheLine(t *testing.T) {
	for _, c := range []struct {
		line, why string
	}{
		{"DELETE http://h/", "GET, POST or PUT"},
		{"get http://h/", "GET, POST or PUT"},
		{"GET", "not a target"},
		{"GET http://h/ extra", "not a target"},
		{"POST http://h/ @BODY @BODY", "not a target"},
		{"GET /relative/path", "URL"},
		{"GET ftp://h/", "URL"},
		{"GET http://h:0/", "URL"},
		{"GET http://h/ @BODY", "a GET sends no body"},
		{"POST http://h/ @relative/body", "absolute"},
		{"POST http://h/ @/no/such/body", "body file"},
		{"Host: example.com", "GET, POST or PUT"}, // a header line of vegeta's form
	} {
		path := targetsFile(t, "# line 1", "GET http://h/", c.line)
		_, err := ParseOptions([]string{"--url", "http://h/", "--targets", path}, io.Discard)
		var usage *UsageError
		if !errors.As(err, &usage) {
			t.Errorf("%s: want a usage error, got %v", c.line, err)
			continue
		}
		if strings.Contains(usage.msg, "\n") || !strings.Contains(usage.msg, "--targets "+path+", line 3: ") ||
			!strings.Contains(usage.msg, c.why) {
			t.Errorf("%s: %q should be one line naming the file, line 3 and %q", c.line, usage.msg, c.why)
		}
	}
	// --method and --body-size: a target names its own
	path := targetsFile(t, "GET http://h/")
	for _, flag := range []string{"--method GET", "--body-size 0"} {
		_, err := ParseOptions(append([]string{"--url", "http://h/", "--targets", path}, strings.Fields(flag)...), io.Discard)
		var usage *UsageError
		if !errors.As(err, &usage) || !strings.Contains(usage.msg, strings.Fields(flag)[0]) {
			t.Errorf("%s with --targets: %v", flag, err)
		}
	}
}

// What net/http cannot do is exit 3, once the command line is known to be good: bad usage wins (docs/raw-format.md).
func TestHTTP3IsUnsupportedAfterTheUsageChecks(t *testing.T) {
	_, err := ParseOptions(strings.Fields("--url https://h/ --http 3"), io.Discard)
	var unsupported *Unsupported
	if !errors.As(err, &unsupported) || !strings.HasPrefix(unsupported.Error(), "unsupported: HTTP/3") {
		t.Errorf("--http 3 over https: want unsupported, got %v", err)
	}
	for _, args := range []string{
		"--url https://h/ --http 3 --ca-file /no/such/ca.pem",
		"--url http://h/ --http 3",
		"--url https://h/ --http 3 --warmup -1",
	} {
		_, err := ParseOptions(strings.Fields(args), io.Discard)
		var usage *UsageError
		if !errors.As(err, &usage) {
			t.Errorf("%s: want a usage error (bad usage before unsupported), got %v", args, err)
		}
	}
}
