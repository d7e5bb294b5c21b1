package script

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/target"
)

// startTarget serves a built-in target on a loopback port for the test and
// returns it and its URL.
func startTarget(t *testing.T, cfg target.Config) (*target.Target, string) {
	t.Helper()
	tg, err := target.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := target.Serve(ctx, "127.0.0.1:0", tg, target.WithShutdownGrace(time.Second))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = srv.Wait()
	})
	return tg, srv.URL()
}

// robust is a target far above any test's load, answering at once.
func robust() target.Config {
	c := target.NewConfig(1e6)
	c.Latency = 0
	return c
}

// writeScript writes files (name → source) into a fresh folder and returns
// the path of the first name given.
func writeScript(t *testing.T, files ...string) string {
	t.Helper()
	dir := t.TempDir()
	for i := 0; i+1 < len(files); i += 2 {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, files[i])), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, files[i]), []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, files[0])
}

// runScript loads and runs a script with __ENV.BASE set to base, failing
// the test on any error or if the run outlives limit.
func runScript(t *testing.T, path, base string, cfg Config, limit time.Duration) (*Runner, *RunResult) {
	t.Helper()
	if cfg.Env == nil {
		cfg.Env = map[string]string{}
	}
	cfg.Env["BASE"] = base
	r, err := Load(path, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	res, err := r.Run(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the run did not stop by itself within %v", limit)
	}
	return r, res
}
