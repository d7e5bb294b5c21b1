package engine

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"sort"
	"strconv"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/targets"
)

// The transports a URL run's attempts go through (Engine.Transport).
const (
	TransportFastHTTP = "fasthttp"
	TransportNetHTTP  = "net/http"
	TransportEvLoop   = "evloop"
	// TransportRaw is a script's plain http:// requests' transport
	// (DriverConfig.RawHTTP, raw.go); not a URL run's.
	TransportRaw = "raw"
)

// TransportEnv, when Config.Transport is "", names the HTTP/1.1
// transport: "fasthttp" keeps a run on fasthttp (the way back, should the
// event loop misbehave), "evloop" is the default's choice. The choice is
// made once per run (transportFor): the event loop takes a closed-loop
// run of plain http:// targets that all name one address and port (an IP,
// or a host name looked up once: loopAddr), on
// Linux, and an open-loop (--rate) one only when asked by name
// ("evloop"); anything else — https, --http2, a name that does not
// resolve, several addresses, another system — runs on fasthttp.
const TransportEnv = "THROTTLE_TRANSPORT"

// transportName checks a Transport setting, taking TransportEnv's for "".
func transportName(s string) (string, error) {
	if s == "" {
		s = os.Getenv(TransportEnv)
	}
	switch s {
	case "", TransportEvLoop, TransportFastHTTP:
	default:
		return "", fmt.Errorf("unknown HTTP/1.1 transport %q (%s): want %s or %s", s, TransportEnv, TransportEvLoop, TransportFastHTTP)
	}
	// The loop's own knobs are checked with the choice, so a typo in one
	// is refused before the run, not taken as the default.
	if v := os.Getenv("THROTTLE_EVLOOP_LOOPS"); v != "" {
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			return "", fmt.Errorf("THROTTLE_EVLOOP_LOOPS=%q: want a whole number of loops, 1 or more", v)
		}
	}
	if v := os.Getenv("THROTTLE_EVLOOP_RAWWAIT"); v != "" && v != "0" && v != "1" {
		return "", fmt.Errorf("THROTTLE_EVLOOP_RAWWAIT=%q: want 0 (the scheduler-told wait) or 1 (the raw wait, the default)", v)
	}
	if v := os.Getenv(RxStampEnv); v != "" && v != "0" && v != "1" {
		return "", fmt.Errorf("%s=%q: want 0 (user-space timings) or 1 (the kernel's receive stamps, the default)", RxStampEnv, v)
	}
	return s, nil
}

// evLoops is how many event loops a run has: THROTTLE_EVLOOP_LOOPS, else
// one per P but one (at least one). The P left over keeps Go's sysmon from
// taking a waiting loop's P away: while a P is idle it leaves a goroutine
// in a system call alone, and with every P in a loop's epoll_wait it hands
// the P to a new thread after 20 µs — context switches for nothing, per
// wait. It also runs the governor, the watch and the timers.
func evLoops() int {
	if n, err := strconv.Atoi(os.Getenv("THROTTLE_EVLOOP_LOOPS")); err == nil && n > 0 {
		return n
	}
	return max(runtime.GOMAXPROCS(0)-1, 1)
}

// transportFor decides a run's transport, once, and for the event loop
// the one address every target names. cfg.Transport is checked and filled
// from TransportEnv (Config.withDefaults).
func transportFor(cfg Config) (string, netip.AddrPort) {
	if cfg.HTTP2 {
		return TransportNetHTTP, netip.AddrPort{}
	}
	// An open loop goes on the loop only when asked by name: its hand-over
	// (phase/loopopen.go) is newer than the closed loop's.
	open := cfg.Limits.Mode == governor.Rate
	if cfg.Transport == TransportFastHTTP || !evLoopSupported || (open && cfg.Transport != TransportEvLoop) {
		return TransportFastHTTP, netip.AddrPort{}
	}
	var addr netip.AddrPort
	for i, t := range cfg.Targets {
		if t.URL.Scheme != "http" || t.URL.User != nil {
			return TransportFastHTTP, netip.AddrPort{}
		}
		port := t.URL.Port()
		if port == "" {
			port = "80"
		}
		ip, ok := loopAddr(cfg, t.URL.Hostname())
		p, err := strconv.ParseUint(port, 10, 16)
		a := netip.AddrPortFrom(ip, uint16(p))
		if !ok || err != nil || a.Addr().Zone() != "" || (i > 0 && a != addr) {
			return TransportFastHTTP, netip.AddrPort{}
		}
		addr = a
	}
	return TransportEvLoop, addr
}

// loopAddr is the address the event loop connects to for host: host
// itself when it is an IP address, else the first address a lookup gives
// (cfg.Resolver, within the request timeout, at most 5 s), once for the
// run. Unlike fasthttp, which looks a name up at each dial, the loop keeps
// that address for the whole run. A name that does not resolve now is
// left to fasthttp (false), whose attempts fail with the DNS error,
// classified as ever.
func loopAddr(cfg Config, host string) (netip.Addr, bool) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip, true
	}
	r := cfg.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	wait := cfg.Timeout
	if wait <= 0 || wait > 5*time.Second {
		wait = 5 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return netip.Addr{}, false
	}
	return ips[0].Unmap(), true
}

// wireRequest is t as the event loop writes it: the request line, Host,
// the User-Agent the fasthttp transport sends unless the target has its
// own, the target's headers (sorted, for a stable request), a
// Content-Length for a body, then the body.
func wireRequest(t targets.Target) []byte {
	var b bytes.Buffer
	method := t.Method
	if method == "" {
		method = http.MethodGet
	}
	host := t.URL.Host
	if h := t.Header.Get("Host"); h != "" {
		host = h
	}
	b.WriteString(method + " " + t.URL.RequestURI() + " HTTP/1.1\r\nHost: " + host + "\r\n")
	if t.Header.Get("User-Agent") == "" {
		b.WriteString("User-Agent: throttle\r\n")
	}
	keys := make([]string, 0, len(t.Header))
	for k := range t.Header {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ck := http.CanonicalHeaderKey(k)
		if ck == "Host" || ck == "Content-Length" {
			continue
		}
		for _, v := range t.Header[k] {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	if len(t.Body) > 0 || method == http.MethodPost || method == http.MethodPut || method == http.MethodPatch {
		b.WriteString("Content-Length: " + strconv.Itoa(len(t.Body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(t.Body)
	return b.Bytes()
}

// idempotentMethod reports whether a request may be resent on a new
// connection when its reused one turned out closed (as the fasthttp
// transport's retry allows).
func idempotentMethod(m string) bool {
	switch m {
	case "", http.MethodGet, http.MethodHead, http.MethodPut, http.MethodDelete, http.MethodOptions:
		return true
	}
	return false
}
