package main

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/script/options"
)

// k6Flags are k6 run's flags (options.Catalog) that throttle has no flag of
// its own for: each one given is kept, in order, for options.Flags.Set.
type k6Flags struct{ given [][2]string }

// k6Value records one k6 flag's values.
type k6Value struct {
	name string
	k    *k6Flags
}

func (v *k6Value) String() string { return "" }
func (v *k6Value) Type() string   { return "string" }
func (v *k6Value) Set(s string) error {
	v.k.given = append(v.k.given, [2]string{v.name, s})
	return nil
}

// k6Shared are k6 flags throttle already has (with the same meaning for a
// script): their values reach options from scriptRun.
var k6Shared = map[string]bool{"duration": true, "out": true, "summary-export": true, "summary-trend-stats": true}

// register adds one flag per catalogued k6 flag, refused ones included, so
// that each is resolved or refused by name rather than "unknown flag".
func (k *k6Flags) register(fs *pflag.FlagSet) {
	for i := range options.Catalog {
		e := &options.Catalog[i]
		if e.Flag == "" || e.CLIOnly() || k6Shared[e.Flag] {
			continue
		}
		usage := "k6 script: k6's " + e.Name + " option"
		if e.Status != options.Honoured {
			usage += " (" + e.Status.String() + ")"
		}
		f := fs.VarPF(&k6Value{name: e.Flag, k: k}, e.Flag, e.Short, usage)
		f.NoOptDefVal = e.NoValue()
	}
}

// k6Given are the k6 flags given, the shared ones included, in order.
func (p *phaseFlags) k6Given(fs *pflag.FlagSet) [][2]string {
	given := p.k6.given
	if fs.Changed("duration") {
		given = append(given, [2]string{"duration", p.duration.String()})
	}
	if fs.Changed("summary-trend-stats") {
		given = append(given, [2]string{"summary-trend-stats", strings.Join(p.trendStats, ",")})
	}
	return given
}
