package detlint

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// forbiddenImports are packages whose mere import lets code escape the
// simulation.
var forbiddenImports = map[string]string{
	"sync":          "locks mean threads; a node runs on the world's goroutine only",
	"sync/atomic":   "atomics mean threads; a node runs on the world's goroutine only",
	"os":            "the real file system; use the node's sim.Disk",
	"os/exec":       "real processes",
	"net":           "the real network; use ctx.Send",
	"net/http":      "the real network; use ctx.Send",
	"crypto/rand":   "a random source outside the world's seed",
	"math/rand":     "the global random source; use ctx.Rand or ctx.Choose",
	"io/ioutil":     "the real file system",
	"syscall":       "the real operating system",
	"unsafe":        "memory tricks defeat the copy-on-send rule",
	"runtime":       "scheduling and GOMAXPROCS must not reach a decision",
	"time":          "the wall clock; use sim.Time and ctx.Now",
	"path/filepath": "the real file system's paths; use path with sim.Disk",
	"github.com/anishathalye/porcupine/visualization": "writes files",
}

// allowedTime lists the functions of package time that are harmless (none
// read the clock). Anything else from time is forbidden.
var allowedTime = map[string]bool{"Duration": true}

// mathRandV2Allowed are the math/rand/v2 names that take an explicit source:
// types and constructors. The package-level draw functions use the global
// source and are forbidden.
var mathRandV2Allowed = map[string]bool{"Rand": true, "New": true, "NewPCG": true, "PCG": true, "Source": true, "NewChaCha8": true, "ChaCha8": true, "NewZipf": true, "Zipf": true}

// Finding is one escape from the simulation.
type Finding struct {
	Pos    token.Position
	Reason string
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s", f.Pos, f.Reason) }

// Check parses every non-test Go file under the given roots and returns what
// escapes the simulation, sorted by position.
func Check(roots ...string) ([]Finding, error) {
	var out []Finding
	fset := token.NewFileSet()
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); name == "testdata" || (strings.HasPrefix(name, ".") && path != root) {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			out = append(out, checkFile(fset, f)...)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		return a.Offset < b.Offset
	})
	return out, nil
}

func checkFile(fset *token.FileSet, f *ast.File) []Finding {
	var out []Finding
	add := func(n ast.Node, format string, args ...any) {
		out = append(out, Finding{fset.Position(n.Pos()), fmt.Sprintf(format, args...)})
	}
	// Local names of imported packages that need per-call checks.
	local := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := p[strings.LastIndex(p, "/")+1:]
		if p == "math/rand/v2" {
			name = "rand"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if why, bad := forbiddenImports[p]; bad && p != "time" {
			add(imp, "imports %s: %s", p, why)
		}
		if p == "time" || p == "math/rand/v2" {
			local[name] = p
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			add(n, "go statement: a node must not start goroutines")
		case *ast.ChanType:
			add(n, "channel type: a node must not use channels")
		case *ast.SendStmt:
			add(n, "channel send: a node must not use channels")
		case *ast.SelectStmt:
			add(n, "select: a node must not use channels")
		case *ast.UnaryExpr:
			if n.Op == token.ARROW {
				add(n, "channel receive: a node must not use channels")
			}
		case *ast.SelectorExpr:
			id, ok := n.X.(*ast.Ident)
			if !ok {
				return true
			}
			switch local[id.Name] {
			case "time":
				if !allowedTime[n.Sel.Name] {
					add(n, "time.%s: the wall clock; use sim.Time and ctx.Now", n.Sel.Name)
				}
			case "math/rand/v2":
				if !mathRandV2Allowed[n.Sel.Name] {
					add(n, "rand.%s: the global random source; use ctx.Rand or ctx.Choose", n.Sel.Name)
				}
			}
		}
		return true
	})
	return out
}
