package explore

// This file saves and resumes a search: the queue of prefixes still to run,
// the visited states with their depths, and the counters, as JSON. Choices
// are written in their text form ("fault:2/5"), the visited set sorted by
// hash, so a file is the same for the same search.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

type stateFile struct {
	Format  string     `json:"format"`
	Key     string     `json:"key"`
	Runs    int        `json:"runs"`
	Depth   int        `json:"depth"`
	Queue   [][]string `json:"queue"`
	Visited [][2]int64 `json:"visited"` // hash (as int64 bits), depth
}

const stateFormat = "kafkasim-explore-state/1"

// FormatChoices renders choices as "kind:index/n" strings.
func FormatChoices(cs []sim.Choice) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.String()
	}
	return out
}

// ParseChoice is the inverse of sim.Choice.String.
func ParseChoice(s string) (sim.Choice, error) {
	kind, rest, ok := strings.Cut(strings.TrimSpace(s), ":")
	idx, n, ok2 := strings.Cut(rest, "/")
	if !ok || !ok2 {
		return sim.Choice{}, fmt.Errorf("choice %q: want kind:index/n, e.g. fault:2/5", s)
	}
	k, err := sim.ParseKind(kind)
	if err != nil {
		return sim.Choice{}, err
	}
	i, err1 := strconv.Atoi(idx)
	m, err2 := strconv.Atoi(n)
	if err1 != nil || err2 != nil || m < 2 || i < 0 || i >= m {
		return sim.Choice{}, fmt.Errorf("choice %q: want 0 <= index < n and n >= 2", s)
	}
	return sim.Choice{Kind: k, N: m, Index: i}, nil
}

func (s *search) save(path, key string) error {
	f := stateFile{Format: stateFormat, Key: key, Runs: s.runs, Depth: s.depth}
	for _, q := range s.queue {
		f.Queue = append(f.Queue, FormatChoices(q))
	}
	for h, d := range s.visited {
		f.Visited = append(f.Visited, [2]int64{int64(h), int64(d)})
	}
	slices.SortFunc(f.Visited, func(a, b [2]int64) int { return int(cmpU(uint64(a[0]), uint64(b[0]))) })
	data, err := json.Marshal(f)
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

func cmpU(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// load reads a saved search; a missing file is a fresh start (nil).
func load(path, key string) (*search, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f stateFile
	if err := json.Unmarshal(data, &f); err != nil || f.Format != stateFormat {
		return nil, fmt.Errorf("%s: not a kafkasim explore state file (%v)", path, err)
	}
	if f.Key != key {
		return nil, fmt.Errorf("%s: saved for %q, not for %q: use another file or the same scenario and bounds", path, f.Key, key)
	}
	s := &search{visited: make(map[uint64]int, len(f.Visited)), runs: f.Runs, depth: f.Depth}
	for _, q := range f.Queue {
		var p []sim.Choice
		for _, c := range q {
			ch, err := ParseChoice(c)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			p = append(p, ch)
		}
		s.queue = append(s.queue, p)
	}
	for _, v := range f.Visited {
		s.visited[uint64(v[0])] = int(v[1])
	}
	return s, nil
}
