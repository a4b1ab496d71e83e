package main

import (
	"reflect"
	"strings"
	"testing"
)

// tableSnippet is the data-table format of 1.1 (a Dynamic Update Mode
// column; each cell closed twice, as 1.1 to 2.3 render it), with a
// description holding markup and a newline.
const tableSnippet = `<table class="data-table"><tbody>
<tr>
<th>Name</th>
<th>Description</th>
<th>Type</th>
<th>Default</th>
<th>Valid Values</th>
<th>Importance</th>
<th>Dynamic Update Mode</th>
</tr>
<tr>
<td>zookeeper.connect</td></td><td>Zookeeper host string</td></td><td>string</td></td><td></td></td><td></td></td><td>high</td></td><td>read-only</td></tr>
<tr>
<td>advertised.listeners</td></td><td>Listeners to publish, see <code>listeners</code></td><td>x</td>.
Unlike <code>listeners</code> it is not valid to advertise 0.0.0.0.</td></td><td>string</td></td><td>null</td></td><td></td></td><td>high</td></td><td>per-broker</td></tr>
<tr>
<td>log.cleanup.policy</td></td><td>The default cleanup policy</td></td><td>list</td></td><td>[delete]</td></td><td>[compact, delete]</td></td><td>medium</td></td><td>cluster-wide</td></tr>
<tr>
<td>principal.builder.class</td></td><td>The principal builder</td></td><td>class</td></td><td>class org.apache.kafka.common.security.auth.DefaultPrincipalBuilder</td></td><td></td></td><td>medium</td></td><td>per-broker</td></tr>
</tbody></table>
`

// topicTableSnippet is 0.10.1's topic table: a Server Default Property
// column, cells closed once.
const topicTableSnippet = `<table class="data-table"><tbody>
<tr>
<th>Name</th>
<th>Description</th>
<th>Type</th>
<th>Default</th>
<th>Valid Values</th>
<th>Server Default Property</th>
<th>Importance</th>
</tr>
<tr>
<td>max.message.bytes</td><td>This is largest message size Kafka will allow to be appended.</td><td>int</td><td>1000012</td><td>[0,...]</td><td>message.max.bytes</td><td>medium</td></tr>
<tr>
<td>metric.reporters</td><td>A list of classes</td><td>list</td><td>[]</td><td></td><td></td><td>low</td></tr>
</tbody></table>
`

// horizontalSnippet is 2.4's format.
const horizontalSnippet = `<ul class="config-list">
<li><b>key.serializer</b>: Serializer class for key.<br/><ul class="horizontal-list"><li><b>Type</b>: class</li><li><b>Default</b>: </li><li><b>Valid Values</b>: </li><li><b>Importance</b>: high</li></ul></li>
<li><b>acks</b>: The number of acknowledgments:  <ul> <li><code>acks=0</code> none. <li><code>acks=all</code> all.</ul><br/><ul class="horizontal-list"><li><b>Type</b>: string</li><li><b>Default</b>: 1</li><li><b>Valid Values</b>: [all, -1, 0, 1]</li><li><b>Importance</b>: high</li></ul></li>
<li><b>client.id</b>: An id string.<br/><ul class="horizontal-list"><li><b>Type</b>: string</li><li><b>Default</b>: ""</li><li><b>Valid Values</b>: </li><li><b>Importance</b>: medium</li><li><b>Update Mode</b>: read-only</li></ul></li>
</ul>
`

// headingSnippet is the format of 2.5 on, with 2.5's multi-line <h4> and
// 3.x's one-line one, a unit after a .ms default, and a description that
// holds a table of its own.
const headingSnippet = `<ul class="config-list">
<li>
<h4 class="anchor-heading">
   <a class="anchor-link" id="retention.ms"></a>
   <a href="#retention.ms">retention.ms</a>
</h4>
<p>How long. <table><tbody><tr><th>Type:</th><td>bogus</td></tr></tbody></table> Really.</p>
<table class="data-table"><tbody>
<tr><th>Type:</th><td>long</td></tr>
<tr><th>Default:</th><td>604800000 (7 days)</td></tr>
<tr><th>Valid Values:</th><td>[-1,...]</td></tr>
<tr><th>Server Default Property:</th><td>log.retention.ms</td></tr>
<tr><th>Importance:</th><td>medium</td></tr>
</tbody></table>
</li>
<li>
<h4><a id="group.protocol"></a><a id="consumerconfigs_group.protocol" href="#consumerconfigs_group.protocol">group.protocol</a></h4>
<p>The group protocol.</p>
<table><tbody>
<tr><th>Type:</th><td>string</td></tr>
<tr><th>Default:</th><td>classic</td></tr>
<tr><th>Valid Values:</th><td>(case insensitive) [CONSUMER, CLASSIC]</td></tr>
<tr><th>Importance:</th><td>high</td></tr>
</tbody></table>
</li>
<li>
<h4><a id="partition.assignment.strategy"></a><a href="#x">partition.assignment.strategy</a></h4>
<p>Assignors.</p>
<table><tbody>
<tr><th>Type:</th><td>list</td></tr>
<tr><th>Default:</th><td>class org.apache.kafka.clients.consumer.RangeAssignor,class org.apache.kafka.clients.consumer.CooperativeStickyAssignor</td></tr>
<tr><th>Valid Values:</th><td>org.apache.kafka.common.config.ConfigDef$NonNullValidator@7cd62f43</td></tr>
<tr><th>Importance:</th><td>medium</td></tr>
</tbody></table>
</li>
<li>
<h4><a id="local.retention.ms"></a><a href="#y">local.retention.ms</a></h4>
<p>Local.</p>
<table><tbody>
<tr><th>Type:</th><td>long</td></tr>
<tr><th>Default:</th><td>-2</td></tr>
<tr><th>Valid Values:</th><td>[-2,...]</td></tr>
<tr><th>Server Default Property:</th><td>null</td></tr>
<tr><th>Importance:</th><td>medium</td></tr>
</tbody></table>
</li>
</ul>
`

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		want []Prop
	}{
		{"data-table with update mode", tableSnippet, []Prop{
			{Name: "zookeeper.connect", Type: "string", NoDefault: true, Importance: "high", UpdateMode: "read-only"},
			{Name: "advertised.listeners", Type: "string", NoDefault: true, Importance: "high", UpdateMode: "per-broker"},
			{Name: "log.cleanup.policy", Type: "list", Default: "delete", Valid: "[compact, delete]", Importance: "medium", UpdateMode: "cluster-wide"},
			{Name: "principal.builder.class", Type: "class", Default: "org.apache.kafka.common.security.auth.DefaultPrincipalBuilder", Importance: "medium", UpdateMode: "per-broker"},
		}},
		{"data-table with server default", topicTableSnippet, []Prop{
			{Name: "max.message.bytes", Type: "int", Default: "1000012", Valid: "[0,...]", Importance: "medium", ServerDefault: "message.max.bytes"},
			{Name: "metric.reporters", Type: "list", Default: "", Importance: "low"},
		}},
		{"horizontal-list", horizontalSnippet, []Prop{
			{Name: "key.serializer", Type: "class", NoDefault: true, Importance: "high"},
			{Name: "acks", Type: "string", Default: "1", Valid: "[all, -1, 0, 1]", Importance: "high"},
			{Name: "client.id", Type: "string", Default: "", Importance: "medium", UpdateMode: "read-only"},
		}},
		{"headings", headingSnippet, []Prop{
			{Name: "retention.ms", Type: "long", Default: "604800000", Valid: "[-1,...]", Importance: "medium", ServerDefault: "log.retention.ms"},
			{Name: "group.protocol", Type: "string", Default: "classic", Valid: "(case insensitive) [CONSUMER, CLASSIC]", Importance: "high"},
			{Name: "partition.assignment.strategy", Type: "list", Default: "org.apache.kafka.clients.consumer.RangeAssignor,org.apache.kafka.clients.consumer.CooperativeStickyAssignor", Valid: "non-null string", Importance: "medium"},
			{Name: "local.retention.ms", Type: "long", Default: "-2", Valid: "[-2,...]", Importance: "medium"},
		}},
	} {
		got, err := Parse(c.src)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
}

func TestParseRejects(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"<p>hello</p>", "not a ConfigDef rendering"},
		{strings.Replace(topicTableSnippet, "<td>int</td>", "<td>integer</td>", 1), `type "integer"`},
		{strings.Replace(topicTableSnippet, "<td>medium</td></tr>", "<td>urgent</td></tr>", 1), `importance "urgent"`},
		{strings.Replace(headingSnippet, "Server Default Property:", "Server Fallback:", 1), `unknown attribute "Server Fallback"`},
		{strings.Replace(horizontalSnippet, "<li><b>Default</b>: 1</li>", "", 1), "no Default"},
		{strings.Replace(tableSnippet, "<td>high</td></td><td>read-only</td></tr>", "<td>high</td></td><td>sometimes</td></tr>", 1), `update mode "sometimes"`},
	} {
		_, err := Parse(c.src)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(...) error %v, want one with %q", err, c.want)
		}
	}
}

func TestNormalise(t *testing.T) {
	for _, c := range []struct {
		typ, in  string
		out      string
		noDefalt bool
	}{
		{"long", "604800000 (7 days)", "604800000", false},
		{"int", "1048576 (1 mebibyte)", "1048576", false},
		{"string", "null", "", true},
		{"string", "", "", true},
		{"string", `""`, "", false},
		{"list", `""`, "", false},
		{"list", "[]", "", false},
		{"list", "[delete]", "delete", false},
		{"list", "[PLAINTEXT, SSL]", "PLAINTEXT,SSL", false},
		{"list", "uniform,range", "uniform,range", false},
		{"class", "class org.Foo", "org.Foo", false},
		{"class", "interface org.Bar", "org.Bar", false},
		{"string", "PLAINTEXT://:9092", "PLAINTEXT://:9092", false},
		{"string", "x (y)", "x (y)", false}, // units are only stripped from numbers
		{"double", "1.7976931348623157E308", "1.7976931348623157E308", false},
	} {
		out, none := normalise(c.typ, c.in)
		if out != c.out || none != c.noDefalt {
			t.Errorf("normalise(%s, %q) = %q, %v; want %q, %v", c.typ, c.in, out, none, c.out, c.noDefalt)
		}
	}
}

func TestSpansMergeOnlyConsecutiveIdentical(t *testing.T) {
	a := &Prop{Name: "x", Type: "int", Default: "1", Importance: "high"}
	b := &Prop{Name: "x", Type: "int", Default: "2", Importance: "high"}
	got := spans([]*Prop{a, a, b, nil, b, a, a})
	want := []def{{*a, 0, 1}, {*b, 2, 2}, {*b, 4, 4}, {*a, 5, 6}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("spans = %+v, want %+v", got, want)
	}
}

func TestReleaseName(t *testing.T) {
	for dir, want := range map[string]string{"090": "0.9.0", "0100": "0.10.0", "0102": "0.10.2", "0110": "0.11.0", "10": "1.0", "28": "2.8", "39": "3.9", "41": "4.1"} {
		if got, err := releaseName(dir); got != want || err != nil {
			t.Errorf("releaseName(%q) = %q, %v; want %q", dir, got, err, want)
		}
	}
	for _, dir := range []string{"", "4", "0.9", "abc", "123"} {
		if got, err := releaseName(dir); err == nil {
			t.Errorf("releaseName(%q) = %q, want an error", dir, got)
		}
	}
	if !versionLess("0.9.0", "0.10.0") || !versionLess("2.8", "3.0") || versionLess("4.1", "4.0") {
		t.Error("versionLess orders releases wrongly")
	}
}

func TestRunWithoutInput(t *testing.T) {
	err := run("", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "KAFKA_SITE_INPUT") {
		t.Errorf("run without input: %v, want an error naming KAFKA_SITE_INPUT", err)
	}
}
