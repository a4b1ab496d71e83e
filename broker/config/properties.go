package config

// This file reads Java properties files (server.properties,
// producer.properties, consumer.properties) as Kafka does: Kafka's
// Utils.loadProps opens the file as an InputStream and calls
// java.util.Properties.load(InputStream), so the bytes are ISO-8859-1 (each
// byte is one character; a UTF-8 "é" reads as two characters, "Ã©") and
// anything else must be written as \uXXXX. The rules followed are those of
// Properties.load's documentation and its LineReader:
//
//   - a line is ended by \n, \r or \r\n; leading spaces, tabs and form
//     feeds are skipped, and a line left empty is skipped;
//   - a line whose first character is # or ! is a comment (a trailing
//     backslash does not continue a comment);
//   - a line ending in an odd number of backslashes continues on the next
//     line: the last backslash and the line break are dropped, and so is
//     the next line's leading whitespace;
//   - the key ends at the first unescaped =, : or whitespace; whitespace
//     around it and one = or : after whitespace are skipped; the rest of
//     the line, trailing whitespace included, is the value;
//   - in keys and values \t \n \r \f are those characters, \uXXXX is a
//     UTF-16 code unit (a malformed one is an error, as Java throws
//     IllegalArgumentException), and a backslash before any other character
//     is dropped (\= \: \# \! \\ and "\ " are the character).
//
// NB: it is hand-written rather than github.com/magiconair/properties,
// which gives no line per key, expands ${...} by default and accepts
// \UXXXX, which Java does not. It is pure: the caller reads the file.

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf16"
)

// Entry is one key/value of a properties file; Line is the line (from 1)
// where its logical line starts.
type Entry struct {
	Key, Value string
	Line       int
}

// ReadProperties parses the contents of a properties file named file (for
// messages) and returns its entries in file order. A key given twice gives
// two entries; the last one wins, as in Properties (DuplicateNotes). The
// only error is a malformed \uXXXX escape, as "file:line: ...".
func ReadProperties(file string, data []byte) ([]Entry, error) {
	var out []Entry
	for _, l := range logicalLines(data) {
		key, value, err := splitLine(l.text)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", file, l.line, err)
		}
		out = append(out, Entry{Key: key, Value: value, Line: l.line})
	}
	return out, nil
}

// DuplicateNotes returns a note for each key given more than once:
// "file: acks given twice, line 3 and line 9: line 9 wins", in order of
// the winning line.
func DuplicateNotes(file string, entries []Entry) []string {
	lines := map[string][]int{}
	var keys []string
	for _, e := range entries {
		if lines[e.Key] == nil {
			keys = append(keys, e.Key)
		}
		lines[e.Key] = append(lines[e.Key], e.Line)
	}
	var notes []string
	last := func(k string) int { ls := lines[k]; return ls[len(ls)-1] }
	sort.SliceStable(keys, func(i, j int) bool { return last(keys[i]) < last(keys[j]) })
	for _, k := range keys {
		ls := lines[k]
		if len(ls) < 2 {
			continue
		}
		times := "twice"
		if len(ls) > 2 {
			times = fmt.Sprintf("%d times", len(ls))
		}
		var at []string
		for _, l := range ls {
			at = append(at, fmt.Sprintf("line %d", l))
		}
		notes = append(notes, fmt.Sprintf("%s: %s given %s, %s: line %d wins", file, k, times,
			strings.Join(at[:len(at)-1], ", ")+" and "+at[len(at)-1], ls[len(ls)-1]))
	}
	return notes
}

// logical is one logical line: continuations joined, the backslashes that
// join them dropped, escapes not yet converted.
type logical struct {
	text []rune
	line int
}

func isSpace(c rune) bool { return c == ' ' || c == '\t' || c == '\f' }

// logicalLines splits data (ISO-8859-1) into logical lines, skipping
// comments and blank lines, as Java's Properties.LineReader.
func logicalLines(data []byte) []logical {
	var out []logical
	line := 1 // the physical line of data[i]
	i := 0
	// next returns the physical line starting at i, without its
	// terminator, and moves past it.
	next := func() []rune {
		var l []rune
		for i < len(data) && data[i] != '\n' && data[i] != '\r' {
			l = append(l, rune(data[i])) // ISO-8859-1: a byte is a character
			i++
		}
		if i < len(data) {
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			i++
		}
		line++
		return l
	}
	for i < len(data) {
		start := line
		l := trimLeft(next())
		if len(l) == 0 || l[0] == '#' || l[0] == '!' {
			continue
		}
		var text []rune
		for {
			odd := false
			for j := len(l) - 1; j >= 0 && l[j] == '\\'; j-- {
				odd = !odd
			}
			if !odd {
				text = append(text, l...)
				break
			}
			text = append(text, l[:len(l)-1]...)
			if i >= len(data) {
				break // a backslash at the end of the file is dropped
			}
			l = trimLeft(next())
		}
		out = append(out, logical{text: text, line: start})
	}
	return out
}

func trimLeft(l []rune) []rune {
	for len(l) > 0 && isSpace(l[0]) {
		l = l[1:]
	}
	return l
}

// splitLine splits a logical line into its key and value and converts
// their escapes, as Properties.load0 and loadConvert.
func splitLine(l []rune) (string, string, error) {
	keyLen, valueStart := 0, len(l)
	hasSep, escaped := false, false
	for ; keyLen < len(l); keyLen++ {
		c := l[keyLen]
		if !escaped && (c == '=' || c == ':') {
			valueStart, hasSep = keyLen+1, true
			break
		}
		if !escaped && isSpace(c) {
			valueStart = keyLen + 1
			break
		}
		escaped = c == '\\' && !escaped
	}
	for ; valueStart < len(l); valueStart++ {
		c := l[valueStart]
		if isSpace(c) {
			continue
		}
		if !hasSep && (c == '=' || c == ':') {
			hasSep = true
			continue
		}
		break
	}
	key, err := unescape(l[:keyLen])
	if err != nil {
		return "", "", err
	}
	value, err := unescape(l[valueStart:])
	return key, value, err
}

// unescape converts the escapes of a key or value.
func unescape(s []rune) (string, error) {
	var units []uint16 // UTF-16, as Java's chars: \uD83D\uDE00 is one character
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			units = append(units, uint16(c))
			continue
		}
		i++
		switch c = s[i]; c {
		case 't':
			c = '\t'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 'f':
			c = '\f'
		case 'u':
			if i+4 >= len(s) {
				return "", fmt.Errorf("malformed \\uxxxx escape \\%s: want \\u and four hexadecimal digits", string(s[i:]))
			}
			var v uint16
			for _, h := range s[i+1 : i+5] {
				d := hexDigit(h)
				if d < 0 {
					return "", fmt.Errorf("malformed \\uxxxx escape \\%s: want \\u and four hexadecimal digits", string(s[i:i+5]))
				}
				v = v<<4 | uint16(d)
			}
			units = append(units, v)
			i += 4
			continue
		}
		units = append(units, uint16(c))
	}
	return string(utf16.Decode(units)), nil
}

func hexDigit(c rune) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}
