package script

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"path/filepath"
	"unicode/utf8"

	"github.com/grafana/sobek"
)

// fsFileKey holds, on a k6/experimental/fs File object, the Go file behind
// it, so that k6/experimental/csv can read a File the script hands it.
var fsFileKey = sobek.NewSymbol("throttle.fsFile")

// fsFile is one File of k6/experimental/fs: the file's bytes (read once
// per run, shared like open()'s) and this File's read offset.
type fsFile struct {
	path string
	data []byte
	off  int64
}

// fsModule is "k6/experimental/fs" as k6 documents it: open(path) in the
// init context resolves to a File (path; read(buffer), seek(offset,
// whence) and stat() returning promises) and SeekMode {Start, Current, End}.
func (vu *VU) fsModule() *sobek.Object {
	rt := vu.rt
	o := rt.NewObject()
	_ = o.Set("open", func(path string) *sobek.Promise {
		if !vu.inInit {
			vu.throw("fs.open(%q): files can be opened only in the init context", path)
		}
		p, resolve, reject := rt.NewPromise()
		b, err := vu.r.readFile(path)
		if err != nil {
			_ = reject(rt.NewGoError(err))
			return p
		}
		_ = resolve(vu.fsFileObject(&fsFile{path: path, data: b}))
		return p
	})
	seek := rt.NewObject()
	for i, n := range []string{"Start", "Current", "End"} {
		_ = seek.Set(n, i)
	}
	_ = o.Set("SeekMode", seek)
	return o
}

func (vu *VU) fsFileObject(f *fsFile) *sobek.Object {
	rt := vu.rt
	o := rt.NewObject()
	_ = o.SetSymbol(fsFileKey, rt.ToValue(f))
	_ = o.Set("path", f.path)
	settle := func(v any, err error) *sobek.Promise {
		p, resolve, reject := rt.NewPromise()
		if err != nil {
			_ = reject(rt.NewGoError(err))
		} else {
			_ = resolve(v)
		}
		return p
	}
	_ = o.Set("read", func(buf sobek.Value) *sobek.Promise {
		dst := vu.bytes(buf)
		if _, ok := buf.Export().(string); ok || len(dst) == 0 {
			return settle(nil, errors.New("read: want a non-empty Uint8Array or ArrayBuffer"))
		}
		if f.off >= int64(len(f.data)) {
			return settle(nil, nil) // k6 resolves null at the end of the file
		}
		n := copy(dst, f.data[f.off:])
		f.off += int64(n)
		return settle(n, nil)
	})
	_ = o.Set("seek", func(offset int64, whence int) *sobek.Promise {
		base := map[int]int64{0: 0, 1: f.off, 2: int64(len(f.data))}
		b, ok := base[whence]
		if !ok || b+offset < 0 {
			return settle(nil, errors.New("seek: want a SeekMode and an offset inside the file"))
		}
		f.off = b + offset
		return settle(f.off, nil)
	})
	_ = o.Set("stat", func() *sobek.Promise {
		return settle(map[string]any{"name": filepath.Base(f.path), "size": len(f.data)}, nil)
	})
	return o
}

// csvOptions are k6/experimental/csv's parse and Parser options.
type csvOptions struct {
	delimiter        rune
	skipFirstLine    bool
	fromLine, toLine int64 // 0-based, inclusive; toLine < 0 for no end
	asObjects        bool
}

func (vu *VU) csvOptions(v sobek.Value) csvOptions {
	opts := csvOptions{delimiter: ',', toLine: -1}
	o, ok := v.(*sobek.Object)
	if !ok || sobek.IsUndefined(v) || sobek.IsNull(v) {
		return opts
	}
	if d := o.Get("delimiter"); d != nil && !sobek.IsUndefined(d) {
		r, size := utf8.DecodeRuneInString(d.String())
		if size == 0 || size != len(d.String()) {
			vu.throw("csv: delimiter must be one character, got %q", d.String())
		}
		opts.delimiter = r
	}
	flag := func(name string) bool { x := o.Get(name); return x != nil && x.ToBoolean() }
	opts.skipFirstLine, opts.asObjects = flag("skipFirstLine"), flag("asObjects")
	if x := o.Get("fromLine"); x != nil && !sobek.IsUndefined(x) {
		opts.fromLine = x.ToInteger()
	}
	if x := o.Get("toLine"); x != nil && !sobek.IsUndefined(x) {
		opts.toLine = x.ToInteger()
	}
	return opts
}

// csvReader reads a File's records as the options say: lines before
// fromLine (or the first, for skipFirstLine) skipped, none after toLine; for
// asObjects the first line is the header naming each record's fields.
type csvReader struct {
	r      *csv.Reader
	opts   csvOptions
	line   int64
	header []string
}

func (vu *VU) newCSVReader(file sobek.Value, opts csvOptions) *csvReader {
	o, _ := file.(*sobek.Object)
	var f *fsFile
	if o != nil {
		f, _ = o.GetSymbol(fsFileKey).Export().(*fsFile)
	}
	if f == nil {
		vu.throw("csv: want a File from k6/experimental/fs's open()")
	}
	r := csv.NewReader(bytes.NewReader(f.data))
	r.Comma, r.FieldsPerRecord, r.ReuseRecord = opts.delimiter, -1, false
	c := &csvReader{r: r, opts: opts}
	if opts.asObjects {
		h, err := r.Read()
		if err != nil {
			vu.throw("csv: reading the header line: %v", err)
		}
		c.header, c.line = h, 1
	}
	return c
}

// next returns the next record as a JavaScript value, or nil at the end.
func (c *csvReader) next(rt *sobek.Runtime) (sobek.Value, error) {
	for {
		if c.opts.toLine >= 0 && c.line > c.opts.toLine {
			return nil, nil
		}
		rec, err := c.r.Read()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		line := c.line
		c.line++
		if line < c.opts.fromLine || (c.opts.skipFirstLine && line == 0) {
			continue
		}
		if c.header == nil {
			return rt.ToValue(rec), nil
		}
		obj := rt.NewObject()
		for i, name := range c.header {
			v := ""
			if i < len(rec) {
				v = rec[i]
			}
			_ = obj.Set(name, v)
		}
		return obj, nil
	}
}

// csvModule is "k6/experimental/csv": parse(file, options) resolving to
// every record (arrays of strings, or objects for asObjects), and Parser,
// whose next() resolves to {done, value} one record at a time.
func (vu *VU) csvModule() *sobek.Object {
	rt := vu.rt
	o := rt.NewObject()
	_ = o.Set("parse", func(file, options sobek.Value) *sobek.Promise {
		p, resolve, reject := rt.NewPromise()
		c := vu.newCSVReader(file, vu.csvOptions(options))
		var all []any
		for {
			v, err := c.next(rt)
			if err != nil {
				_ = reject(rt.NewGoError(err))
				return p
			}
			if v == nil {
				break
			}
			all = append(all, v)
		}
		_ = resolve(rt.NewArray(all...))
		return p
	})
	_ = o.Set("Parser", func(call sobek.ConstructorCall) *sobek.Object {
		if !vu.inInit {
			vu.throw("new csv.Parser(...): parsers must be made in the init context")
		}
		c := vu.newCSVReader(call.Argument(0), vu.csvOptions(call.Argument(1)))
		_ = call.This.Set("next", func() *sobek.Promise {
			p, resolve, reject := rt.NewPromise()
			v, err := c.next(rt)
			switch {
			case err != nil:
				_ = reject(rt.NewGoError(err))
			case v == nil:
				_ = resolve(map[string]any{"done": true, "value": sobek.Undefined()})
			default:
				_ = resolve(map[string]any{"done": false, "value": v})
			}
			return p
		})
		return nil
	})
	return o
}
