package testdns

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"
)

// A name looked up through the resolver is "not found", answered by the
// loopback server (a resolver that reached no server would time out or
// fail to dial instead).
func TestNotFound(t *testing.T) {
	r := Resolver(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := r.LookupHost(ctx, "no-such-host.invalid")
	var de *net.DNSError
	if !errors.As(err, &de) || !de.IsNotFound {
		t.Fatalf("lookup: %v, want a DNS not-found error", err)
	}
}
