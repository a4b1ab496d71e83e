package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunWritesMergedDeterministicTables runs the generator over two
// releases whose topic tables differ in one property only.
func TestRunWritesMergedDeterministicTables(t *testing.T) {
	in := t.TempDir()
	write := func(path, text string) {
		t.Helper()
		p := filepath.Join(in, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("SOURCES", "# test\n0101 github.com/apache/kafka-site 0123abc\n0102 github.com/apache/kafka-site 0123abc\n")
	write("0101/generated/topic_config.html", topicTableSnippet)
	write("0102/generated/topic_config.html", strings.Replace(topicTableSnippet, "1000012", "2000000", 1))
	out1, out2 := t.TempDir(), t.TempDir()
	for _, out := range []string{out1, out2} {
		if err := run(in, out); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"zz_catalog.go"} {
		a, err := os.ReadFile(filepath.Join(out1, f))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(out2, f))
		if string(a) != string(b) {
			t.Errorf("%s differs between two runs", f)
		}
	}
	cat, _ := os.ReadFile(filepath.Join(out1, "zz_catalog.go"))
	for _, want := range []string{
		`const Source = "github.com/apache/kafka-site@0123abc: 0101 0102"`,
		`var releaseNames = []string{"0.10.1", "0.10.2"}`,
	} {
		if !strings.Contains(string(cat), want) {
			t.Errorf("zz_catalog.go lacks %s:\n%s", want, cat)
		}
	}
	topic := cat
	for _, want := range []string{
		`{Name: "max.message.bytes", Kind: Topic, Type: Int, Default: "1000012", Valid: "[0,...]", Importance: "medium", ServerDefault: "message.max.bytes", From: 0, To: 0},`,
		`{Name: "max.message.bytes", Kind: Topic, Type: Int, Default: "2000000", Valid: "[0,...]", Importance: "medium", ServerDefault: "message.max.bytes", From: 1, To: 1},`,
		`{Name: "metric.reporters", Kind: Topic, Type: List, Default: "", Importance: "low", From: 0, To: 1},`,
	} {
		if !strings.Contains(string(topic), want) {
			t.Errorf("zz_catalog.go lacks %s:\n%s", want, topic)
		}
	}
}
