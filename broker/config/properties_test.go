package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadPropertiesJavaRules: the cases of java.util.Properties.load's
// documentation (the Truth/Beauty and fruits examples) and of its
// LineReader, each with the entries Java's load would put.
func TestReadPropertiesJavaRules(t *testing.T) {
	for _, c := range []struct {
		name, text string
		want       []Entry
	}{
		{"separators", "Truth = Beauty\n Truth:Beauty\nTruth                    :Beauty\n",
			[]Entry{{"Truth", "Beauty", 1}, {"Truth", "Beauty", 2}, {"Truth", "Beauty", 3}}},
		{"whitespace separator", "a b\na\tb\na\fb\na  =  b\n", []Entry{{"a", "b", 1}, {"a", "b", 2}, {"a", "b", 3}, {"a", "b", 4}}},
		{"one separator after whitespace", "a = = b\na==b\na:b=c\na :: b\n",
			[]Entry{{"a", "= b", 1}, {"a", "=b", 2}, {"a", "b=c", 3}, {"a", ": b", 4}}},
		{"continuation", "fruits                           apple, banana, pear, \\\n                                  cantaloupe, watermelon, \\\n                                  kiwi, mango\nnext=1\n",
			[]Entry{{"fruits", "apple, banana, pear, cantaloupe, watermelon, kiwi, mango", 1}, {"next", "1", 4}}},
		{"key alone", "cheeses\ncheeses=\n   \n", []Entry{{"cheeses", "", 1}, {"cheeses", "", 2}}},
		{"comments", "# a comment \\\nkey=1\n  ! another\n\t#x=y\n", []Entry{{"key", "1", 2}}},
		{"no comment inside a continuation", "a=b\\\n#c\n", []Entry{{"a", "b#c", 1}}},
		{"even backslashes do not continue", "a=b\\\\\nc=d\n", []Entry{{"a", `b\`, 1}, {"c", "d", 2}}},
		{"three backslashes continue", "a=b\\\\\\\n  c\n", []Entry{{"a", `b\c`, 1}}},
		{"backslash at end of file dropped", "a=b\\", []Entry{{"a", "b", 1}}},
		{"backslash then blank line", "a=b\\\n\nc=d", []Entry{{"a", "b", 1}, {"c", "d", 3}}},
		{"escaped separators in key", "\\:\\=\\ x\\#\\!=v\nkey\\ with\\ spaces = v w \n",
			[]Entry{{":= x#!", "v", 1}, {"key with spaces", "v w ", 2}}},
		{"escapes", `a=\t\n\r\f\\\b\q\"`, []Entry{{"a", "\t\n\r\f\\bq\"", 1}}},
		{"unicode escapes", `a\u0041=\u00e9\u20AC\uD83D\uDE00`, []Entry{{"aA", "é€😀", 1}}},
		{"ISO-8859-1", "a=\xe9\n", []Entry{{"a", "é", 1}}},
		{"UTF-8 read as ISO-8859-1", "a=é\n", []Entry{{"a", "Ã©", 1}}},
		{"line ends", "a=1\r\nb=2\rc=3\n\r\nd=4", []Entry{{"a", "1", 1}, {"b", "2", 2}, {"c", "3", 3}, {"d", "4", 5}}},
		{"CRLF continuation", "a=1\\\r\n  2\r\nb=3\r\n", []Entry{{"a", "12", 1}, {"b", "3", 3}}},
		{"empty key", "=v\n:w\n", []Entry{{"", "v", 1}, {"", "w", 2}}},
		{"empty file", "", nil},
	} {
		got, err := ReadProperties("f.properties", []byte(c.text))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("%s: %q (-want +got):\n%s", c.name, c.text, d)
		}
	}
}

// TestReadPropertiesMalformedUnicode: Java throws "Malformed \uxxxx
// encoding." for a \u not followed by four hexadecimal digits; so do we,
// at file:line (the line where the logical line starts).
func TestReadPropertiesMalformedUnicode(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"a=1\n# \\uZZZZ in a comment is fine\nb=\\u12G4\n", `p.properties:3: malformed \uxxxx escape \u12G4`},
		{"a=1\n\nb=x\\\n  y\\u12", `p.properties:3: malformed \uxxxx escape \u12`},
		{"k\\uXYZW=1", `p.properties:1: malformed \uxxxx escape \uXYZW`},
	} {
		_, err := ReadProperties("p.properties", []byte(c.text))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to start with %q", c.text, err, c.want)
		}
	}
}

func TestDuplicateNotes(t *testing.T) {
	es, err := ReadProperties("s.properties", []byte("acks=1\nb=1\nacks=all\nc=1\nc=2\nc=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"s.properties: acks given twice, line 1 and line 3: line 3 wins",
		"s.properties: c given 3 times, line 4, line 5 and line 6: line 6 wins",
	}
	if d := cmp.Diff(want, DuplicateNotes("s.properties", es)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// kafkaShaped has the layout of Kafka's shipped config/server.properties
// (licence block, section banners, commented-out settings), in our words.
const kafkaShaped = `# This is a test file shaped like the server.properties Kafka ships:
# long comment blocks, banners, and settings between them.
#
#    http://example.invalid/licence
#

############################# Server Basics #############################

# The id of this broker. It must be unique within the cluster.
broker.id=0

############################# Socket Server Settings #############################

# The address the socket server listens on. If not configured, the host name
# is taken from java.net.InetAddress.getCanonicalHostName().
#   FORMAT:
#     listeners = listener_name://host_name:port
#   EXAMPLE:
#     listeners = PLAINTEXT://your.host.name:9092
listeners=PLAINTEXT://:9092

############################# Log Basics #############################

# A comma separated list of directories under which to store log files
log.dirs=/tmp/kafka-logs

num.partitions=1

#log.flush.interval.messages=10000

############################# Zookeeper #############################

zookeeper.connect=localhost:2181
`

func TestReadPropertiesKafkaShaped(t *testing.T) {
	got, err := ReadProperties("server.properties", []byte(kafkaShaped))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{"broker.id", "0", 10},
		{"listeners", "PLAINTEXT://:9092", 20},
		{"log.dirs", "/tmp/kafka-logs", 25},
		{"num.partitions", "1", 27},
		{"zookeeper.connect", "localhost:2181", 33},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}
