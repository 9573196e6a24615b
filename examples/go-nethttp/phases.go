package main

// The phases of a request (--phases, docs/raw-format.md, contract version 4), timed with net/http/httptrace on
// the monotonic clock. The trace is installed only with --phases: without it a request reads no clock more.
//
//   dns      DNSStart -> DNSDone: listed only when a URL's host is a name (an IP literal is not resolved)
//   connect  the first ConnectStart -> the ConnectDone without error (several addresses tried: all of them)
//   tls      TLSHandshakeStart -> TLSHandshakeDone (0 over http://)
//   send     GotConn -> WroteRequest: from the connection handed to the request, which net/http then writes
//            (its writer goroutine, headers and body), to the request's last byte written to the connection
//   wait     WroteRequest -> GotFirstResponseByte: HTTP/1.1's first read that returns bytes of the answer;
//            HTTP/2's HEADERS frame of the answer read whole (net/http tells no earlier byte; the headers of
//            our answers come in one read)
//   receive  GotFirstResponseByte -> the answer's body read to its end
//
// dns, connect and tls count only when the request's connection is new (GotConn neither Reused nor WasIdle):
// net/http dials on its own goroutine, with the request's trace, and may put the connection it dials into the
// pool when another frees up first; those events, and any after GotConn, belong to no request. (With
// --client-scope shared, a request can also be handed a new connection another request dialed, while its own
// dial goes on: its dns, connect and tls are then those of its own dial.)

import (
	"crypto/tls"
	"net"
	"net/http/httptrace"
	"net/url"
	"sync"
)

// the phases in the contract's order, indexes of a request's durations
const (
	phaseDNS = iota
	phaseConnect
	phaseTLS
	phaseSend
	phaseWait
	phaseReceive
	numPhases
)

var phaseNames = [numPhases]string{"dns", "connect", "tls", "send", "wait", "receive"}

// PhaseTimes is one request's phases, ns, indexed as phaseNames.
type PhaseTimes [numPhases]int64

// PhaseKeys is the phases the driver records for o (client.phases): none without --phases; dns when a URL's
// host is a name.
func PhaseKeys(o *Options) []string {
	if !o.Phases {
		return nil
	}
	keys := make([]string, 0, numPhases)
	for i, name := range phaseNames {
		if i != phaseDNS || resolvesAName(o.Targets) {
			keys = append(keys, name)
		}
	}
	return keys
}

func resolvesAName(targets []*Target) bool {
	for _, t := range targets {
		if u, err := url.Parse(t.URL); err == nil && net.ParseIP(u.Hostname()) == nil {
			return true
		}
	}
	return false
}

// requestTrace collects one request's events. The dial's hooks run on net/http's dialing goroutine, which can
// outlive the request: every field is under mu.
type requestTrace struct {
	mu                  sync.Mutex
	gotConns, wrotes    int  // more than one: a retry or a redirect, whose phases are not recorded
	gotConn, newConn    bool // the connection was handed over; it was dialed for this request
	dnsStart, dnsDone   int64
	connStart, connDone int64
	tlsStart, tlsDone   int64
	gotConnAt, wrote    int64
	firstByte           int64
	wroteErr            bool
}

// clientTrace is the httptrace hooks that fill tr.
func (tr *requestTrace) clientTrace() *httptrace.ClientTrace {
	// mark stores the time in *at, unless the connection has been handed over (the dial is then another's)
	mark := func(at *int64, first bool) {
		t := now()
		tr.mu.Lock()
		defer tr.mu.Unlock()
		if !tr.gotConn && (!first || *at == 0) {
			*at = t
		}
	}
	return &httptrace.ClientTrace{
		DNSStart:     func(httptrace.DNSStartInfo) { mark(&tr.dnsStart, true) },
		DNSDone:      func(httptrace.DNSDoneInfo) { mark(&tr.dnsDone, false) },
		ConnectStart: func(string, string) { mark(&tr.connStart, true) },
		ConnectDone: func(_, _ string, err error) {
			if err == nil {
				mark(&tr.connDone, true)
			}
		},
		TLSHandshakeStart: func() { mark(&tr.tlsStart, true) },
		TLSHandshakeDone: func(_ tls.ConnectionState, err error) {
			if err == nil {
				mark(&tr.tlsDone, false)
			}
		},
		GotConn: func(info httptrace.GotConnInfo) {
			t := now()
			tr.mu.Lock()
			defer tr.mu.Unlock()
			tr.gotConns++
			tr.gotConn, tr.gotConnAt = true, t
			tr.newConn = !info.Reused && !info.WasIdle
		},
		WroteRequest: func(info httptrace.WroteRequestInfo) {
			t := now()
			tr.mu.Lock()
			defer tr.mu.Unlock()
			tr.wrotes++
			tr.wrote, tr.wroteErr = t, info.Err != nil
		},
		GotFirstResponseByte: func() {
			t := now()
			tr.mu.Lock()
			defer tr.mu.Unlock()
			tr.firstByte = t
		},
	}
}

// Traced is a request's trace, and when its body was read to its end.
type Traced struct {
	tr       *requestTrace
	bodyDone int64
}

type phaseState int

const (
	phasesTold    phaseState = iota
	phasesNotYet             // WroteRequest has not run yet: look again later
	phasesUnknown            // a retry or a redirect (several exchanges in one request), or a hook that did not run
)

// phases are the request's durations. net/http calls WroteRequest on the goroutine that wrote the request
// (HTTP/1.1's writeLoop, HTTP/2's request goroutine), after the write: it can run after the answer was read
// (seen over HTTP/2), hence phasesNotYet; the worker asks again once its loop is over.
func (t *Traced) phases() (p PhaseTimes, state phaseState) {
	tr := t.tr
	tr.mu.Lock()
	defer tr.mu.Unlock()
	switch {
	case tr.gotConns != 1 || tr.wrotes > 1 || tr.wroteErr || tr.firstByte == 0:
		return p, phasesUnknown
	case tr.wrotes == 0:
		return p, phasesNotYet
	}
	if tr.newConn {
		p[phaseDNS] = span(tr.dnsStart, tr.dnsDone)
		p[phaseConnect] = span(tr.connStart, tr.connDone)
		p[phaseTLS] = span(tr.tlsStart, tr.tlsDone)
	}
	// the answer's first byte before the request's last one (a server that answers while the body comes in, or
	// WroteRequest run late): send ends at the first byte, wait is 0, and the rest of the writing overlaps
	// receive, so that no time is counted twice
	sent := min(tr.wrote, tr.firstByte)
	p[phaseSend] = max(0, sent-tr.gotConnAt)
	p[phaseWait] = tr.firstByte - sent
	p[phaseReceive] = max(0, t.bodyDone-tr.firstByte)
	return p, phasesTold
}

// span is done - start, 0 when either did not happen
func span(start, done int64) int64 {
	if start == 0 || done == 0 || done < start {
		return 0
	}
	return done - start
}
