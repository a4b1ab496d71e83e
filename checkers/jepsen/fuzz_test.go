package jepsen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadHistory: no input panics the EDN history reader, nor the
// analysis of a history it read.
func FuzzReadHistory(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "*.edn"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte(`{:type :invoke, :f :send, :value [[:send 1 2]], :process 0, :index 0}`))
	f.Add([]byte(`[{:type :ok :f :txn :value [[:poll {1 [[0 1]]}]] :process 1}]`))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := ReadHistory(bytes.NewReader(in))
		if err != nil {
			return
		}
		_ = Check(h)
	})
}
