package suite

// This file finds the scripts of a suite run over paths (kafkasim suite
// PATH...): files as named, directories walked for files with the
// extension, every file parsed, each named as a case so that two scripts
// of one base name in different directories stay apart. Every problem of
// every path is collected before anything runs, so that a CI log shows
// them all at once, each at file:line where it has one.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"
)

// DefaultExt is the extension of the scripts a directory is searched for,
// as the built-in scenarios have it.
const DefaultExt = ".txt"

// BadInput is every problem found in a suite's scripts before anything
// runs: unreadable or missing paths, directories without scripts, parse
// errors (file:line), variants whose configuration is refused. Each
// problem is one line, its place first.
type BadInput struct {
	Problems []string
}

func (e *BadInput) Error() string {
	noun := "problems"
	if len(e.Problems) == 1 {
		noun = "problem"
	}
	return fmt.Sprintf("%d %s in the scripts, nothing ran:\n%s", len(e.Problems), noun, strings.Join(e.Problems, "\n"))
}

// Join adds other's problems after e's; either may be nil.
func (e *BadInput) Join(other *BadInput) *BadInput {
	switch {
	case e == nil:
		return other
	case other == nil:
		return e
	}
	return &BadInput{Problems: append(slices.Clip(e.Problems), other.Problems...)}
}

// CheckExt normalises an extension as -ext gives it ("txt" or ".txt")
// and refuses one that cannot name a file's ending.
func CheckExt(ext string) (string, error) {
	if !strings.HasPrefix(ext, ".") {
		ext = "." + ext
	}
	if ext == "." || strings.ContainsAny(ext, `/\*?[`) {
		return "", fmt.Errorf("-ext %q: want a file extension such as .txt or scn (no path separator or wildcard)", strings.TrimPrefix(ext, "."))
	}
	return ext, nil
}

// found is one script file: the path shown in messages (the argument, or
// the argument joined with the path below it) and the name its case
// starts from.
type found struct {
	shown string
	abs   string
	// rel is the path relative to the argument without the extension,
	// slash-separated: the case name unless another script has it too.
	rel string
}

// Load finds the scripts under paths and parses every one. A path that is
// a file is a script whatever its extension; a directory is walked
// (recursively, in lexical order, following symbolic links to files but
// not to directories, skipping names that start with '.') for files
// ending in ext. The same file reached twice runs once.
//
// Each script's case name (Script.Name: the first half of the suite's
// "case/variant") is its path relative to the argument it was found
// under, slash-separated, without the extension; for a file argument, its
// base name without the extension. When two scripts would share a name
// (the same relative path under two arguments), each takes as many
// directories of its absolute path as tell them apart. A 'name' line in
// a script does not change it. Script.Path is the absolute path, which
// replay commands name. The scripts come back sorted by name.
//
// The error, when not nil, is a *BadInput listing every problem: the
// scripts that did load come back beside it (their variants can be
// checked too, Plan).
func Load(paths []string, ext string) ([]*scenarios.Script, error) {
	var bad BadInput
	var scripts []*scenarios.Script
	var rels, abss []string
	seen := map[string]bool{}
	for _, p := range paths {
		files, problem := find(p, ext)
		if problem != "" {
			bad.Problems = append(bad.Problems, problem)
		}
		for _, f := range files {
			if seen[f.abs] {
				continue
			}
			seen[f.abs] = true
			s, err := parseFile(f)
			if err != nil {
				bad.Problems = append(bad.Problems, err.Error())
				continue
			}
			scripts = append(scripts, s)
			rels = append(rels, f.rel)
			abss = append(abss, f.abs)
		}
	}
	for i, name := range caseNames(rels, abss) {
		scripts[i].Name = name
	}
	slices.SortStableFunc(scripts, func(a, b *scenarios.Script) int { return strings.Compare(a.Name, b.Name) })
	if len(bad.Problems) > 0 {
		return scripts, &bad
	}
	return scripts, nil
}

// find lists the scripts of one argument, or says what is wrong with it.
func find(p, ext string) ([]found, string) {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Sprintf("%s: no such file or directory", p) + builtinHint(p)
		}
		return nil, fmt.Sprintf("%s: %v", p, unwrapPath(err))
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", p, err)
	}
	if !fi.IsDir() {
		base := filepath.Base(p)
		return []found{{shown: p, abs: abs, rel: strings.TrimSuffix(base, filepath.Ext(base))}}, ""
	}
	// NB: a directory reached through a symbolic link (scenarios -> ...)
	// is walked from its target; the paths shown keep the argument.
	root, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, fmt.Sprintf("%s: %v", p, unwrapPath(err))
	}
	var out []found
	var problem string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(root, path)
		shown := filepath.Join(p, rel)
		if err != nil {
			problem = fmt.Sprintf("%s: %v", shown, unwrapPath(err))
			return filepath.SkipAll
		}
		if path != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ext) || d.Name() == ext {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if st, err := os.Stat(path); err != nil || st.IsDir() {
				return nil // a dangling link, or one to a directory: not a script
			}
		}
		out = append(out, found{shown: shown, abs: filepath.Join(abs, rel), rel: filepath.ToSlash(strings.TrimSuffix(rel, ext))})
		return nil
	})
	if err != nil && problem == "" {
		problem = fmt.Sprintf("%s: %v", p, err)
	}
	if problem != "" {
		return nil, problem
	}
	if len(out) == 0 {
		return nil, fmt.Sprintf("%s: no *%s scripts in this directory or below it (-ext chooses another extension)", p, ext)
	}
	return out, ""
}

// builtinHint says how to pick a built-in scenario when p names one.
func builtinHint(p string) string {
	all, err := scenarios.All()
	if err != nil {
		return ""
	}
	for _, s := range all {
		if s.Name == p {
			return fmt.Sprintf(" (the built-in scenario %s runs with no path: kafkasim suite -run '^%s/')", p, p)
		}
	}
	return ""
}

// unwrapPath drops the operation and path of an *fs.PathError, which the
// message already names.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// parseFile reads and parses one script; Path is its absolute path.
func parseFile(f found) (*scenarios.Script, error) {
	r, err := os.Open(f.shown)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read it: %v", f.shown, unwrapPath(err))
	}
	defer r.Close()
	base := filepath.Base(f.shown)
	// NB: the name Parse checks is the one 'kafkasim replay -scenario
	// FILE' will give the script (scenarios.Load), so a file the suite
	// accepts replays.
	s, err := scenarios.Parse(f.shown, strings.TrimSuffix(base, ".txt"), r)
	if err != nil {
		var se *scenarios.SyntaxError
		if errors.As(err, &se) && se.Line == 0 {
			// A whole-script problem (no brokers line, a bad name) has
			// no line: the file still leads.
			return nil, fmt.Errorf("%s: %s", se.File, se.Msg)
		}
		if !strings.HasPrefix(err.Error(), f.shown+":") {
			return nil, fmt.Errorf("%s: %w", f.shown, err)
		}
		return nil, err
	}
	s.Path = f.abs
	return s, nil
}

// caseNames names each script by its relative path; names two scripts
// share are lengthened, both, by one directory of their absolute paths at
// a time until every name is unique (absolute paths differ, so this ends).
func caseNames(rels, abss []string) []string {
	parts := make([][]string, len(abss))
	k := make([]int, len(abss))
	names := make([]string, len(abss))
	for i, a := range abss {
		ps := slices.DeleteFunc(strings.Split(filepath.ToSlash(a), "/"), func(s string) bool { return s == "" })
		ps[len(ps)-1] = path.Base(rels[i]) // without the extension, as rel has it
		parts[i] = ps
		names[i] = rels[i]
		k[i] = strings.Count(rels[i], "/") + 1
	}
	for {
		byName := map[string][]int{}
		for i, n := range names {
			byName[n] = append(byName[n], i)
		}
		changed := false
		for _, idx := range byName {
			if len(idx) < 2 {
				continue
			}
			for _, i := range idx {
				if k[i] < len(parts[i]) {
					k[i]++
					names[i] = strings.Join(parts[i][len(parts[i])-k[i]:], "/")
					changed = true
				}
			}
		}
		if !changed {
			return names
		}
	}
}
