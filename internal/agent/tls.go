package agent

import (
	"fmt"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// TLS secures the NATS link between controller and agents: PEM files.
//
// On the controller, Cert and Key are its server certificate; CA, if set,
// makes it require a client certificate signed by that CA from every agent
// (mutual TLS). On an agent, CA verifies the controller's certificate (the
// system's roots otherwise); Cert and Key are its client certificate, for a
// controller that requires one.
type TLS struct {
	Cert, Key, CA string
}

// on reports whether any TLS file is given.
func (t TLS) on() bool { return t.Cert != "" || t.Key != "" || t.CA != "" }

// Check refuses half a key pair.
func (t TLS) Check() error {
	if (t.Cert == "") != (t.Key == "") {
		return fmt.Errorf("--tls-cert and --tls-key go together: give both")
	}
	return nil
}

// serverOptions sets the embedded server's TLS.
func (t TLS) serverOptions(o *server.Options) error {
	if !t.on() {
		return nil
	}
	if err := t.Check(); err != nil {
		return err
	}
	if t.Cert == "" {
		return fmt.Errorf("--tls-ca on the controller needs its own --tls-cert and --tls-key")
	}
	cfg, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.Cert, KeyFile: t.Key, CaFile: t.CA, Verify: t.CA != ""})
	if err != nil {
		return fmt.Errorf("the controller's TLS files: %w", err)
	}
	o.TLS, o.TLSConfig, o.TLSVerify, o.TLSTimeout = true, cfg, t.CA != "", 5
	return nil
}

// clientOptions are an agent's TLS options.
func (t TLS) clientOptions() ([]nats.Option, error) {
	if !t.on() {
		return nil, nil
	}
	if err := t.Check(); err != nil {
		return nil, err
	}
	opts := []nats.Option{nats.Secure()}
	if t.CA != "" {
		opts = append(opts, nats.RootCAs(t.CA))
	}
	if t.Cert != "" {
		opts = append(opts, nats.ClientCert(t.Cert, t.Key))
	}
	return opts, nil
}
