package script

import (
	"fmt"
	"os"

	"github.com/grafana/sobek"

	"github.com/throttlekit/throttle/internal/script/bundle"
)

// Archive is the loaded script as one artifact: its modules (local and
// remote) and every file its init context open()ed (SharedArray data read
// through open() included), so that another process runs the same script
// from it alone (Config.Archive). Call it after Load: a file open()ed only
// later, or a module imported dynamically by a computed name, is not in
// it, and a run from the archive fails naming it.
func (r *Runner) Archive() *bundle.Archive {
	a := r.bundle.Archive()
	r.filesMu.Lock()
	defer r.filesMu.Unlock()
	for k, v := range r.files {
		a.Files[k] = v
	}
	return a
}

// read is a file open() asks for: from the archive being run, or from disk.
func (r *Runner) read(path string) ([]byte, error) {
	if r.cfg.Archive == nil {
		return os.ReadFile(path)
	}
	b, ok := r.cfg.Archive.Files[path]
	if !ok {
		return nil, &os.PathError{Op: "open", Path: path, Err: fmt.Errorf("not in the script's archive")}
	}
	return b, nil
}

// Exports reports whether the script exports name (handleSummary, setup).
func (r *Runner) Exports(name string) bool {
	v := r.setupVU.exports.Get(name)
	return v != nil && !sobek.IsUndefined(v) && !sobek.IsNull(v)
}
