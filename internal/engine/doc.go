// Package engine is throttle's HTTP load engine: one governed load phase
// against a set of HTTP targets, measured honestly.
//
// The phase itself — gate, governor, arrival schedule (open-loop rate,
// closed-loop concurrency), workers, drain, windows and the generator's
// watch of itself — is the phase runtime's (package phase), the same one a
// k6 script scenario runs on. The engine adds what is HTTP's: a worker
// that sends the targets round-robin through a Runner, and the Meter, the
// attempt plane the governor reads.
//
// # The iteration seam
//
// Every attempt of a phase goes through one type, Runner (iteration.go),
// made by a Driver that holds what a phase's runners share: the Meter, the
// latency recorder, tries, timeout, the failed decision, the --slow budget
// and the transport. The URL engine gives each worker a Runner; the script
// runner gives each VU one and calls Runner.Iterate for every request a
// script makes. Iterate sends a Request (method, URL, headers, body, its
// own timeout and redirect limit) up to Tries times with a small jittered,
// capped, exponential backoff between tries, and fills a Response (status,
// proto, headers and body unless discarded, error and k6-style error code,
// class, per-attempt timings, bytes). Every attempt counts once into the
// attempt plane: started, then ok or failed by outcome Class, its latency.
// Iterations are counted by their final outcome too, so the report can put
// "ok % after tries" beside the attempt-failure % that retries hide.
//
// One classification serves both transports: classify maps a transport
// error or a status to the class the attempt has if it fails; a FailedFunc
// (FailOn's rule for the URL engine; expected statuses for scripts) decides
// whether it does; an otherwise ok attempt slower than Config.Slow fails
// as ClassSlow.
//
// # Transports
//
// Each run's transport is decided once (transportFor, Engine.Transport).
// A closed-loop run of plain http:// targets on one IP address and port,
// on Linux, goes through the event loop (an open-loop one too when
// TransportEnv=evloop asks for it) (evloop_linux.go): one epoll loop
// per P but one, each owning its workers' keep-alive connections on one
// goroutine, run on the phase's loop seam (phase.Loop, phase.Lane), so a
// request costs a write, a read and a share of one epoll_wait — no
// goroutine parked and woken per request. It reads responses itself
// (h1parse.go: Content-Length, chunked, close-delimited, 1xx skipped),
// times and classifies every attempt as the Runner does (Driver.judge,
// Driver.resolve) and keeps the same tries, timeout, --slow, FailOn, stop
// and abort. TransportEnv=fasthttp (or Config.Transport) keeps a run on
// fasthttp.
//
// Every other HTTP/1.1 run (https, --rate unless asked, a host name,
// several addresses) goes through fasthttp. Each Runner owns one
// keep-alive connection per host (a fasthttp.HostClient with one
// connection), so the phase's connections are sized to its workers, no
// runner waits for or shares a connection, and the runner's own wrapped
// connection times the attempt (connecting, TLS handshake, sending,
// waiting, receiving) without a lock. The wire request and response are
// acquired once per runner and reused; the request is rebuilt only when
// the runner is handed a different Request. TLS is verified unless
// Config.Insecure. Config.HTTP2 switches to net/http (one shared pool,
// HTTP/2 where the server offers it over TLS), timed with httptrace.
//
// A k6 script's request lanes (DriverConfig.RawHTTP) send plain http://
// requests through the raw transport (raw.go): one net.Conn per host per
// runner, written and read on the VU's own goroutine (the netpoller parks
// it), responses read with h1parse.go's reader, fasthttp's wire request
// and header parser, so what is sent and what a script reads are the
// fasthttp transport's; no HostClient and no cleaner goroutine per VU.
// https and the rest go through a fasthttp connection the runner makes
// when first needed; TransportEnv=fasthttp keeps every request there.
//
// # Stopping
//
// A stopping phase (package phase) closes the driver's Stop: no new try
// starts; its abort cancels the driver's Abort: in-flight attempts are cut
// off and counted apart as aborted, the engine's doing and not the
// target's.
//
// # Cost
//
// The hot path takes no lock of the engine's (the latency recorder and the
// concurrency gate have their own) and allocates nothing per request:
// counters are padded atomics; a worker reuses its Runner's fasthttp
// request, response and connection and its own Response; a discarded body
// is read into the reused buffer and never copied.
package engine
