package main

// The contract's command line (docs/raw-format.md, "Command line"): the flags, their checks (bad usage is one
// line on stderr naming the flag, exit status 2), what each request sends (the workload's one request, or the
// targets file's), and the TLS settings every worker's client is built with.

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
)

const (
	maxBodySize       = 1 << 30   // the server's /upload accepts up to 1 GiB
	maxRatePerWorker  = 1_000_000 // a worker's schedule may not be finer than 1 µs
	defaultRequests   = 100
	defaultWorkers    = 10
	defaultTimeoutSec = 30.0
	maxTimeoutSec     = 86_400.0 // a day: a longer latency does not fit the runner's histograms
	maxSeed           = "18446744073709551615"
	defaultChunkSize  = 65536
	maxChunkSize      = 16 << 20 // 16 MiB: the contract's bound on a streamed body's chunk
)

// Options are the flags as parsed and checked.
type Options struct {
	URL        string
	Workers    int
	Requests   int     // timed requests per worker; 0 with --duration
	Duration   float64 // seconds; 0 without --duration
	Warmup     int
	Timeout    float64 // seconds
	Connection string  // keep-alive | new
	CAFile     string
	Insecure   bool
	Rate       float64 // requests/s over all workers; 0: a closed loop
	Arrival    string  // uniform | poisson
	Seed       uint64  // the Poisson schedules' SplitMix64 starts at Seed + w
	Method     string  // GET | POST | PUT
	BodySize   int
	Record     string // samples | histogram
	Scope      string // per-worker | shared (--client-scope)
	HTTP       string // 1.1 | 2 (--http)
	Upload     string // whole | stream (--upload)
	Download   string // whole | stream (--download)
	ChunkSize  int    // a streamed body's chunk, bytes (--chunk-size)
	TargetsAt  string // --targets FILE ("" without)
	Phases     bool   // --phases: record each request's phases (phases.go)

	Body     []byte      // what every POST/PUT sends, in one buffer with --upload whole (nil for GET or streamed)
	Expected []byte      // what /upload answers to the workload's body
	Pattern  *Pattern    // the contract's body pattern, a chunk's worth of it (streamed bodies, echo checks)
	Targets  []*Target   // what worker w's request k sends: Targets[(w + k) mod T] (one without --targets)
	TLS      *tls.Config // from --ca-file / --insecure
}

// OpenLoop says whether --rate was given.
func (o *Options) OpenLoop() bool { return o.Rate > 0 }

// UsageError is bad usage: one line on stderr, exit status 2. Its messages are the contract's wording
// (python/clientbench/schema/contract.json, the table of bad usage in docs/raw-format.md).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &UsageError{fmt.Sprintf(format, args...)} }

// Unsupported is what this client cannot do at all (docs/raw-format.md, "Exit status"): exit 3, one line
// `unsupported: <what>`; found once the command line is known to be good (bad usage wins).
type Unsupported struct{ what string }

func (e *Unsupported) Error() string { return "unsupported: " + e.what }

// a flag.Value that checks its text as it is set
type checked struct {
	text  string
	parse func(string) error
}

func (c *checked) String() string     { return c.text }
func (c *checked) Set(s string) error { c.text = s; return c.parse(s) }

// whole is a whole number from min to max (max < 0: no bound above).
func whole(dst *int, min, max int) *checked {
	return &checked{strconv.Itoa(*dst), func(s string) error {
		v, err := strconv.Atoi(s)
		if err != nil || v < min || (max >= 0 && v > max) {
			if max < 0 {
				return fmt.Errorf("must be a whole number >= %d, got '%s'", min, s)
			}
			return fmt.Errorf("must be a whole number from %d to %d, got '%s'", min, max, s)
		}
		*dst = v
		return nil
	}}
}

// positive is a finite number above 0, at most max (max <= 0: no bound above).
func positive(dst *float64, max float64) *checked {
	return &checked{"", func(s string) error {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v > 0) || math.IsInf(v, 0) || (max > 0 && v > max) {
			if max > 0 {
				return fmt.Errorf("must be a positive number, at most %g, got '%s'", max, s)
			}
			return fmt.Errorf("must be a positive number, got '%s'", s)
		}
		*dst = v
		return nil
	}}
}

func seed(dst *uint64) *checked {
	return &checked{"1", func(s string) error {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("must be a whole number from 0 to %s, got '%s'", maxSeed, s)
		}
		*dst = v
		return nil
	}}
}

func oneOf(dst *string, choices ...string) *checked {
	return &checked{*dst, func(s string) error {
		for _, c := range choices {
			if s == c {
				*dst = s
				return nil
			}
		}
		return fmt.Errorf("must be one of %s, got '%s'", strings.Join(choices, ", "), s)
	}}
}

// ParseOptions parses the command line (without the program name). A *UsageError is bad usage; flag.ErrHelp
// asks for the usage text, which has then been written to `help`.
func ParseOptions(args []string, help io.Writer) (*Options, error) {
	o := &Options{
		Workers: defaultWorkers, Timeout: defaultTimeoutSec, Connection: "keep-alive", Arrival: "uniform",
		Seed: 1, Method: "GET", Record: "samples", Scope: "per-worker", HTTP: "1.1", Upload: "whole",
		Download: "whole", ChunkSize: defaultChunkSize,
	}
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported as one line below
	fs.StringVar(&o.URL, "url", "", "URL every request goes to (required)")
	fs.Var(whole(&o.Workers, 1, -1), "workers", "W workers, each with its own client and connection")
	fs.Var(whole(&o.Requests, 1, -1), "requests", "N timed requests per worker (default 100)")
	fs.Var(positive(&o.Duration, 0), "duration", "open loop: the schedule lasts this many seconds")
	fs.Var(whole(&o.Warmup, 0, -1), "warmup", "K untimed requests per worker before the timed loop")
	fs.Var(positive(&o.Timeout, maxTimeoutSec), "timeout", "bounds each whole request, seconds (default 30, at most 86400)")
	fs.Var(oneOf(&o.Connection, "keep-alive", "new"), "connection", "keep-alive or new (a new client per request)")
	fs.StringVar(&o.CAFile, "ca-file", "", "https: trust the CA certificates in this PEM file")
	fs.BoolVar(&o.Insecure, "insecure", false, "https: do not verify the server's certificate")
	fs.Var(positive(&o.Rate, 0), "rate", "open loop: R requests/s over all workers")
	fs.Var(oneOf(&o.Arrival, "uniform", "poisson"), "arrival", "open loop: uniform or poisson")
	fs.Var(seed(&o.Seed), "seed", "poisson: worker w's SplitMix64 starts at S + w (default 1)")
	fs.Var(oneOf(&o.Method, "GET", "POST", "PUT"), "method", "GET, POST or PUT")
	fs.Var(whole(&o.BodySize, 0, maxBodySize), "body-size", "POST/PUT: the request body's length in bytes")
	fs.Var(oneOf(&o.Record, "samples", "histogram"), "record", "samples or histogram")
	fs.Var(oneOf(&o.Scope, "per-worker", "shared"), "client-scope", "per-worker clients, or one shared by all workers")
	fs.Var(oneOf(&o.HTTP, "1.1", "2", "3"), "http", "HTTP/1.1, 2 (ALPN h2 over https, prior knowledge over http) or 3 (exit 3: none here)")
	fs.Var(oneOf(&o.Upload, "whole", "stream"), "upload", "the request body in one buffer, or streamed in chunks")
	fs.Var(oneOf(&o.Download, "whole", "stream"), "download", "the response body read whole, or in chunks, each dropped")
	fs.Var(whole(&o.ChunkSize, 1, maxChunkSize), "chunk-size", "a streamed body's chunk, bytes (default 65536, at most 16 MiB)")
	fs.StringVar(&o.TargetsAt, "targets", "", "a file of 'METHOD URL [@BODYFILE]' lines every worker cycles through")
	fs.BoolVar(&o.Phases, "phases", false, "record each request's phases (dns, connect, tls, send, wait, receive)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(help, "usage: %s --url URL [flags] (the clientbench driver contract, docs/raw-format.md)\n", prog)
			fs.SetOutput(help)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, &UsageError{flagMessage(err.Error())}
	}
	if fs.NArg() > 0 {
		return nil, usagef("unexpected argument %q", fs.Arg(0))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if err := o.finish(given); err != nil {
		return nil, err
	}
	return o, nil
}

// flag's messages in the contract's wording: "--name: ..." (flag names a flag "-name")
func flagMessage(msg string) string {
	if m := invalidValue.FindStringSubmatch(msg); m != nil {
		return "--" + m[1] + ": " + m[2]
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return "--" + strings.TrimPrefix(name, "-") + ": unknown flag"
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "--" + strings.TrimPrefix(name, "-") + ": needs a value"
	}
	return msg
}

var invalidValue = regexp.MustCompile(`^invalid value ".*" for flag -(\S+): (.*)$`)

// finish makes the checks between flags, the upload body and the TLS settings.
func (o *Options) finish(given map[string]bool) error {
	if !given["url"] {
		return usagef("--url: required")
	}
	if err := checkURL(o.URL); err != nil {
		return err
	}
	switch {
	case given["arrival"] && !given["rate"]:
		return usagef("--arrival goes with --rate (an open loop)")
	case given["seed"] && !given["rate"]:
		return usagef("--seed goes with --rate (an open loop)")
	case given["duration"] && !given["rate"]:
		return usagef("--duration goes with --rate (an open loop)")
	case given["duration"] && given["requests"]:
		return usagef("--duration and --requests exclude each other")
	case o.Rate > 0 && o.Rate/float64(o.Workers) > maxRatePerWorker:
		return usagef("--rate: at most %d requests/s per worker (a schedule finer than 1 µs), got %g over %d workers",
			maxRatePerWorker, o.Rate, o.Workers)
	case o.Connection == "new" && o.Scope == "shared":
		return usagef("--connection new does not go with --client-scope shared (a shared client is made once)")
	case given["targets"] && given["method"]:
		return usagef("--method goes without --targets (each target names its method)")
	case given["targets"] && given["body-size"]:
		return usagef("--body-size goes without --targets (each target names its body)")
	case o.BodySize > 0 && o.Method == "GET":
		return usagef("--body-size goes with --method POST or PUT (a GET sends no body)")
	case o.Upload == "stream" && o.Method == "GET" && !given["targets"]:
		return usagef("--upload stream goes with --method POST or PUT, or --targets (a GET sends no body)")
	case o.HTTP == "3" && !given["targets"] && !isHTTPS(o.URL):
		return usagef("--http: 3 is HTTP/3 over QUIC, which needs https:// URLs, got '%s'", o.URL)
	case given["ca-file"] && o.Insecure:
		return usagef("--ca-file and --insecure exclude each other")
	}
	if !given["duration"] && !given["requests"] {
		o.Requests = defaultRequests
	}
	o.Pattern = NewPattern(o.ChunkSize)
	if given["targets"] {
		targets, err := ReadTargets(o.TargetsAt)
		if err != nil {
			return err
		}
		for _, t := range targets {
			if o.HTTP == "3" && !isHTTPS(t.URL) {
				return usagef("--http: 3 is HTTP/3 over QUIC, which needs https:// URLs, got '%s' in %s", t.URL, o.TargetsAt)
			}
		}
		o.Targets = targets
	} else {
		o.Targets = []*Target{o.workloadTarget()}
	}
	switch {
	case o.Insecure:
		o.TLS = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for with --insecure
	case o.CAFile != "":
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return usagef("--ca-file: cannot read %s (%v)", o.CAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) { // CERTIFICATE blocks only: a CRL alone is none
			return usagef("--ca-file: no PEM certificate in %s", o.CAFile)
		}
		o.TLS = &tls.Config{RootCAs: pool} // replaces the system's roots
	default:
		o.TLS = &tls.Config{}
	}
	// what net/http cannot do, once the command line is known to be good (docs/raw-format.md: exit 2 wins)
	if o.HTTP == "3" {
		return &Unsupported{"HTTP/3 (Go's net/http speaks HTTP/1.1 and HTTP/2)"}
	}
	return nil
}

func isHTTPS(url string) bool { return len(url) >= 8 && strings.EqualFold(url[:8], "https://") }

// workloadTarget is the one request of a run without --targets: --url with --method and the pattern body,
// whose answer is checked.
func (o *Options) workloadTarget() *Target {
	t := &Target{Method: o.Method, URL: o.URL}
	if o.Method != "GET" {
		t.Size, t.Check = int64(o.BodySize), true
		if o.Upload == "whole" {
			o.Body = UploadBody(o.BodySize)
			t.Body = o.Body
		}
		o.Expected = o.Pattern.Answer(int64(o.BodySize)) // hashed chunk by chunk: a streamed body is never whole
	}
	return t
}

// checkURL: --url is an absolute http:// or https:// URL with a host, and a port from 1 to 65535 if it has one
// (docs/raw-format.md); what net/http refuses beyond that is a counted failure (InvalidUrl).
func checkURL(text string) error {
	if why := urlProblem(text); why != "" {
		return usagef("--url: %s", why)
	}
	return nil
}

// urlProblem says what makes text unusable as a request's URL ("" when it is usable).
func urlProblem(text string) string {
	if strings.IndexFunc(text, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return fmt.Sprintf("must not contain whitespace or control characters, got '%s'", text)
	}
	u, err := url.Parse(text)
	switch {
	case err != nil:
		return fmt.Sprintf("is not a URL (%v), got '%s'", err, text)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Opaque != "": // url.Parse lowers the scheme
		return fmt.Sprintf("must be an http:// or https:// URL, got '%s'", text)
	case u.Hostname() == "":
		return fmt.Sprintf("has no host, got '%s'", text)
	}
	if port := u.Port(); port != "" { // empty ("http://h:/"): the scheme's, as RFC 3986 says
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("the port must be from 1 to 65535, got '%s'", text)
		}
	}
	return ""
}

// UploadBody is the contract's request body in one buffer: byte i is 'a' + (i mod 26).
func UploadBody(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}
