package script

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCryptoModule runs k6/crypto, the WebCrypto globals and the text
// codecs in a script and checks their results against known digests.
func TestCryptoModule(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "crypto.js", `
import crypto from 'k6/crypto';
import { sha256, hmac, createHMAC } from 'k6/crypto';
export const options = { iterations: 1 };
export default function () {
  console.log('sha256', sha256('hello world!', 'hex'));
  const bin = new Uint8Array([0, 104, 101, 108, 108, 111, 32, 119, 111, 114, 108, 100, 33]).subarray(1);
  console.log('typed', crypto.sha256(bin, 'hex'));
  console.log('md5', crypto.md5('abc', 'base64'));
  console.log('hmac', hmac('sha256', 'Jefe', 'what do ya want for nothing?', 'hex'));
  const h = createHMAC('sha256', 'Jefe');
  h.update('what do ya want ');
  h.update('for nothing?');
  console.log('hasher', h.digest('hex'));
  const c = crypto.createHash('sha1');
  c.update('abc');
  console.log('binary', new Uint8Array(c.digest('binary')).length);
  console.log('random', crypto.randomBytes(16).byteLength);
  const dv = new DataView(new ArrayBuffer(4));
  dv.setInt32(0, 0x5f3a0b01);
  console.log('hex', crypto.hexEncode(dv.buffer), crypto.hexEncode('hi'), crypto.hexEncode(crypto.randomBytes(12)).length);
  const arr = new Uint8Array(32);
  globalThis.crypto.getRandomValues(arr);
  console.log('filled', arr.some((x) => x !== 0));
  console.log('uuid', globalThis.crypto.randomUUID());
  const enc = new TextEncoder().encode('héllo');
  console.log('codec', enc.length, new TextDecoder().decode(enc));
  try { globalThis.crypto.subtle; } catch (e) { console.log('subtle', String(e).includes('crypto.subtle is not supported')); }
  try { crypto.sha256('x', 'base32'); } catch (e) { console.log('enc', String(e).includes('unknown output encoding')); }
}
`)
	runScript(t, path, "http://127.0.0.1:1", Config{Console: out.add}, 30*time.Second)
	got := out.all()
	for _, want := range []string{
		"sha256 7509e5bda0c762d2bac7f90d758b5b2263fa01ccbc542ab5e3df163be08e6ca9",
		"typed 7509e5bda0c762d2bac7f90d758b5b2263fa01ccbc542ab5e3df163be08e6ca9",
		"md5 kAFQmDzST7DWlj99KOF/cg==",
		"hmac 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		"hasher 5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
		"binary 20", "random 16", "hex 5f3a0b01 6869 24", "filled true", "codec 6 héllo", "subtle true", "enc true",
	} {
		if !slices.Contains(got, want) {
			t.Fatalf("console = %q, want %q", got, want)
		}
	}
	i := slices.IndexFunc(got, func(s string) bool { return strings.HasPrefix(s, "uuid ") })
	if i < 0 || !regexp.MustCompile(`^uuid [0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`).MatchString(got[i]) {
		t.Fatalf("console = %q, want a v4 UUID", got)
	}
}
