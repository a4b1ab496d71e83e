package main

import (
	"fmt"
	"html"
	"regexp"
	"strings"
)

// Prop is one property as one release's documentation renders it, its
// description dropped and its default normalised (see normalise).
type Prop struct {
	Name          string
	Type          string // "int", "list", ... as rendered
	Default       string
	NoDefault     bool
	Valid         string
	Importance    string
	UpdateMode    string
	ServerDefault string
}

// The attribute names every format uses (the table format's column
// headers; the list formats add a colon).
const (
	colName          = "Name"
	colDescription   = "Description"
	colType          = "Type"
	colDefault       = "Default"
	colValid         = "Valid Values"
	colImportance    = "Importance"
	colUpdateMode    = "Update Mode"
	colDynamicUpdate = "Dynamic Update Mode"
	colServerDefault = "Server Default Property"
)

// Parse reads one ConfigDef.toHtml rendering in any of the three formats
// Kafka's site has used: the <table class="data-table"> of one row per
// property (0.9.0 to 2.3), the <ul class="config-list"> of <li><b>name</b>
// with a <ul class="horizontal-list"> (2.4), and the <ul class="config-list">
// of an <h4> heading and a small table per property (2.5 on).
func Parse(src string) ([]Prop, error) {
	head := src
	if len(head) > 400 {
		head = head[:400]
	}
	switch {
	case strings.Contains(src, `<ul class="horizontal-list">`):
		return parseHorizontal(src)
	case strings.Contains(head, `<ul class="config-list">`):
		return parseHeadings(src)
	case strings.Contains(head, `<table class="data-table">`):
		return parseTable(src)
	}
	return nil, fmt.Errorf("not a ConfigDef rendering: want a <table class=\"data-table\"> or a <ul class=\"config-list\"> at the start")
}

var (
	thRE  = regexp.MustCompile(`<th>([^<]*)</th>`)
	rowRE = regexp.MustCompile(`(?m)^<tr>\n<td>`)
	// cellRE separates cells; 1.1 to 2.3 close each cell twice.
	cellRE  = regexp.MustCompile(`</td>(?:</td>)?<td>`)
	rowEnd  = regexp.MustCompile(`</td>(?:</td>)?</tr>\s*(?:</tbody></table>\s*)?$`)
	tagRE   = regexp.MustCompile(`<[^>]*>`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// parseTable reads the data-table format: a header row of <th> names,
// then one <tr> per property. The description is the only cell that can
// hold markup, so a row's cells are counted from both ends around it.
func parseTable(src string) ([]Prop, error) {
	first := rowRE.FindStringIndex(src)
	if first == nil {
		return nil, fmt.Errorf("data-table without property rows")
	}
	var cols []string
	for _, m := range thRE.FindAllStringSubmatch(src[:first[0]], -1) {
		cols = append(cols, strings.TrimSpace(m[1]))
	}
	if len(cols) < 6 || cols[0] != colName || cols[1] != colDescription {
		return nil, fmt.Errorf("data-table header %q: want Name, Description, then the attributes", cols)
	}
	starts := rowRE.FindAllStringIndex(src, -1)
	var out []Prop
	for i, s := range starts {
		end := len(src)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		row := src[s[1]:end]
		loc := rowEnd.FindStringIndex(row)
		if loc == nil {
			return nil, fmt.Errorf("row %d: no closing </td></tr>", i+1)
		}
		cells := cellRE.Split(row[:loc[0]], -1)
		if len(cells) < len(cols) {
			return nil, fmt.Errorf("row %d (%.40q): %d cells, want %d", i+1, row, len(cells), len(cols))
		}
		attrs := map[string]string{colName: cells[0]}
		tail := cells[len(cells)-(len(cols)-2):]
		for j, c := range cols[2:] {
			attrs[c] = tail[j]
		}
		p, err := fromAttrs(attrs)
		if err != nil {
			return nil, fmt.Errorf("row %d: %v", i+1, err)
		}
		out = append(out, p)
	}
	return out, nil
}

var (
	liNameRE = regexp.MustCompile(`(?m)^<li><b>([^<]+)</b>:`)
	hlistRE  = regexp.MustCompile(`(?s)<ul class="horizontal-list">(.*?)</ul></li>`)
	hattrRE  = regexp.MustCompile(`(?s)<li><b>([^<]+)</b>: (.*?)</li>`)
)

// parseHorizontal reads the 2.4 format: each property opens a line with
// <li><b>name</b>: and ends with its attributes in a horizontal-list.
func parseHorizontal(src string) ([]Prop, error) {
	starts := liNameRE.FindAllStringSubmatchIndex(src, -1)
	var out []Prop
	for i, s := range starts {
		end := len(src)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		name := src[s[2]:s[3]]
		lists := hlistRE.FindAllStringSubmatch(src[s[1]:end], -1)
		if len(lists) == 0 {
			return nil, fmt.Errorf("property %q: no horizontal-list of attributes", name)
		}
		attrs := map[string]string{colName: name}
		for _, m := range hattrRE.FindAllStringSubmatch(lists[len(lists)-1][1], -1) {
			attrs[m[1]] = m[2]
		}
		p, err := fromAttrs(attrs)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

var (
	h4RE    = regexp.MustCompile(`(?s)<h4[^>]*>(.*?)</h4>`)
	hrowRE  = regexp.MustCompile(`(?s)<tr><th>([^<]+):</th><td>(.*?)</td></tr>`)
	htableE = regexp.MustCompile(`(?s)<table[^>]*><tbody>\s*<tr><th>Type:</th>.*?</tbody></table>`)
)

// parseHeadings reads the format of 2.5 on: an <h4> naming the property,
// its description, and a table of "Type:", "Default:" ... rows.
func parseHeadings(src string) ([]Prop, error) {
	starts := h4RE.FindAllStringSubmatchIndex(src, -1)
	if len(starts) == 0 {
		return nil, fmt.Errorf("config-list without <h4> properties")
	}
	var out []Prop
	for i, s := range starts {
		end := len(src)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		name := text(src[s[2]:s[3]])
		tables := htableE.FindAllString(src[s[1]:end], -1)
		if len(tables) == 0 {
			return nil, fmt.Errorf("property %q: no attribute table", name)
		}
		attrs := map[string]string{colName: name}
		for _, m := range hrowRE.FindAllStringSubmatch(tables[len(tables)-1], -1) {
			attrs[m[1]] = m[2]
		}
		p, err := fromAttrs(attrs)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// text is a cell's text: tags dropped, entities decoded, space collapsed.
func text(s string) string {
	s = tagRE.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
}

var knownTypes = map[string]bool{
	"boolean": true, "string": true, "int": true, "short": true, "long": true,
	"double": true, "list": true, "class": true, "password": true,
}

var knownImportance = map[string]bool{"high": true, "medium": true, "low": true}

var knownModes = map[string]bool{"": true, "read-only": true, "per-broker": true, "cluster-wide": true}

// fromAttrs builds a Prop from its rendered attributes.
func fromAttrs(a map[string]string) (Prop, error) {
	for k := range a {
		switch k {
		case colName, colType, colDefault, colValid, colImportance, colUpdateMode, colDynamicUpdate, colServerDefault:
		default:
			return Prop{}, fmt.Errorf("property %q: unknown attribute %q", text(a[colName]), k)
		}
	}
	p := Prop{
		Name:          text(a[colName]),
		Type:          strings.ToLower(text(a[colType])),
		Valid:         text(a[colValid]),
		Importance:    strings.ToLower(text(a[colImportance])),
		UpdateMode:    text(a[colUpdateMode] + a[colDynamicUpdate]),
		ServerDefault: text(a[colServerDefault]),
	}
	// A validator without a toString renders as Object.toString, whose
	// identity hash changes from build to build.
	// NonNullValidator gained its toString ("non-null string") in 2.1.
	p.Valid = hashRE.ReplaceAllString(p.Valid, "")
	if p.Valid == "org.apache.kafka.common.config.ConfigDef$NonNullValidator" {
		p.Valid = "non-null string"
	}
	if p.ServerDefault == "null" { // 3.0 renders a missing one so
		p.ServerDefault = ""
	}
	if p.Name == "" || strings.ContainsAny(p.Name, " <>\"") {
		return Prop{}, fmt.Errorf("bad property name %q", p.Name)
	}
	if !knownTypes[p.Type] {
		return Prop{}, fmt.Errorf("property %q: type %q, want one of boolean, string, int, short, long, double, list, class, password", p.Name, p.Type)
	}
	if !knownImportance[p.Importance] {
		return Prop{}, fmt.Errorf("property %q: importance %q, want high, medium or low", p.Name, p.Importance)
	}
	if !knownModes[p.UpdateMode] {
		return Prop{}, fmt.Errorf("property %q: update mode %q, want read-only, per-broker or cluster-wide", p.Name, p.UpdateMode)
	}
	raw, ok := a[colDefault]
	if !ok {
		return Prop{}, fmt.Errorf("property %q: no Default", p.Name)
	}
	p.Default, p.NoDefault = normalise(p.Type, text(raw))
	return p, nil
}

var (
	// unitRE is the unit Kafka appends to a .ms or .bytes default since
	// 3.x: "604800000 (7 days)", "1048588 (1.00 mebibyte)".
	hashRE = regexp.MustCompile(`@[0-9a-f]+$`)
	unitRE = regexp.MustCompile(`^(-?[0-9][0-9.E-]*) \([^()]*\)$`)
)

// normalise turns a rendered default into the catalog's form.
// ConfigDef renders "null" for a null default, nothing for a property
// without one (required: NO_DEFAULT_VALUE), and "\"\"" for an empty string
// (or, since 1.0, an empty list). Older releases render a list default as
// Java's List.toString ("[delete]", "[]") and a class default as
// Class.toString ("class org.apache..."); newer ones as ConfigDef's
// convertToString ("delete", the class name), the form kept here.
func normalise(typ, d string) (def string, none bool) {
	switch d {
	case "null", "":
		return "", true
	case `""`:
		return "", false
	}
	switch typ {
	case "int", "short", "long", "double":
		if m := unitRE.FindStringSubmatch(d); m != nil {
			d = m[1]
		}
	case "list":
		if strings.HasPrefix(d, "[") && strings.HasSuffix(d, "]") {
			items := strings.Split(d[1:len(d)-1], ",")
			for i := range items {
				items[i] = strings.TrimSpace(items[i])
			}
			d = strings.Join(items, ",")
		}
		// A list of classes renders each item as Class.toString.
		if strings.Contains(d, "class ") || strings.Contains(d, "interface ") {
			items := strings.Split(d, ",")
			for i := range items {
				items[i] = strings.TrimPrefix(strings.TrimPrefix(items[i], "class "), "interface ")
			}
			d = strings.Join(items, ",")
		}
	case "class":
		d = strings.TrimPrefix(strings.TrimPrefix(d, "class "), "interface ")
	}
	return d, false
}
