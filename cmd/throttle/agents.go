package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/agent"
	"github.com/throttlekit/throttle/internal/live"
	"github.com/throttlekit/throttle/internal/phase"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/session"
)

// tokenEnv carries the token to an agent without putting it on its command
// line (where ps shows it).
const tokenEnv = "THROTTLE_TOKEN"

// agentFlags are run's flags for a run spread over agents.
type agentFlags struct {
	agents, local int
	listen, token string
	wait          time.Duration
	tls           agent.TLS
}

// registerTLS adds --tls-cert, --tls-key and --tls-ca, worded for the
// controller or for an agent.
func registerTLS(fs *pflag.FlagSet, t *agent.TLS, controller bool) {
	if controller {
		fs.StringVar(&t.Cert, "tls-cert", "", "with --agents: the controller's TLS certificate (PEM): agents connect over TLS")
		fs.StringVar(&t.Key, "tls-key", "", "with --agents: the key of --tls-cert (PEM)")
		fs.StringVar(&t.CA, "tls-ca", "", "with --agents: require agents to show a client certificate signed by this CA (PEM)")
		return
	}
	fs.StringVar(&t.Cert, "tls-cert", "", "this agent's client certificate (PEM), for a controller that requires one")
	fs.StringVar(&t.Key, "tls-key", "", "the key of --tls-cert (PEM)")
	fs.StringVar(&t.CA, "tls-ca", "", "the CA that signed the controller's certificate (PEM; default: the system's roots); any TLS flag connects over TLS")
}

func (a *agentFlags) register(g *flagGroups) {
	fs := g.group("Agents")
	fs.IntVar(&a.agents, "agents", 0, "spread the run over N agents (throttle agent --join ...): this process is the controller, one governor over every agent's window")
	fs.IntVar(&a.local, "local-agents", 0, "spread the run over N agent processes started on this machine (children of this one)")
	fs.StringVar(&a.listen, "listen", agent.DefaultListen, "with --agents: where the controller's embedded NATS server listens for agents (HOST:PORT; loopback unless told otherwise)")
	fs.StringVar(&a.token, "token", "", "with --agents: the token agents must present (default $"+tokenEnv+"; --local-agents makes one up)")
	fs.DurationVar(&a.wait, "agent-wait", agent.DefaultWait, "with --agents: how long to wait for the agents before giving up (it starts again each time a script's agent says it is still making its VUs)")
	registerTLS(fs, &a.tls, true)
}

// on reports whether the run goes over agents, and refuses what agents do
// not support yet.
func (a *agentFlags) on(fs *pflag.FlagSet) (bool, error) {
	if !fs.Changed("agents") && !fs.Changed("local-agents") {
		for _, n := range []string{"listen", "token", "agent-wait", "tls-cert", "tls-key", "tls-ca"} {
			if fs.Changed(n) {
				return false, usagef("--%s applies to a run over agents: give --agents N or --local-agents N", n)
			}
		}
		return false, nil
	}
	switch {
	case fs.Changed("agents") && fs.Changed("local-agents"):
		return false, usagef("--agents and --local-agents conflict: give one")
	case fs.Changed("agents") && a.agents < 1:
		return false, usagef("--agents must be >= 1, got %d", a.agents)
	case fs.Changed("local-agents") && a.local < 1:
		return false, usagef("--local-agents must be >= 1, got %d", a.local)
	case fs.Changed("local-agents") && (fs.Changed("tls-cert") || fs.Changed("tls-key") || fs.Changed("tls-ca")):
		return false, usagef("--local-agents talk to this process over loopback: the TLS flags apply to --agents")
	}
	if a.local > 0 {
		// The local agents read THROTTLE_MEMORY from this environment:
		// a bad value is refused here, not by each of them.
		if _, err := session.MemoryLimit(); err != nil {
			return false, usageError{Err: err}
		}
		// This process gives each local agent its GC turn (localAgentEnv)
		// unless the user says off, which leaves each agent's GC to the
		// runtime.
		if v := os.Getenv(script.GCTurnEnv); v != "" && v != "off" && v != "on" {
			return false, usagef("%s=%q: for --local-agents, on (the default) gives each agent its GC turn, off leaves their GC to the runtime", script.GCTurnEnv, v)
		}
	}
	if a.token == "" {
		a.token = os.Getenv(tokenEnv)
	}
	if a.token == "" {
		if a.local == 0 {
			return false, usagef("--agents needs a token the agents present: --token T or $%s", tokenEnv)
		}
		b := make([]byte, 16)
		_, _ = rand.Read(b)
		a.token = hex.EncodeToString(b)
	}
	return true, nil
}

// config is the session's view of the flags; local agents start with timer
// slack slack (0: the kernel's default).
func (a *agentFlags) config(e env, slack time.Duration) session.Agents {
	c := session.Agents{N: a.agents, Listen: a.listen, Token: a.token, Wait: a.wait, Version: buildVersion(), TLS: a.tls}
	if a.local > 0 {
		c.N, c.Spawn = a.local, spawnLocal(a.local, e, slack)
	}
	return c
}

// spawnLocal starts n `throttle agent` children joining the controller;
// stop waits for them (they end with the run) and kills any still there.
// Each starts with timer slack slack on every thread (timerSlackEnv).
func spawnLocal(n int, e env, slack time.Duration) func(url, token string) (func(), error) {
	return func(url, token string) (func(), error) {
		self, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("--local-agents: finding this program: %w", err)
		}
		var cmds []*exec.Cmd
		var wg sync.WaitGroup
		for i := range n {
			c := exec.Command(self, "agent", "--join", url, "--name", "local-"+strconv.Itoa(i+1), "--quiet")
			c.Env = localAgentEnv(os.Environ(), tokenEnv+"="+token, i, n, runtime.GOMAXPROCS(0))
			c.Stdout, c.Stderr = e.stderr, e.stderr
			if err := startWithTimerSlack(c, slack); err != nil {
				for _, c := range cmds {
					_ = c.Process.Kill()
				}
				return nil, fmt.Errorf("--local-agents: starting an agent: %w", err)
			}
			cmds = append(cmds, c)
			wg.Add(1)
			go func() { defer wg.Done(); _ = c.Wait() }()
		}
		return func() {
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				for _, c := range cmds {
					_ = c.Process.Kill()
				}
				<-done
			}
		}, nil
	}
}

// localAgentEnv is local agent i's (0-based) environment of n: this
// process's, the token, its turn at the GC, and — unless the user set
// GOMAXPROCS, which every agent then inherits — GOMAXPROCS of procs/n
// cores rounded up (procs: the cores this process may use), so that the n
// agents together have at least the machine's cores and each no more than
// it needs. Each agent left at its default would take every core: 7
// agents on 2 cores run 14 Ps, and an agent's GC cycle then marks on both
// (its background worker and an idle worker on its other P), beside six
// agents whose VUs wait for those cores. Measured at 100 000 VUs over 7
// agents on 2 cores (docs/performance.md, "One P per local agent"): an
// agent's GC cycle of its 224 MB heap kept its mark workers 0.5-2.0 s
// with one P against 1.0-4.5 s with two (gctrace, eight runs of one
// sitting). The cpu rule's share (phase.WatchConfig.Colocated:
// min(GOMAXPROCS, cores/n)) is the same either way.
//
// The turn (script.GCTurnEnv, "i/n" for n >= 2) has the agents' GC
// cycles come one at a time (script.GCTurn): with one P an agent's cycle
// takes a whole core, and several at once starved every process on the
// machine. It is given unless this process's environment holds
// GCTurnEnv=off. Session 15 made turns opt-in: they forced cycles in the
// first period of a 100 000-VU run spread over 20 s, on a full machine,
// where they stretched to 5-8 s with seconds of assists and the run fell
// behind. Since turns ask the machine for room (a core idle over the last
// second, script's gcturn_room.go), a full machine forces nothing; without
// turns the agents' own cycles came together and marked ticks saturated
// (docs/performance.md, "100 000 VUs after session 16's work"), so they
// are the default again. The controller's own value is never passed on
// (an agent would refuse on).
//
// A profile the controller is asked for (THROTTLE_CPUPROFILE,
// THROTTLE_HEAPPROFILE) is each agent's too, at the same path with
// ".local-N" added (N: the agent's name, i+1): one path for all would
// have every process overwrite the others' profile.
func localAgentEnv(environ []string, token string, i, n, procs int) []string {
	turn := script.GCTurnEnv + "="
	on := !slices.Contains(environ, turn+"off")
	env := append(slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		return strings.HasPrefix(kv, turn)
	}), token)
	for k, kv := range env {
		for _, name := range []string{cpuProfileEnv, heapProfileEnv} {
			if v, ok := strings.CutPrefix(kv, name+"="); ok && strings.TrimSpace(v) != "" {
				env[k] = kv + ".local-" + strconv.Itoa(i+1)
			}
		}
	}
	if n >= 2 && on {
		env = append(env, turn+script.GCTurn{I: i, N: n}.String())
	}
	if n < 1 || procs < 1 || slices.ContainsFunc(environ, func(kv string) bool {
		v, ok := strings.CutPrefix(kv, "GOMAXPROCS=")
		return ok && v != ""
	}) {
		return env
	}
	return append(env, "GOMAXPROCS="+strconv.Itoa((procs+n-1)/n))
}

func newAgentCmd(e env) *cobra.Command {
	var cfg agent.Config
	var quiet bool
	cmd := &cobra.Command{
		Use:   "agent --join nats://HOST:PORT [--token T]",
		Short: "Generate load for a controller (throttle run --agents N) on another machine",
		Long:  helpText("agent"),
		Example: `  # On the controller's machine:
  throttle run --rate 20000 --agents 3 --listen 0.0.0.0:4222 --token "$T" http://target/
  # On each generator machine:
  THROTTLE_TOKEN="$T" throttle agent --join nats://controller:4222`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Join == "" {
				return usagef("give --join nats://HOST:PORT: the controller's address (throttle run --agents N prints it)")
			}
			if err := cfg.TLS.Check(); err != nil {
				return usageError{Err: err}
			}
			if err := phase.TraceWatchFromEnv(); err != nil {
				return usageError{Err: err}
			}
			if cfg.Token == "" {
				cfg.Token = os.Getenv(tokenEnv)
			}
			if cfg.Token == "" {
				return usagef("give --token T or $%s: the controller's token", tokenEnv)
			}
			mem, err := session.MemoryLimit()
			if err != nil {
				return usageError{Err: err}
			}
			cfg.Memory = mem
			if cfg.GCTurn, err = script.GCTurnFromEnv(); err != nil {
				return usageError{Err: err}
			}
			level := slog.LevelInfo
			if quiet {
				level = slog.LevelWarn
			}
			con := live.NewConsole(e.stderr, false)
			cfg.Logger = slog.New(live.NewHandler(con, level))
			cfg.Console = func(l slog.Level, msg string) { con.Line(session.ConsoleLine(time.Now(), l, msg)) }
			cfg.Version = buildVersion()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if e.signals != nil {
				go func() {
					select {
					case <-e.signals:
						cancel()
					case <-ctx.Done():
					}
				}()
			}
			_, err = agent.Join(ctx, cfg)
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&cfg.Join, "join", "", "the controller's address, nats://HOST:PORT")
	fs.StringVar(&cfg.Token, "token", "", "the run's token (default $"+tokenEnv+")")
	fs.StringVar(&cfg.Name, "name", "", "this agent's name in the report (default: host name and process id)")
	fs.DurationVar(&cfg.Wait, "wait", agent.DefaultWait, "how long to keep trying to reach the controller")
	fs.BoolVarP(&quiet, "quiet", "q", false, "only warnings and errors")
	registerTLS(fs, &cfg.TLS, false)
	return cmd
}

// runScriptAgents runs a k6 script over agents: each runs its execution
// segment of it, this process merges their k6 metrics.
func (f *runFlags) runScriptAgents(fs *pflag.FlagSet, e env, s scriptRun, slack time.Duration) error {
	sc, err := f.scriptRun(fs, s, nil)
	if err != nil {
		return err
	}
	return f.session(e).RunScriptAgents(sc, f.agents.config(e, slack))
}
