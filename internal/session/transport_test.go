package session

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/script"
	"github.com/throttlekit/throttle/internal/testwait"
)

// A script run's reports name the transport its VUs' plain http://
// requests went through, in the JSON's settings.transport and the text
// report's first line, with the words a URL run uses: raw by default,
// fasthttp when THROTTLE_TRANSPORT asks for it, net/http with --http2.
func TestScriptReportsTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "s.js")
	// A governed scenario (k6/x/throttle imported): the text report is
	// written for those only.
	src := `import http from 'k6/http';
import 'k6/x/throttle';
export const options = { scenarios: {
  load: { executor: 'constant-arrival-rate', rate: 20, timeUnit: '1s', duration: '200ms', preAllocatedVUs: 2 },
} };
export default function () { http.get(__ENV.BASE + '/'); }
`
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, c := range []struct {
		env   string
		http2 bool
		want  string
	}{
		{"", false, engine.TransportRaw},
		{engine.TransportFastHTTP, false, engine.TransportFastHTTP},
		{"", true, engine.TransportNetHTTP},
	} {
		t.Setenv(engine.TransportEnv, c.env)
		out := filepath.Join(dir, fmt.Sprintf("r%d.json", i))
		stdout, stderr := &testwait.Buffer{}, &testwait.Buffer{}
		s := &Session{Stdout: stdout, Stderr: stderr, Quiet: true, Outputs: Outputs{JSON: out}}
		cfg := script.Config{Env: map[string]string{"BASE": srv.URL}, HTTP2: c.http2}
		if err := s.RunScript(Script{Path: path, Config: cfg}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var rep struct {
			Settings struct{ Transport string } `json:"settings"`
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Settings.Transport != c.want {
			t.Errorf("%s=%q, http2 %v: settings.transport %q, want %q", engine.TransportEnv, c.env, c.http2, rep.Settings.Transport, c.want)
		}
		text := stdout.String() + stderr.String()
		i := strings.Index(text, "throttle report:")
		if i < 0 {
			t.Fatalf("no text report in\n%s", text)
		}
		first, _, _ := strings.Cut(text[i:], "\n")
		if !strings.HasSuffix(first, "(transport "+c.want+")") {
			t.Errorf("%s=%q, http2 %v: the text report's first line %q, want it to end (transport %s)", engine.TransportEnv, c.env, c.http2, first, c.want)
		}
	}
}
