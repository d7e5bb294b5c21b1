// Package faults is the fault-injection suite (make faults): real faulty
// servers on loopback — latency, resets mid-body, half-open connections,
// slow-loris and endless or huge bodies, failed TLS handshakes, a name
// that does not resolve, refused connections — and network faults made by
// a toxiproxy proxy (github.com/Shopify/toxiproxy/v2 as a library) in
// front of a healthy server — latency spikes, jitter, a bandwidth limit —
// and a redirect loop, each driven through a session (the URL engine at a
// fixed rate, or a k6 script) as the CLI drives it. For each fault the
// suite asserts that the run keeps going, the attempts are classified as
// the fault implies, every arrival is accounted for (started, dropped or
// aborted), the heap stays bounded and the report and timeline are
// written and agree with the engine's counts. The package has no code of
// its own: only its tests.
package faults
