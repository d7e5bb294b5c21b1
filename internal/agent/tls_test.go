package agent

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/testwait"
)

// pki writes a CA, a server certificate for 127.0.0.1 and a client
// certificate, all signed by the CA, as PEM files in dir.
func pki(t *testing.T, dir string) (ca, srvCert, srvKey, cliCert, cliKey string) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		k, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, KeyUsage: x509.KeyUsageDigitalSignature, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalECPrivateKey(k)
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	srvCert, srvKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	cliCert, cliKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return write("ca.pem", "CERTIFICATE", caDER), srvCert, srvKey, cliCert, cliKey
}

// Mutual TLS: an agent that verifies the controller with the CA and shows
// a client certificate joins; one without a client certificate, or that
// cannot verify the controller, is refused at once in one error.
func TestTLS(t *testing.T) {
	ca, sc, sk, cc, ck := pki(t, t.TempDir())
	joined := make(chan AgentInfo, 1)
	c, err := NewController(ControllerConfig{Listen: "127.0.0.1:0", Token: testToken, Agents: 1, Version: "test",
		TLS: TLS{Cert: sc, Key: sk, CA: ca}, Spec: testSpec(t, "http://127.0.0.1:1/", 10, 1),
		Joined: func(a AgentInfo) { joined <- a }})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	join := func(tls TLS) error {
		ctx, cancel := context.WithTimeout(context.Background(), testwait.Deadline)
		defer cancel()
		_, err := Join(ctx, Config{Join: c.URL(), Token: testToken, Name: "tls", Version: "test", Wait: 5 * time.Second, TLS: tls})
		return err
	}
	for _, bad := range []struct {
		tls  TLS
		want string
	}{
		{TLS{CA: ca}, "TLS with the controller"},            // no client certificate
		{TLS{Cert: cc, Key: ck}, "TLS with the controller"}, // cannot verify the controller
		{TLS{Cert: cc}, "--tls-cert and --tls-key go together"},
	} {
		err := join(bad.tls)
		t.Logf("%+v: %v", bad.tls, err)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: Join error %v, want %q", bad.tls, err, bad.want)
		}
	}
	done := make(chan error, 1)
	go func() { done <- join(TLS{CA: ca, Cert: cc, Key: ck}) }()
	if a := testwait.Receive(t, joined, "the TLS agent to join"); a.Name != "tls" {
		t.Fatalf("joined %+v", a)
	}
	c.Close() // the agent sees its controller go
	if err := testwait.Receive(t, done, "the agent's end"); err == nil || !strings.Contains(err.Error(), "closed before the start") {
		t.Fatalf("Join after the controller closed: %v", err)
	}
}
