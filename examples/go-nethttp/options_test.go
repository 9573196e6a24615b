package main

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestBadUsageIsOneLineNamingTheFlag(t *testing.T) {
	for _, c := range []struct{ args, flag string }{
		{"--url u --rate x", "--rate"},
		{"--url u --rate 0", "--rate"},
		{"--url u --duration 1", "--duration"},
		{"--url u --rate 5 --duration 1 --requests 3", "--requests"},
		{"--url u --rate 2000000 --workers 1", "--rate"},
		{"--url u --body-size 3", "--body-size"},
		{"--url u --method POST --body-size -1", "--body-size"},
		{"--url u --method POST --body-size 1073741825", "--body-size"},
		{"--url u --workers 0", "--workers"},
		{"--url u --warmup -1", "--warmup"},
		{"--url u --timeout nan", "--timeout"},
		{"--url u --connection close", "--connection"},
		{"--url u --arrival burst", "--arrival"},
		{"--url u --record all", "--record"},
		{"--url u --method DELETE", "--method"},
		{"--url u --ca-file /no/such/ca.pem", "--ca-file"},
		{"--url u --ca-file x --insecure", "--insecure"},
		{"--url u --bogus", "--bogus"},
		{"--workers 2", "--url"},
		{"--url u --client-scope all", "--client-scope"},
		{"--url u --http 3", "--http"},
		{"--url u --client-scope shared --connection new", "--client-scope"},
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
