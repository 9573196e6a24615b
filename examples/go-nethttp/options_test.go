package main

import (
	"errors"
	"io"
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
