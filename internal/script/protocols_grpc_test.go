package script

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/throttlekit/throttle/internal/engine"
	"github.com/throttlekit/throttle/internal/protoecho"
)

// startGRPC serves protoecho's gRPC server on loopback for the test and
// returns its address.
func startGRPC(t *testing.T) string {
	t.Helper()
	srv, err := protoecho.NewGRPC()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return ln.Addr().String()
}

// TestGRPC: k6 documentation's client shape: load a .proto at init,
// connect, invoke with metadata, asyncInvoke, healthCheck, close; a call
// shed with RESOURCE_EXHAUSTED or past its timeout is a failed attempt,
// classed 5xx and timeout; grpc_req_duration counts every call.
func TestGRPC(t *testing.T) {
	addr := startGRPC(t)
	var out consoleLines
	path := writeScript(t, "grpc.js", `
import grpc from 'k6/net/grpc';
import { check } from 'k6';
const client = new grpc.Client();
client.load(['protos'], 'echo.proto');
export const options = { iterations: 1 };
export default async function () {
  client.connect(__ENV.ADDR, { plaintext: true, timeout: '5s' });
  const res = client.invoke('throttle.echo.Echo/Say', { text: 'ab', times: 2 }, { metadata: { 'x-in': 'hi' }, tags: { k: 'v' } });
  check(res, { 'status is OK': (r) => r && r.status === grpc.StatusOK });
  console.log(res.message.text, res.message.count, res.message.echoedHeader, res.headers['x-served-by'][0]);
  const shed = client.invoke('/throttle.echo.Echo/Say', { text: 'shed' });
  console.log('shed', shed.status === grpc.StatusResourceExhausted, shed.error.message, shed.message);
  const slow = client.invoke('throttle.echo.Echo/Say', { text: 'slow' }, { timeout: '20ms' });
  console.log('slow', slow.status === grpc.StatusDeadlineExceeded);
  const [a, b] = await Promise.all([
    client.asyncInvoke('throttle.echo.Echo/Say', { text: 'x' }),
    client.asyncInvoke('throttle.echo.Echo/Say', { text: 'y', times: 3 }),
  ]);
  console.log('async', a.message.text, b.message.text);
  console.log('health', client.healthCheck('throttle.echo.Echo').Status === grpc.HealthCheckServing, client.healthCheck('nope').Status);
  client.close();
  const r = new grpc.Client();
  r.connect(__ENV.ADDR, { plaintext: true, reflect: true });
  console.log('reflected', r.invoke('throttle.echo.Echo/Say', { text: 'r' }).message.text);
  r.close();
}
`, "protos/echo.proto", protoecho.Proto)
	r, _ := runScript(t, path, "", Config{Console: out.add, Env: map[string]string{"ADDR": addr}}, 30*time.Second)
	want := []string{"abab 2 hi echo", "shed true over capacity null", "slow true", "async x yyy", "health true SERVICE_UNKNOWN", "reflected r"}
	if got := out.all(); !slices.Equal(got, want) {
		t.Fatalf("console = %q, want %q", got, want)
	}
	c := r.Phases()[0].Counts()
	// Attempts: two connects, six calls and two health checks; the shed
	// one and the slow one failed.
	if c.IterFailed != 1 || c.OK != 8 || c.Failed != 2 || c.Classes[engine.Class5xx] != 1 || c.Classes[engine.ClassTimeout] != 1 {
		t.Fatalf("counts = %+v", c)
	}
	if n := metricStats(r)["grpc_req_duration"].Count; n != 8 {
		t.Errorf("grpc_req_duration count = %d, want 8 (every call and health check)", n)
	}
}

// TestGRPCRefusals: the tls param is refused by name, a streaming method
// given to invoke is pointed to grpc.Stream; a connect to a closed port
// is a failed attempt.
func TestGRPCRefusals(t *testing.T) {
	addr := startGRPC(t)
	closed := closedAddr(t)
	var out consoleLines
	path := writeScript(t, "refuse.js", `
import grpc from 'k6/net/grpc';
const client = new grpc.Client();
client.load([], 'echo.proto');
export const options = { iterations: 1 };
export default function () {
  for (const f of [
    () => client.connect(__ENV.ADDR, { plaintext: true, tls: {} }),
    () => { client.connect(__ENV.ADDR, { plaintext: true }); client.invoke('throttle.echo.Echo/Chat', {}); },
    () => client.connect(__ENV.CLOSED, { plaintext: true, timeout: '5s' }),
  ]) {
    try { f(); } catch (e) { console.log(String(e)); }
  }
}
`, "echo.proto", protoecho.Proto)
	r, _ := runScript(t, path, "", Config{Console: out.add, Env: map[string]string{"ADDR": addr, "CLOSED": closed}}, 30*time.Second)
	got := out.all()
	if len(got) != 3 || !strings.Contains(got[0], "tls param is not supported") || !strings.Contains(got[1], "is a streaming method; use grpc.Stream") ||
		!strings.Contains(got[2], "connection failed") {
		t.Fatalf("console = %q", got)
	}
	if c := r.Phases()[0].Counts(); c.Classes[engine.ClassRefused] != 1 || c.OK != 1 {
		t.Fatalf("counts = %+v, want one ok connect and one refused", c)
	}
}

// TestGRPCStream: k6 documentation's bidirectional stream shape: write,
// end, data events with their metadata, then end; a stream the server
// ends RESOURCE_EXHAUSTED gets error then end and is a failed attempt;
// k6's stream metrics count streams and messages.
func TestGRPCStream(t *testing.T) {
	addr := startGRPC(t)
	var out consoleLines
	path := writeScript(t, "stream.js", `
import { Client, Stream, StatusResourceExhausted } from 'k6/net/grpc';
const client = new Client();
client.load([], 'echo.proto');
export const options = { iterations: 1 };
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  const got = [];
  const stream = new Stream(client, 'throttle.echo.Echo/Chat', { metadata: { 'x-in': 'm' } });
  stream.on('data', (msg, meta) => got.push(msg.text + ':' + msg.echoedHeader + ':' + (typeof meta.ts)));
  stream.on('error', (e) => console.log('unexpected error', JSON.stringify(e)));
  stream.on('end', () => {
    console.log('end', got.join(' '));
    const shed = new Stream(client, 'throttle.echo.Echo/Chat');
    shed.on('error', (e) => console.log('error', e.code === StatusResourceExhausted, e.message));
    shed.on('end', () => { console.log('shed end'); client.close(); });
    shed.write({ text: 'shed' });
  });
  for (const text of ['a', 'b', 'c']) stream.write({ text });
  stream.end();
}
`, "echo.proto", protoecho.Proto)
	r, _ := runScript(t, path, "", Config{Console: out.add, Env: map[string]string{"ADDR": addr}}, 30*time.Second)
	want := []string{"end a:m:number b:m:number c:m:number", "error true over capacity", "shed end"}
	if got := out.all(); !slices.Equal(got, want) {
		t.Fatalf("console = %q, want %q", got, want)
	}
	// Attempts: the connect and the first stream ok, the shed stream failed.
	if c := r.Phases()[0].Counts(); c.OK != 2 || c.Failed != 1 || c.Classes[engine.Class5xx] != 1 {
		t.Fatalf("counts = %+v", c)
	}
	m := metricStats(r)
	for name, want := range map[string]uint64{"grpc_streams": 2, "grpc_streams_msgs_sent": 4, "grpc_streams_msgs_received": 3} {
		if m[name].Count != want {
			t.Errorf("%s count = %d, want %d", name, m[name].Count, want)
		}
	}
}

// TestGRPCProtoset: loadProtoset reads a FileDescriptorSet (what protoc
// --descriptor_set_out --include_imports writes) and its methods can be
// invoked.
func TestGRPCProtoset(t *testing.T) {
	addr := startGRPC(t)
	c := protocompile.Compiler{Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
		Accessor: protocompile.SourceAccessorFromMap(map[string]string{protoecho.ProtoFile: protoecho.Proto}),
	})}
	files, err := c.Compile(context.Background(), protoecho.ProtoFile)
	if err != nil {
		t.Fatal(err)
	}
	set := &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{
		protodesc.ToFileDescriptorProto(wrapperspb.File_google_protobuf_wrappers_proto),
		protodesc.ToFileDescriptorProto(files[0]),
	}}
	b, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	var out consoleLines
	path := writeScript(t, "set.js", `
import grpc from 'k6/net/grpc';
const client = new grpc.Client();
client.loadProtoset('echo.protoset');
export const options = { iterations: 1 };
export default function () {
  client.connect(__ENV.ADDR, { plaintext: true });
  console.log(client.invoke('throttle.echo.Echo/Say', { text: 'p', times: 3 }).message.text);
  client.close();
}
`, "echo.protoset", string(b))
	runScript(t, path, "", Config{Console: out.add, Env: map[string]string{"ADDR": addr}}, 30*time.Second)
	if got := out.all(); !slices.Equal(got, []string{"ppp"}) {
		t.Fatalf("console = %q", got)
	}
}
