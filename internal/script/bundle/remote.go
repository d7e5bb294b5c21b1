package bundle

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script/bundle/jslib"
)

// RemoteTimeout bounds fetching one remote module.
const RemoteTimeout = 30 * time.Second

// maxRemoteSize is the most a remote module may weigh.
const maxRemoteSize = 32 << 20

// isHTTP reports whether spec is an http or https URL.
func isHTTP(spec string) bool {
	l := strings.ToLower(spec)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// read is a module's source and the base its relative imports resolve
// against: a local file's folder, or a remote module's own URL.
func (b *Bundle) read(path string) (src []byte, dir string, err error) {
	kind := "module"
	defer func() {
		if err == nil && b.opts.Read != nil {
			b.opts.Read(kind, path, len(src))
		}
	}()
	if !isHTTP(path) {
		if b.opts.Archive != nil {
			src, err = b.fromArchive(path)
		} else {
			src, err = os.ReadFile(path)
		}
		if err == nil {
			b.sources[path] = src
		}
		return src, filepath.Dir(path), err
	}
	// jslib: built in, never fetched (bundle/jslib).
	if src, ok, err := jslib.Source(path); ok {
		kind = "jslib module"
		return src, path, err
	}
	kind = "remote module"
	switch {
	case b.opts.Archive != nil:
		kind = "archived remote module"
		src, err = b.fromArchive(path)
	case b.opts.Offline:
		kind = "cached remote module"
		src, err = b.fetch(path)
	default:
		src, err = b.fetch(path)
	}
	if err == nil {
		b.sources[path] = src
	}
	return src, path, err
}

// loadRemote loads the module at an http(s) URL, once per bundle (b.mu
// is held): the same URL imported again, from any module, is the same
// record.
func (b *Bundle) loadRemote(u string) (sobek.ModuleRecord, error) {
	m, err := b.load(u)
	if err != nil {
		return nil, err
	}
	return m.record, nil
}

// fetch is a remote module's source: from the network, kept in the
// module cache if there is one; offline, from the cache only.
func (b *Bundle) fetch(u string) ([]byte, error) {
	cached := ""
	if dir := b.opts.ModuleCache; dir != "" {
		sum := sha256.Sum256([]byte(u))
		cached = filepath.Join(dir, hex.EncodeToString(sum[:])+".js")
	}
	if b.opts.Offline {
		if cached == "" {
			return nil, fmt.Errorf("remote module %s: offline, and no module cache to load it from", u)
		}
		src, err := os.ReadFile(cached)
		if err != nil {
			return nil, fmt.Errorf("remote module %s: offline, and not in the module cache %s", u, b.opts.ModuleCache)
		}
		return src, nil
	}
	src, err := b.get(u)
	if err != nil {
		return nil, err
	}
	if cached != "" {
		if err := os.MkdirAll(b.opts.ModuleCache, 0o755); err != nil {
			return nil, fmt.Errorf("module cache: %v", err)
		}
		if err := os.WriteFile(cached, src, 0o644); err != nil {
			return nil, fmt.Errorf("module cache: %v", err)
		}
	}
	return src, nil
}

// get GETs a remote module, within RemoteTimeout. Anything but a 200 is
// an error naming the URL.
func (b *Bundle) get(u string) ([]byte, error) {
	client := b.opts.HTTPClient
	if client == nil {
		client = http.DefaultClient
	}
	ctx, cancel := context.WithTimeout(context.Background(), RemoteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("remote module %s: %v", u, err)
	}
	res, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("remote module %s: %v", u, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("remote module %s: %s", u, res.Status)
	}
	src, err := io.ReadAll(io.LimitReader(res.Body, maxRemoteSize+1))
	if err != nil {
		return nil, fmt.Errorf("remote module %s: %v", u, err)
	}
	if len(src) > maxRemoteSize {
		return nil, fmt.Errorf("remote module %s: larger than %d MiB", u, maxRemoteSize>>20)
	}
	return src, nil
}
