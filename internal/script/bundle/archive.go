package bundle

import (
	"fmt"
	"maps"
)

// Archive is a loaded script as one artifact, what a controller ships to
// its agents: the entry script's path as the controller saw it and the
// source of every module the load read (local files by absolute path,
// remote modules by URL; the jslib ones are built into every binary) and,
// from the runner, every file open() read. An agent loads the script from
// it (Options.Archive) without touching any file system or network.
type Archive struct {
	Entry string            `json:"entry"`
	Files map[string][]byte `json:"files"`
}

// Archive is the bundle's modules as an archive; the runner adds the
// files open() read.
func (b *Bundle) Archive() *Archive {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &Archive{Entry: b.Path, Files: maps.Clone(b.sources)}
}

// fromArchive is a module's source from the archive being run.
func (b *Bundle) fromArchive(path string) ([]byte, error) {
	src, ok := b.opts.Archive.Files[path]
	if !ok {
		return nil, fmt.Errorf("%s is not in the script's archive (a module imported only at run time, with a computed name, is not shipped)", path)
	}
	return src, nil
}
