package scenarios

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

//go:embed scripts/*.txt
var builtin embed.FS

// Builtin returns the scenarios that ship with kafkasim, sorted by name.
func Builtin() ([]*Script, error) {
	entries, err := fs.ReadDir(builtin, "scripts")
	if err != nil {
		return nil, err
	}
	var out []*Script
	for _, e := range entries {
		f, err := builtin.Open("scripts/" + e.Name())
		if err != nil {
			return nil, err
		}
		s, err := Parse("scripts/"+e.Name(), strings.TrimSuffix(e.Name(), ".txt"), f)
		f.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Load returns the scenario named name: a built-in one (the swarm
// included), or a script file when name is a path (users add scenarios
// without recompiling).
func Load(name string) (*Script, error) {
	if strings.HasSuffix(name, ".txt") || strings.ContainsRune(name, os.PathSeparator) {
		f, err := os.Open(name)
		if err != nil {
			return nil, fmt.Errorf("scenario file: %w", err)
		}
		defer f.Close()
		s, err := Parse(name, strings.TrimSuffix(filepath.Base(name), ".txt"), f)
		if err != nil {
			return nil, err
		}
		if s.Path, err = filepath.Abs(name); err != nil {
			return nil, fmt.Errorf("scenario file %s: %w", name, err)
		}
		if filepath.IsAbs(name) {
			s.Path = name // as given
		}
		return s, nil
	}
	all, err := All() // the scripts and the swarm: what 'kafkasim list' shows
	if err != nil {
		return nil, err
	}
	var names []string
	for _, s := range all {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return nil, fmt.Errorf("unknown scenario %q (allowed: %s, or the path of a script file)", name, strings.Join(names, ", "))
}

// ReplayName is what a replay command passes as -scenario: the script
// file's absolute path for a file scenario (so that the command runs from
// any directory), the name for a built-in one.
func (s *Script) ReplayName() string {
	if s.Path != "" {
		return s.Path
	}
	return s.Name
}

// All returns every built-in scenario and the swarm scenario.
func All() ([]*Script, error) {
	all, err := Builtin()
	if err != nil {
		return nil, err
	}
	all = append(all, Swarm())
	sort.Slice(all, func(i, j int) bool { return all[i].Name < all[j].Name })
	return all, nil
}
