// Package cleanpath is package path's Clean, Dir and Join without their
// scans of names already clean: the simulated disk and the broker's
// storage clean, split and join file names on every log open, checkpoint
// and directory sync, and a name the storage built is almost always
// clean. Every function returns exactly what package path returns.
package cleanpath

import (
	"path"
	"strings"
)

// IsClean reports whether path.Clean(name) is name, for every name but a
// relative one starting with "..": substring searches for the common
// names, an element scan for those holding "/." or starting with '.' (a
// dot file such as .kafka_cleanshutdown); false may also mean "ask
// path.Clean".
func IsClean(name string) bool {
	if name == "/" {
		return true
	}
	if name == "" || name[len(name)-1] == '/' || strings.Contains(name, "//") {
		return false
	}
	if name[0] != '.' && !strings.Contains(name, "/.") {
		return true
	}
	start := 0
	if name[0] == '/' {
		start = 1
	}
	for i := start; i <= len(name); i++ {
		if i < len(name) && name[i] != '/' {
			continue
		}
		if el := name[start:i]; el == "." || el == ".." {
			return false
		}
		start = i + 1
	}
	return true
}

// Clean is path.Clean(name).
func Clean(name string) string {
	if IsClean(name) {
		return name
	}
	return path.Clean(name)
}

// Dir is path.Dir(name), cut at the last slash when name is clean.
func Dir(name string) string {
	if !IsClean(name) {
		return path.Dir(name)
	}
	switch i := strings.LastIndexByte(name, '/'); i {
	case -1:
		return "."
	case 0:
		return "/"
	default:
		return name[:i]
	}
}

// Join is path.Join(dir, name); for a clean directory (not ".", "" or "/")
// and a plain name (one element other than "." and "..") it is
// dir + "/" + name.
func Join(dir, name string) string {
	if dir == "" || dir == "." || dir == "/" || !IsClean(dir) || !isPlainName(name) {
		return path.Join(dir, name)
	}
	return dir + "/" + name
}

func isPlainName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.Contains(name, "/")
}
