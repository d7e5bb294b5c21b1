package script

import (
	"slices"
	"testing"
	"time"
)

// TestExperimentalFSAndCSV reads a CSV file through k6/experimental/fs and
// k6/experimental/csv with top-level await, as k6 documents them: parse
// with a delimiter and skipFirstLine, asObjects, a Parser's next(), and a
// File's stat, read and seek.
func TestExperimentalFSAndCSV(t *testing.T) {
	var out consoleLines
	path := writeScript(t, "csv.js", `
import { open, SeekMode } from 'k6/experimental/fs';
import csv from 'k6/experimental/csv';
export const options = { iterations: 1 };
const file = await open('data.csv');
const rows = await csv.parse(file, { delimiter: ';', skipFirstLine: true });
const objs = await csv.parse(file, { delimiter: ';', asObjects: true });
const parser = new csv.Parser(file, { delimiter: ';', fromLine: 2 });
const info = await file.stat();
const buf = new Uint8Array(4);
const n = await file.read(buf);
await file.seek(0, SeekMode.End);
const end = await file.read(buf);
export default async function () {
  console.log('rows', rows.length, rows[0].join('|'));
  console.log('objs', objs.length, objs[1].name, objs[1].age);
  const first = await parser.next();
  console.log('parser', first.done, first.value.join('|'));
  await parser.next();
  console.log('done', (await parser.next()).done);
  console.log('stat', info.name, info.size, n, String.fromCharCode(...buf), end);
}
`, "data.csv", "name;age\nann;31\nbob;42\n")
	runScript(t, path, "http://127.0.0.1:1", Config{Console: out.add}, 30*time.Second)
	got := out.all()
	for _, want := range []string{"rows 2 ann|31", "objs 2 bob 42", "parser false bob|42", "done true", "stat data.csv 23 4 name null"} {
		if !slices.Contains(got, want) {
			t.Fatalf("console = %q, want %q", got, want)
		}
	}
}
