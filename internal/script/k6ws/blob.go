package k6ws

import (
	"errors"
	"strconv"

	"github.com/grafana/sobek"
)

// blobs makes and recognises the Blobs of one VU: a Blob's bytes hang on
// its object under a symbol the script cannot name.
type blobs struct {
	rt   *sobek.Runtime
	key  *sobek.Symbol
	ctor *sobek.Object
}

type blob struct {
	data []byte
	typ  string
}

// of is v's Blob, or nil.
func (b *blobs) of(v sobek.Value) *blob {
	o, ok := v.(*sobek.Object)
	if !ok {
		return nil
	}
	v = o.GetSymbol(b.key)
	if v == nil {
		return nil
	}
	x, _ := v.Export().(*blob)
	return x
}

// constructor is `new Blob(parts, {type})`.
func (b *blobs) constructor() *sobek.Object {
	b.ctor = b.rt.ToValue(func(call sobek.ConstructorCall) *sobek.Object {
		var data []byte
		if parts, ok := call.Argument(0).(*sobek.Object); ok {
			n := int(parts.Get("length").ToInteger())
			for i := range n {
				data = append(data, b.bytes(parts.Get(strconv.Itoa(i)))...)
			}
		}
		typ := ""
		if o, ok := call.Argument(1).(*sobek.Object); ok {
			if t := o.Get("type"); t != nil && !sobek.IsUndefined(t) {
				typ = t.String()
			}
		}
		b.fill(call.This, &blob{data: data, typ: typ})
		return nil
	}).(*sobek.Object)
	return b.ctor
}

// bytes reads a blob part: a Blob, an ArrayBuffer, a typed array or a
// string.
func (b *blobs) bytes(v sobek.Value) []byte {
	if x := b.of(v); x != nil {
		return x.data
	}
	switch x := v.Export().(type) {
	case sobek.ArrayBuffer:
		return x.Bytes()
	case []byte:
		return x
	}
	if o, ok := v.(*sobek.Object); ok {
		if buf, ok := o.Get("buffer").Export().(sobek.ArrayBuffer); ok {
			off, n := o.Get("byteOffset").ToInteger(), o.Get("byteLength").ToInteger()
			return buf.Bytes()[off : off+n]
		}
	}
	return []byte(v.String())
}

// make is a new Blob of data.
func (b *blobs) make(data []byte, typ string) *sobek.Object {
	o, err := b.rt.New(b.ctor)
	if err != nil {
		panic(err)
	}
	b.fill(o, &blob{data: data, typ: typ})
	return o
}

// fill gives o x's bytes and the Blob methods.
func (b *blobs) fill(o *sobek.Object, x *blob) {
	rt := b.rt
	_ = o.SetSymbol(b.key, rt.ToValue(x))
	_ = o.Set("size", len(x.data))
	_ = o.Set("type", x.typ)
	resolved := func(v any) sobek.Value {
		p, resolve, _ := rt.NewPromise()
		_ = resolve(v)
		return rt.ToValue(p)
	}
	_ = o.Set("arrayBuffer", func() sobek.Value { return resolved(rt.NewArrayBuffer(append([]byte(nil), x.data...))) })
	_ = o.Set("text", func() sobek.Value { return resolved(string(x.data)) })
	_ = o.Set("bytes", func() sobek.Value {
		u8, err := rt.New(rt.Get("Uint8Array"), rt.ToValue(rt.NewArrayBuffer(append([]byte(nil), x.data...))))
		if err != nil {
			panic(err)
		}
		return resolved(u8)
	})
	_ = o.Set("slice", func(start, end, typ sobek.Value) *sobek.Object {
		n := int64(len(x.data))
		at := func(v sobek.Value, def int64) int64 {
			if v == nil || sobek.IsUndefined(v) {
				return def
			}
			i := v.ToInteger()
			if i < 0 {
				i += n
			}
			return min(max(i, 0), n)
		}
		lo, hi := at(start, 0), at(end, n)
		t := ""
		if typ != nil && !sobek.IsUndefined(typ) {
			t = typ.String()
		}
		return b.make(append([]byte(nil), x.data[lo:max(lo, hi)]...), t)
	})
	_ = o.Set("stream", func() {
		throw(rt, errors.New("k6/websockets: Blob.stream() is not supported by throttle"))
	})
}
