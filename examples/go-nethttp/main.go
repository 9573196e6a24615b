// go-nethttp-driver: a clientbench driver (docs/raw-format.md, clientbench.raw/4) for Go's net/http, to run as
// an external row: `clientbench run --driver go-nethttp='build/bin/go-nethttp-driver'`.
//
// W goroutines, each with its own http.Client and Transport (one keep-alive connection; a new client per
// timed request with --connection new), a ready gate and t0, the closed or the open loop, the failure classes,
// uploads whole or streamed with the answer checked (the /upload line or the echo), answers read whole or in
// chunks, a file of targets, samples or HdrHistogram buckets, CPU time and peak RSS; with --phases, each
// request's phases (phases.go) summed per worker.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
)

const prog = "go-nethttp-driver"

const schemaID = "clientbench.raw/4"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	o, err := ParseOptions(args, os.Stdout)
	var usage *UsageError
	var unsupported *Unsupported
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		fmt.Fprintf(os.Stderr, "%s: error: %s\n", prog, usage.msg)
		return 2
	case errors.As(err, &unsupported):
		fmt.Fprintln(os.Stderr, unsupported.Error())
		return 3
	case err != nil:
		fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
		return 1
	}
	doc, err := Document(o, Run(o))
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
		return 1
	}
	out := bufio.NewWriterSize(os.Stdout, 1<<16)
	if err := json.NewEncoder(out).Encode(doc); err != nil {
		fmt.Fprintf(os.Stderr, "%s: writing the document: %v\n", prog, err)
		return 1
	}
	if err := out.Flush(); err != nil {
		fmt.Fprintf(os.Stderr, "%s: writing the document: %v\n", prog, err)
		return 1
	}
	return 0
}

// Document is the raw document of a run.
func Document(o *Options, g *Group) (map[string]any, error) {
	keys := PhaseKeys(o)
	workers := make([]*WorkerJSON, len(g.Workers))
	for i, w := range g.Workers {
		var err error
		if workers[i], err = w.JSON(g.T0, o.Record, keys); err != nil {
			return nil, err
		}
	}
	open := o.OpenLoop()
	client := map[string]any{
		"language":        "Go",
		"library":         "net/http",
		"library_version": strings.TrimPrefix(runtime.Version(), "go"),
		"mode":            "sync",
		"gil":             nil,
		"tls":             g.Workers[0].tls,
		"protocol":        protocol(g.Workers[0].protoMajor),
		"go":              map[string]any{"version": runtime.Version(), "gomaxprocs": runtime.GOMAXPROCS(0)},
	}
	if keys != nil {
		client["phases"] = keys
	}
	doc := map[string]any{
		"schema": schemaID,
		"client": client,
		"workload": map[string]any{
			"url":          o.URL,
			"workers":      o.Workers,
			"requests":     nullIf(o.Requests, o.Duration > 0),
			"duration_s":   nullIf(o.Duration, o.Duration == 0),
			"warmup":       o.Warmup,
			"timeout_s":    o.Timeout,
			"connection":   o.Connection,
			"loop":         map[bool]string{true: "open", false: "closed"}[open],
			"rate":         nullIf(o.Rate, !open),
			"arrival":      nullIf(o.Arrival, !open),
			"seed":         nullIf(o.Seed, !open || o.Arrival != "poisson"), // uniform schedules draw nothing
			"method":       o.Method,
			"body_size":    o.BodySize,
			"record":       o.Record,
			"client_scope": o.Scope,
			"http":         o.HTTP,
			"upload":       o.Upload,
			"download":     o.Download,
			"chunk_size":   o.ChunkSize,
			"targets":      nullIf(o.TargetsAt, o.TargetsAt == ""),
		},
		"wall_ns": g.WallNs,
		"cpu_ns":  g.CPUNs,
		"workers": workers,
	}
	if rss, ok := peakRSSKiB(); ok {
		doc["peak_rss_kib"] = rss
	}
	return doc, nil
}

// protocol names the HTTP version of worker 0's last successful response (null before one).
func protocol(major int) any {
	switch major {
	case 1:
		return "HTTP/1.1"
	case 2:
		return "HTTP/2"
	}
	return nil
}

func nullIf(v any, null bool) any {
	if null {
		return nil
	}
	return v
}

// cpuNs is the process's CPU time (user + sys), ns.
func cpuNs() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// peakRSSKiB is the process's peak resident set (VmHWM), KiB.
func peakRSSKiB() (int64, bool) {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			fields := strings.Fields(rest)
			if len(fields) > 0 {
				v, err := strconv.ParseInt(fields[0], 10, 64)
				return v, err == nil
			}
		}
	}
	return 0, false
}
