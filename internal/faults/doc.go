// Package faults is the fault-injection suite (make faults): real faulty
// servers on loopback — latency, resets mid-body, half-open connections,
// slow-loris and endless or huge bodies, failed TLS handshakes, a name
// that does not resolve, refused connections — each driven by the real
// URL engine at a fixed rate. For each fault the suite asserts that the
// run keeps going, the attempts are classified as the fault implies, every
// arrival is accounted for (started, dropped or aborted) and the heap
// stays bounded. The package has no code of its own: only its tests.
package faults
