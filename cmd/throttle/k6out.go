package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/script/k6out"
)

// k6Flags are the k6 result flags of a script run: k6's summary export,
// its trend statistics and its JSON-lines output (--out json=FILE).
type k6Flags struct {
	summaryExport string
	trendStats    []string
	jsonOut       string // from --out json=FILE
}

func (k *k6Flags) register(fs *pflag.FlagSet) {
	fs.StringVar(&k.summaryExport, "summary-export", "", "k6 script: write the end-of-test summary to this file in k6's summary-export JSON")
	fs.StringSliceVar(&k.trendStats, "summary-trend-stats", nil, "k6 script: the trend statistics the summary shows, e.g. avg,min,med,max,p(90),p(99),count (overrides options.summaryTrendStats)")
}

// notWithoutScript refuses the k6 result flags on a run without a script.
func (k *k6Flags) notWithoutScript(fs *pflag.FlagSet, out string) error {
	for _, name := range []string{"summary-export", "summary-trend-stats"} {
		if fs.Changed(name) {
			return usagef("--%s applies to a k6 script; give a script", name)
		}
	}
	if strings.HasPrefix(out, "json=") {
		return usagef("--out json=FILE is k6's JSON output of a script; give a script, or --out FILE for the report")
	}
	return nil
}

// check validates the flags before the run: the trend stats, and that each
// file's directory exists. It takes --out json=FILE out of p.out.
func (k *k6Flags) check(p *phaseFlags) error {
	if f, ok := strings.CutPrefix(p.out, "json="); ok {
		if f == "" {
			return usagef("--out json=FILE: give a file")
		}
		k.jsonOut, p.out = f, ""
	}
	if _, err := script.ParseTrendStats(k.trendStats); err != nil {
		return usagef("--summary-trend-stats: %v", err)
	}
	for _, o := range []struct{ flag, path string }{{"summary-export", k.summaryExport}, {"out json=", k.jsonOut}} {
		if o.path == "" {
			continue
		}
		dir := filepath.Dir(o.path)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return usagef("--%s %s: directory %s does not exist", strings.TrimSuffix(o.flag, "="), o.path, dir)
		}
		if st, err := os.Stat(o.path); err == nil && st.IsDir() {
			return usagef("--%s %s is a directory", strings.TrimSuffix(o.flag, "="), o.path)
		}
	}
	return nil
}

// writeSummaryExport writes the summary export, if asked for.
func (k *k6Flags) writeSummaryExport(e env, s *script.Summary) error {
	if k.summaryExport == "" {
		return nil
	}
	if err := k6out.WriteSummaryExport(k.summaryExport, s); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "wrote        %s\n", k.summaryExport)
	return nil
}
