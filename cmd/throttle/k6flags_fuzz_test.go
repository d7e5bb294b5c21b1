package main

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/options"
	"github.com/throttlekit/throttle/internal/session"
)

// FuzzK6Flags: any k6 flag of the catalog (long or short, with any value,
// as --flag=value or --flag value) and any -e pair, through the command
// line's flag set and session.K6Config to the resolved options over an
// empty script: each is taken or refused with one line, never a panic.
func FuzzK6Flags(f *testing.F) {
	for i := range options.Catalog {
		f.Add(uint16(i), "1", true, "K=V")
	}
	for _, v := range []string{"", "=", "--vus", "-1", "10s:5", "a=b=c", "NaN", "\n", "json=/dev/null", "1e400"} {
		f.Add(uint16(5), v, false, v)
	}
	f.Fuzz(func(t *testing.T, i uint16, value string, joined bool, envPair string) {
		e := &options.Catalog[int(i)%len(options.Catalog)]
		if e.Flag == "" || e.CLIOnly() || k6Shared[e.Flag] {
			return
		}
		fs := pflag.NewFlagSet("run", pflag.ContinueOnError)
		fs.SetOutput(nopWriter{})
		var k k6Flags
		k.register(fs)
		args := []string{"--" + e.Flag, value}
		if joined {
			args = []string{"--" + e.Flag + "=" + value}
		}
		if err := fs.Parse(args); err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q: parse error %q spans lines", args, err)
			}
			return
		}
		var cfg script.Config
		_, _, err := session.K6Config(session.K6Source{Given: k.given, EnvPairs: []string{envPair}}, &cfg)
		if err != nil {
			if !session.IsBadInput(err) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("%q -e %q: %v (bad input: %v)", args, envPair, err, session.IsBadInput(err))
			}
			return
		}
		if k, _, ok := strings.Cut(envPair, "="); !ok || cfg.Env[k] == "" && !strings.HasSuffix(envPair, "=") {
			t.Fatalf("-e %q accepted as %v", envPair, cfg.Env)
		}
		o, err := options.Resolve([]byte(`{}`), cfg.EnvOptions, cfg.CLIOptions)
		if err == nil && len(o.Scenarios) == 0 {
			t.Fatalf("%q: no error and no scenario", args)
		}
	})
}

type nopWriter struct{}

func (nopWriter) Write(p []byte) (int, error) { return len(p), nil }
