package bundle

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/grafana/sobek"
	"github.com/grafana/sobek/ast"
	"github.com/grafana/sobek/parser"
)

// parse parses one file as an ES module named name (how errors and stack
// traces show it). TypeScript goes through esbuild first; so does
// JavaScript that sobek does not parse, in case esbuild can lower it.
func parse(name, path, src string) (*ast.Program, error) {
	if isTypeScript(path) {
		js, err := transform(name, src, api.LoaderTS)
		if err != nil {
			return nil, err
		}
		prog, err := parseModule(name, js)
		if err != nil {
			return nil, syntaxError(name, err)
		}
		return prog, nil
	}
	prog, err := parseModule(name, src)
	if err == nil {
		return prog, nil
	}
	js, terr := transform(name, src, api.LoaderJS)
	if terr != nil {
		// esbuild's word on a file neither parses: its messages are the
		// clearer.
		return nil, terr
	}
	if prog, err := parseModule(name, js); err == nil {
		return prog, nil
	}
	return nil, syntaxError(name, err)
}

func isTypeScript(path string) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".ts", ".mts", ".cts":
		return true
	}
	return false
}

// parseModule is sobek's parser in module mode. Only an inline source map
// is read (esbuild's, or one the file carries): a map's URL would have the
// parser read other files.
func parseModule(name, src string) (*ast.Program, error) {
	return parser.ParseFile(nil, name, src, 0, parser.IsModule,
		parser.WithSourceMapLoader(func(string) ([]byte, error) { return nil, nil }))
}

// lowered are the syntax features esbuild rewrites for sobek: the ones its
// parser lacks. Everything else, top-level await included, is left as
// written.
var lowered = map[string]bool{"async-generator": false, "for-await": false}

// transform turns one file into a JavaScript ES module sobek parses, its
// imports and exports as they are, with an inline source map back to the
// file.
func transform(name, src string, loader api.Loader) (string, error) {
	res := api.Transform(src, api.TransformOptions{
		Loader:         loader,
		Format:         api.FormatESModule,
		Target:         api.ESNext,
		Supported:      lowered,
		Sourcefile:     filepath.Base(name),
		Sourcemap:      api.SourceMapInline,
		SourcesContent: api.SourcesContentExclude,
		LogLevel:       api.LogLevelSilent,
	})
	if len(res.Errors) > 0 {
		m := res.Errors[0]
		if m.Location == nil {
			return "", &Error{Msg: fmt.Sprintf("%s: %s", name, m.Text)}
		}
		return "", &Error{Msg: fmt.Sprintf("%s:%d: %s", name, m.Location.Line, m.Text)}
	}
	return string(res.Code), nil
}

// syntaxError is a parse error as one line: file:line: message.
func syntaxError(name string, err error) error {
	var list parser.ErrorList
	if errors.As(err, &list) && len(list) > 0 {
		p := list[0].Position
		file := p.Filename
		if file == "" {
			file = name
		}
		return &Error{Msg: fmt.Sprintf("%s:%d: %s", file, p.Line, list[0].Message)}
	}
	return &Error{Msg: fmt.Sprintf("%s: %v", name, err)}
}

// compileError is a link or compile error (a name imported that is not
// exported, a duplicate declaration) as one line: file:line: message.
func (b *Bundle) compileError(err error) error {
	var se *sobek.CompilerSyntaxError
	if errors.As(err, &se) && se.File != nil {
		p := se.File.Position(se.Offset)
		return &Error{Msg: fmt.Sprintf("%s:%d: %s", p.Filename, p.Line, se.Message)}
	}
	var le *Error
	if errors.As(err, &le) {
		return err
	}
	return &Error{Msg: err.Error()}
}
