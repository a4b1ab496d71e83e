package harness

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is this repository's module path; moduleRoot its directory, from
// this package's.
const (
	module     = "github.com/kafkasim/kafkasim/"
	moduleRoot = "../.."
)

// TestImportsGoOneWay: the language never imports what runs it, and each
// runner imports only the rooms above it (scenarios <- harness <- workload
// <- replay <- the drivers). The walk follows every import inside the
// module, transitively, through the non-test files.
func TestImportsGoOneWay(t *testing.T) {
	if _, ok := moduleImports(t, "scenarios/workload")["scenarios"]; !ok {
		t.Fatal("the walk does not see that workload imports scenarios: it would check nothing")
	}
	drivers := []string{"scenarios/suite", "scenarios/sweep", "scenarios/matrix", "scenarios/explore", "scenarios/shrink", "cmd/kafkasim", "reports"}
	for _, c := range []struct {
		pkg       string
		forbidden []string
	}{
		{"scenarios", append([]string{"scenarios/harness", "scenarios/workload", "scenarios/replay"}, drivers...)},
		{"scenarios/harness", append([]string{"scenarios/workload", "scenarios/replay"}, drivers...)},
		{"scenarios/workload", append([]string{"scenarios/replay"}, drivers...)},
		{"scenarios/replay", drivers},
	} {
		chains := moduleImports(t, c.pkg)
		for _, f := range c.forbidden {
			if chain, ok := chains[f]; ok {
				t.Errorf("%s imports %s: %s", c.pkg, f, strings.Join(chain, " -> "))
			}
		}
	}
}

// moduleImports returns every package of the module that pkg imports,
// directly or not, each with the chain of imports that reaches it.
func moduleImports(t *testing.T, pkg string) map[string][]string {
	t.Helper()
	chains := map[string][]string{}
	queue := []string{pkg}
	chains[pkg] = []string{pkg}
	fset := token.NewFileSet()
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		files, err := filepath.Glob(filepath.Join(moduleRoot, p, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no Go files in %s (%v)", p, filepath.Join(moduleRoot, p), err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range f.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				dep, ok := strings.CutPrefix(path, module)
				if !ok {
					continue
				}
				if _, seen := chains[dep]; !seen {
					chains[dep] = append(append([]string{}, chains[p]...), dep)
					queue = append(queue, dep)
				}
			}
		}
	}
	delete(chains, pkg)
	return chains
}
