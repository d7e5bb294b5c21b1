package script

import (
	"strings"
	"testing"
)

// BenchmarkMemoryPerVUUnused shows what k6 features a script imports but
// never calls cost a VU: the typical script alone, then the same script
// also importing k6/html, k6/crypto, k6/encoding, k6/metrics, k6/data,
// k6/timers, k6/ws and k6/net/grpc (and reading nothing from them). The
// cookie jar, the event loop, the request lanes and async requests are
// made on first use, the module members on first read (lazy.go), so the
// second figure stays near the first: the difference is the module
// records' own evaluation in the runtime.
func BenchmarkMemoryPerVUUnused(b *testing.B) {
	const vus = 500
	unused := `
import { parseHTML } from 'k6/html';
import crypto from 'k6/crypto';
import encoding from 'k6/encoding';
import { Trend } from 'k6/metrics';
import { SharedArray } from 'k6/data';
import { setTimeout } from 'k6/timers';
import ws from 'k6/ws';
import grpc from 'k6/net/grpc';
`
	for _, c := range []struct{ name, src string }{
		{"typical", typicalScript},
		{"typical+unused-imports", unused + typicalScript},
	} {
		b.Run(c.name, func(b *testing.B) {
			path := writeScriptB(b, "mem.js", strings.TrimLeft(c.src, "\n"))
			for range b.N {
				b.ReportMetric(vuHeap(b, path, vus)/vus/1024, "KiB/VU")
			}
		})
	}
}
