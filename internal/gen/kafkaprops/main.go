// Command kafkaprops writes the tables of package broker/config/catalog:
// every property of each Kafka release, as Kafka's own ConfigDef rendered
// it (ConfigDef.toHtml) for the release's documentation.
//
// Its input is a directory laid out like Kafka's site, one directory per
// release named as the site names it (090, 0102, 10, 28, 39, 41), each with
// generated/kafka_config.html (the broker, KRaft controller properties
// included), topic_config.html, producer_config.html, consumer_config.html
// and admin_client_config.html where the release has them, plus a file
// SOURCES saying where each came from, one line per directory (or file):
//
//	<dir> <repository> <commit> [<file>]
//
// Kafka's HTML is not committed here; only this program and its output are.
// The program reads whatever rendering it is given: for 4.1, whose files
// could only be read page by page, the input holds a transcription into the
// same config-list format (attributes as rendered, descriptions omitted).
// It writes zz_catalog.go. Run it through go generate, naming the input:
//
//	KAFKA_SITE_INPUT=/path/to/input go generate ./broker/config/catalog
//
// Left out: 0.8.0, 0.8.1 and 0.8.2, whose documentation has hand-written
// tables of name, default and description only (no type, validator or
// importance), so the catalog does not have those releases; and the topic
// properties of 0.9.0 and 0.10.0, whose configuration.html has a hand-written
// topic table of name, default, server default and description only (those
// releases have generated broker, producer and consumer tables; the old
// Scala consumer's hand-written table is left out too).
// The admin client's table starts at 0.11.0, where AdminClient appeared.
//
// Descriptions are dropped; a property whose definition (type, default,
// validator, importance, update mode, server default) is the same in
// consecutive releases is one Def spanning them. The output is one
// composite literal, laid out statically by the linker (no init work), and
// deterministic: rerun on the same input, it is byte-identical.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// files names each kind's file, in the order of catalog's Kind.
var files = []struct{ kind, file string }{
	{"Broker", "kafka_config.html"},
	{"Topic", "topic_config.html"},
	{"Producer", "producer_config.html"},
	{"Consumer", "consumer_config.html"},
	{"Admin", "admin_client_config.html"},
}

func main() {
	in := flag.String("in", "", "input directory: <dir>/generated/*_config.html per release, and SOURCES")
	out := flag.String("out", ".", "directory to write zz_*.go into")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "kafkaprops:", err)
		os.Exit(1)
	}
}

// source is one line of SOURCES.
type source struct{ dir, repo, commit, file string }

func run(in, out string) error {
	if in == "" {
		return fmt.Errorf("no input directory: set KAFKA_SITE_INPUT (or -in) to a directory of <release dir>/generated/*_config.html files from Kafka's site and a SOURCES file (see the doc of internal/gen/kafkaprops)")
	}
	srcs, err := readSources(filepath.Join(in, "SOURCES"))
	if err != nil {
		return err
	}
	var rels []release
	seen := map[string]bool{}
	for _, s := range srcs {
		if seen[s.dir] {
			continue
		}
		seen[s.dir] = true
		name, err := releaseName(s.dir)
		if err != nil {
			return err
		}
		rels = append(rels, release{dir: s.dir, name: name})
	}
	sort.SliceStable(rels, func(i, j int) bool { return versionLess(rels[i].name, rels[j].name) })
	tables := make([][]map[string]Prop, len(files)) // kind -> release -> name -> prop
	for k, f := range files {
		tables[k] = make([]map[string]Prop, len(rels))
		for r, rel := range rels {
			path := filepath.Join(in, rel.dir, "generated", f.file)
			b, err := os.ReadFile(path)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				return err
			}
			props, err := Parse(string(b))
			if err != nil {
				return fmt.Errorf("%s: %v", path, err)
			}
			m := make(map[string]Prop, len(props))
			for _, p := range props {
				if q, dup := m[p.Name]; dup && q != p {
					return fmt.Errorf("%s: %s defined twice, differently", path, p.Name)
				}
				m[p.Name] = p
			}
			tables[k][r] = m
		}
	}
	return write(out, sourceText(srcs), rels, tables)
}

// release is one directory of the input.
type release struct{ dir, name string }

func readSources(path string) ([]source, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%v: the input needs a SOURCES file of lines \"<dir> <repository> <commit> [<file>]\"", err)
	}
	defer f.Close()
	var out []source
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		w := strings.Fields(line)
		if len(w) != 3 && len(w) != 4 {
			return nil, fmt.Errorf("%s:%d: %q: want \"<dir> <repository> <commit> [<file>]\"", path, n, line)
		}
		s := source{dir: w[0], repo: w[1], commit: w[2]}
		if len(w) == 4 {
			s.file = w[3]
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no sources", path)
	}
	return out, sc.Err()
}

// releaseName turns a site directory into kafkasim's release name:
// 090 -> 0.9.0, 0102 -> 0.10.2, 10 -> 1.0, 39 -> 3.9.
func releaseName(dir string) (string, error) {
	for _, c := range dir {
		if c < '0' || c > '9' {
			return "", fmt.Errorf("release directory %q: want digits as Kafka's site names them (090, 0102, 10, 39)", dir)
		}
	}
	switch {
	case len(dir) == 3 && dir[0] == '0':
		return "0." + dir[1:2] + "." + dir[2:], nil
	case len(dir) == 4 && dir[0] == '0':
		return "0." + dir[1:3] + "." + dir[3:], nil
	case len(dir) == 2 && dir[0] != '0':
		return dir[:1] + "." + dir[1:], nil
	}
	return "", fmt.Errorf("release directory %q: want 0XY, 0XXY or XY as Kafka's site names them (090, 0102, 10, 39)", dir)
}

// versionLess orders dotted release names numerically.
func versionLess(a, b string) bool {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) && i < len(bs); i++ {
		x, y := atoi(as[i]), atoi(bs[i])
		if x != y {
			return x < y
		}
	}
	return len(as) < len(bs)
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// sourceText names every input: for each repository and commit, the
// directories (and files) taken from it.
func sourceText(srcs []source) string {
	type key struct{ repo, commit string }
	var keys []key
	dirs := map[key][]string{}
	for _, s := range srcs {
		k := key{s.repo, s.commit}
		if _, ok := dirs[k]; !ok {
			keys = append(keys, k)
		}
		d := s.dir
		if s.file != "" {
			d += "/generated/" + s.file
		}
		dirs[k] = append(dirs[k], d)
	}
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s@%s: %s", k.repo, k.commit, strings.Join(dirs[k], " ")))
	}
	return strings.Join(parts, "; ")
}
