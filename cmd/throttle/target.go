package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/throttlekit/throttle/internal/session"
	"github.com/throttlekit/throttle/internal/target"
)

// targetPhase labels a standalone target's series: it serves whatever phase
// loads it, so it is named for itself.
const targetPhase = "target"

type targetFlags struct {
	builtinFlags
	listen     string
	concurrent bool
	anyAddr    bool
	downClose  bool
	metrics    session.Metrics
}

func newTargetCmd(e env) *cobra.Command {
	var f targetFlags
	cmd := &cobra.Command{
		Use:   "target",
		Short: "Serve the built-in target, with a known capacity, until Ctrl-C",
		Long:  fmt.Sprintf(helpText("target"), target.DefaultBacklogDepth),
		Example: `  throttle target                                  # 800 req/s, shed, on 127.0.0.1:8080
  throttle target --capacity 2000 --model collapse --listen 127.0.0.1:9000
  throttle target --capacity 16 --concurrent --latency 20ms  # 16 in service at once
  throttle target --model backlog --servers 2 --latency 10ms # like gunicorn, 2 sync workers`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd.Flags(), e) },
	}
	fs := cmd.Flags()
	fs.SortFlags = false
	f.builtinFlags.register(fs, "capacity in req/s (or requests in service with --concurrent)")
	fs.StringVar(&f.listen, "listen", "127.0.0.1:8080", "address to listen on (port 0 picks a free one)")
	fs.BoolVar(&f.concurrent, "concurrent", false, "capacity bounds requests in service at once instead of a rate")
	fs.BoolVar(&f.downClose, "reset-when-down", false, "reserved for tests: reset connections instead of 503 while down")
	fs.BoolVar(&f.anyAddr, "allow-remote", false, "allow a --listen address other than loopback")
	registerMetrics(fs, &f.metrics)
	_ = fs.MarkHidden("reset-when-down")
	return cmd
}

func (f *targetFlags) run(fs *pflag.FlagSet, e env) error {
	tc, err := f.config(fs, f.concurrent)
	if err != nil {
		return err
	}
	tc.DownClose = f.downClose
	tg, err := target.New(tc)
	if err != nil {
		return usageError{Err: err}
	}
	if err := f.metrics.Start(e.stderr); err != nil {
		return err
	}
	defer f.metrics.Stop()
	if err := f.metrics.AddTarget(targetPhase, tg); err != nil {
		return err
	}
	var opts []target.ServeOption
	if f.anyAddr {
		opts = append(opts, target.AllowNonLoopback())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := target.Serve(ctx, f.listen, tg, opts...)
	if err != nil {
		return session.ListenFailure("--listen", f.listen, err)
	}
	fmt.Fprintf(e.stdout, "serving %s on %s (Ctrl-C to stop)\n", tc, srv.URL())
	if e.signals != nil {
		<-e.signals
	} else {
		select {} // no way to be told to stop: serve forever
	}
	cancel()
	werr := srv.Wait()
	st := tg.Stats()
	fmt.Fprintf(e.stdout, "stopped: %d requests, %d ok, %d shed, %d expired, %d collapsed, %d abandoned (%d zombies)\n",
		st.Arrivals, st.OK, st.Shed, st.Expired, st.Collapsed, st.Canceled, st.Zombies)
	return werr
}
