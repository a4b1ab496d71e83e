package clienttests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Markers say how a client's test files reach a broker, for
// IntegrationTests: a test function reaches one when it calls one of
// Helpers or holds a string literal containing one of Addresses, directly
// or through the other functions of its package's test files.
type Markers struct {
	// Helpers are functions of the client's test files that dial the
	// broker (kgo's newTestClient, kafka-go's newLocalClient).
	Helpers []string
	// Addresses are substrings of the broker addresses the tests dial,
	// e.g. "localhost:909" (kafka-go names its broker in literals).
	Addresses []string
}

// IntegrationTests returns, sorted, the top-level tests of the package in
// dir (its *_test.go files) that reach a broker by m: the tests a client
// suite runs against a cluster. The rest are unit tests, which pass or
// fail whatever the cluster, and are left out.
//
// NB: the reach is by name, not by type: a method or a local variable
// named like a helper counts as a call. Over-counting costs a unit test in
// the table; it never drops an integration test.
func IntegrationTests(dir string, m Markers) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	// names[f] are the identifiers f's body mentions; "" marks an address.
	names := map[string]map[string]bool{}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		af, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range af.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Recv != nil {
				continue
			}
			mentions := names[fd.Name.Name]
			if mentions == nil {
				mentions = map[string]bool{}
				names[fd.Name.Name] = mentions
			}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.Ident:
					mentions[n.Name] = true
				case *ast.BasicLit:
					if n.Kind == token.STRING && containsAny(n.Value, m.Addresses) {
						mentions[""] = true
					}
				}
				return true
			})
		}
	}
	reaches := map[string]bool{"": true}
	for _, h := range m.Helpers {
		reaches[h] = true
	}
	for changed := true; changed; {
		changed = false
		for f, mentions := range names {
			if reaches[f] {
				continue
			}
			for n := range mentions {
				if reaches[n] {
					reaches[f], changed = true, true
					break
				}
			}
		}
	}
	var tests []string
	for f := range names {
		if isTestName(f) && reaches[f] {
			tests = append(tests, f)
		}
	}
	sort.Strings(tests)
	return tests, nil
}

// isTestName reports whether f is a test function go test runs: TestXxx,
// where Xxx does not start with a lower-case letter; TestMain is not one.
func isTestName(f string) bool {
	if !strings.HasPrefix(f, "Test") || f == "TestMain" {
		return false
	}
	rest := f[len("Test"):]
	return rest == "" || !(rest[0] >= 'a' && rest[0] <= 'z')
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
