package main

// Targets (docs/raw-format.md, "Targets"): --targets FILE lists the requests every worker cycles through, one
// per line, `METHOD URL` or `METHOD URL @/absolute/body/path`; worker w's request k goes to target (w + k) mod T.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Target is what one request sends: a target of the file, or the workload's one request without --targets.
type Target struct {
	Method string
	URL    string
	Body   []byte // the body in one buffer: a target's file, or the pattern with --upload whole (nil: none, or streamed from the pattern)
	Size   int64  // the body's length
	Check  bool   // the workload's upload of the pattern: its answer is compared; a target's is not
}

// Pick is worker w's request k (warm-up and timed requests each counted from 0).
func Pick(targets []*Target, w, k int) *Target {
	return targets[(w+k)%len(targets)]
}

// ReadTargets reads the targets file and each body file it names, once (a file named twice is read once).
// A file that cannot be read or a line that is not a target is bad usage naming the line.
func ReadTargets(path string) ([]*Target, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, usagef("--targets %s: cannot read it (%v)", path, err)
	}
	bodies := map[string][]byte{}
	var targets []*Target
	for i, line := range strings.Split(string(text), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		bad := func(format string, args ...any) error {
			return usagef("--targets %s, line %d: %s", path, i+1, fmt.Sprintf(format, args...))
		}
		if len(fields) < 2 || len(fields) > 3 || (len(fields) == 3 && !strings.HasPrefix(fields[2], "@")) {
			return nil, bad("not a target: 'METHOD URL' or 'METHOD URL @/absolute/body/path'")
		}
		t := &Target{Method: fields[0], URL: fields[1]}
		if t.Method != "GET" && t.Method != "POST" && t.Method != "PUT" {
			return nil, bad("the method must be GET, POST or PUT, got %q", t.Method)
		}
		if why := urlProblem(t.URL); why != "" {
			return nil, bad("the URL %s", why)
		}
		if len(fields) == 3 {
			file := fields[2][1:]
			switch {
			case t.Method == "GET":
				return nil, bad("a GET sends no body")
			case !filepath.IsAbs(file):
				return nil, bad("the body file must be an absolute path, got %q", file)
			}
			body, seen := bodies[file]
			if !seen {
				if info, err := os.Stat(file); err == nil && info.Size() > maxBodySize {
					return nil, bad("the body file %s is above 1 GiB", file)
				}
				if body, err = os.ReadFile(file); err != nil {
					return nil, bad("cannot read the body file %s (%v)", file, err)
				}
				bodies[file] = body
			}
			t.Body, t.Size = body, int64(len(body))
		}
		targets = append(targets, t)
	}
	if len(targets) == 0 {
		return nil, usagef("--targets %s: no targets in it (one 'METHOD URL [@BODYFILE]' per line)", path)
	}
	return targets, nil
}
