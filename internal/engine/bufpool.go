package engine

import (
	"reflect"
	"sync"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// Connection buffers shared by a driver's runners.
//
// A fasthttp.HostClient keeps its connections' read and write buffers
// (16 KiB and 4 KiB here) in sync.Pools of its own, and every runner has a
// HostClient of its own: so every worker or VU that has sent a request
// kept 20 KiB of buffers in its pools, used or not, for as long as it was
// used more often than every other GC cycle (the soak's heap profile: 63 %
// of the live heap), and one that was used less often (a VU in a 20 s
// sleep) lost them to the GC and allocated them again for each request. A
// buffer is only needed while a request is written or its answer read, so
// the runners of one driver share one pool of each: the buffers alive are
// about those in use, and a sleeping VU or an idle worker holds none.
//
// fasthttp lets a fasthttp.Client share its pools with its HostClients
// (the unexported clientReaderPool and clientWriterPool fields) but offers
// no setter for a HostClient made on its own, which is what a runner needs
// to trace its own connection; sharePools sets those fields. A fasthttp
// release that renames them leaves every HostClient on its own pools
// (sharePools reports false; TestSharedBufferPools fails so the upgrade is
// noticed), never a wrong buffer.

// bufPools are one driver's shared connection buffers.
type bufPools struct {
	read, write sync.Pool
	raw         sync.Pool // *rawReadBuf: the raw transport's read buffers
}

// rawReadBuf is what the raw transport reads an answer with: its buffer
// (rawBufSize) and the stamped reader (rxstamp_linux.go), pooled together
// so that one answer takes both in one pool round trip.
type rawReadBuf struct {
	buf []byte
	rx  rxRead
}

// rawBuf is a read buffer for the raw transport; put it back in p.raw.
func (p *bufPools) rawBuf() *rawReadBuf {
	if b, ok := p.raw.Get().(*rawReadBuf); ok {
		return b
	}
	b := &rawReadBuf{buf: make([]byte, rawBufSize)}
	b.rx.init()
	return b
}

// SharedBuffers are connection buffers several drivers share
// (DriverConfig.Buffers): a script's VUs each have drivers of their own,
// and a VU that sleeps between requests would otherwise keep its last
// request's buffers (20 KiB) in its own pools until the GC empties them,
// which at a few GC cycles a minute is all the time. Shared, the buffers
// alive are about those in use. Safe for concurrent use; the zero value
// is ready.
type SharedBuffers struct{ p bufPools }

var (
	readerPoolField  = poolField("clientReaderPool")
	writerPoolField  = poolField("clientWriterPool")
	poolPointerType  = reflect.TypeFor[*sync.Pool]()
	poolFieldsUsable = readerPoolField >= 0 && writerPoolField >= 0
)

// poolField is the index of HostClient's field name if it is a *sync.Pool,
// else -1.
func poolField(name string) int {
	f, ok := reflect.TypeFor[fasthttp.HostClient]().FieldByName(name)
	if !ok || f.Type != reflect.TypeFor[*sync.Pool]() || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}

// sharePools makes hc take its connection buffers from p; it reports
// whether it could (see above). Call it before hc's first request.
func (p *bufPools) sharePools(hc *fasthttp.HostClient) bool {
	if p == nil || !poolFieldsUsable {
		return false
	}
	v := reflect.ValueOf(hc).Elem()
	set := func(i int, pool *sync.Pool) {
		f := v.Field(i)
		reflect.NewAt(poolPointerType, unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(pool))
	}
	set(readerPoolField, &p.read)
	set(writerPoolField, &p.write)
	return true
}
