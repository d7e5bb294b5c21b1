package main

import (
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/governor"
	"github.com/throttlekit/throttle/internal/agent"
)

// Flags of a run over agents that cannot work are refused in one line
// before anything starts.
func TestAgentFlagsRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--rate", "10", "--token", "x", "http://127.0.0.1:1/"}, "--token applies to a run over agents"},
		{[]string{"run", "--rate", "10", "--agents", "0", "http://127.0.0.1:1/"}, "--agents must be >= 1"},
		{[]string{"run", "--rate", "10", "--agents", "2", "--local-agents", "2", "http://127.0.0.1:1/"}, "--agents and --local-agents conflict"},
		{[]string{"run", "--rate", "10", "--agents", "2", "http://127.0.0.1:1/"}, "--agents needs a token"},
		{[]string{"agent", "--token", "x"}, "give --join"},
		{[]string{"run", "--rate", "10", "--tls-ca", "ca.pem", "http://127.0.0.1:1/"}, "--tls-ca applies to a run over agents"},
		{[]string{"run", "--rate", "10", "--local-agents", "2", "--tls-cert", "c.pem", "http://127.0.0.1:1/"}, "the TLS flags apply to --agents"},
		{[]string{"run", "--rate", "10", "--agents", "1", "--token", "t", "--listen", "127.0.0.1:0", "--tls-cert", "c.pem", "http://127.0.0.1:1/"}, "--tls-cert and --tls-key go together"},
		{[]string{"agent", "--join", "nats://127.0.0.1:1", "--token", "x", "--tls-key", "k.pem"}, "--tls-cert and --tls-key go together"},
		{[]string{"agent", "--join", "nats://127.0.0.1:1"}, "give --token"},
	} {
		t.Setenv(tokenEnv, "")
		r := cli(t, "", nil, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

// An agent with a wrong token is refused: one line, exit 1.
func TestAgentWrongToken(t *testing.T) {
	l := governor.NewLimits(governor.Rate, 10)
	ctl, err := agent.NewController(agent.ControllerConfig{Listen: "127.0.0.1:0", Token: "right", Agents: 1, Spec: agent.Spec{Limits: l, Tick: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close()
	t.Setenv(tokenEnv, "wrong")
	r := cli(t, "", nil, "agent", "--join", ctl.URL(), "--wait", "2s")
	if r.code != 1 || !strings.Contains(r.stderr, "refused this agent's token") || strings.Count(r.stderr, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
}
