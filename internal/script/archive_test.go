package script

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/throttlekit/throttle/internal/script/bundle"
)

// TestArchiveRunsWithoutTheFiles: a script loaded from its archive — after
// a JSON round trip, as it travels to an agent, and with its folder gone —
// runs its local modules, its open()ed file and the SharedArray read
// through it as the script on disk does.
func TestArchiveRunsWithoutTheFiles(t *testing.T) {
	_, base := startTarget(t, robust())
	path := writeScript(t,
		"main.js", `
import http from 'k6/http';
import { SharedArray } from 'k6/data';
import { word } from './lib/words.js';
const users = new SharedArray('users', () => JSON.parse(open('./data/users.json')));
const note = open('note.txt');
export const options = { iterations: 2 };
export default function () {
  http.get(__ENV.BASE + '/');
  console.log(word(), users[__ITER].name, note.trim());
}`,
		"lib/words.js", `export function word() { return 'hello'; }`,
		"data/users.json", `[{"name":"ann"},{"name":"bob"}]`,
		"note.txt", "a note\n")
	var disk consoleLines
	r, _ := runScript(t, path, base, Config{Console: disk.add}, 30*time.Second)
	a := r.Archive()
	if len(a.Files) != 4 {
		t.Errorf("archive has %d files, want 4 (main, lib, users.json, note.txt): %v", len(a.Files), keys(a.Files))
	}
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var shipped bundle.Archive
	if err := json.Unmarshal(b, &shipped); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
	var out consoleLines
	runScript(t, "/nowhere/else.js", base, Config{Console: out.add, Archive: &shipped}, 30*time.Second)
	got, want := out.all(), disk.all()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(got) != 2 {
		t.Fatalf("from the archive %q, from disk %q: want the same two lines", got, want)
	}
}

// TestArchiveMissingFile: a file the archive lacks is an error naming it.
func TestArchiveMissingFile(t *testing.T) {
	a := &bundle.Archive{Entry: "/x/main.js", Files: map[string][]byte{"/x/main.js": []byte(`const f = open('gone.txt'); export default function () {}`)}}
	_, err := Load("", Config{Archive: a})
	if err == nil || !strings.Contains(err.Error(), "gone.txt") {
		t.Fatalf("%v: want an error naming gone.txt", err)
	}
}

func keys(m map[string][]byte) (out []string) {
	for k := range m {
		out = append(out, k)
	}
	return out
}
