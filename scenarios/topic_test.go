package scenarios

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kafkasim/kafkasim/sim"
)

// TestTopicLineBounds: issue 13. A topic line the simulator cannot build
// (a replica on an absent broker used to panic in broker/cluster; two
// billion partitions ran out of memory) is refused at parse time as
// file:line, naming what is allowed.
func TestTopicLineBounds(t *testing.T) {
	long := strings.Repeat("a", 250)
	for src, want := range map[string]string{
		"brokers 3\ntopic t partitions=1 rf=3 assignment=0,1,5\n": "f.txt:2: assignment=\"0,1,5\": partition 0 names broker 5, but the brokers are 0..2",
		"brokers 3\ntopic t partitions=1 rf=2 assignment=1,1\n":   "f.txt:2: assignment=\"1,1\": partition 0 names broker 1 twice",
		"brokers 3\ntopic t partitions=1 rf=2 assignment=1\n":     "f.txt:2: assignment=\"1\": partition 0 has 1 replicas, the replication factor is 2",
		"brokers 3\ntopic t partitions=2 rf=1 assignment=0;x\n":   "f.txt:2: assignment=\"0;x\": want broker ids like 1,0;0,1, got \"x\"",
		"brokers 3\ntopic t partitions=2000000000\n":              "f.txt:2: partitions=\"2000000000\": want a number in [1, 10000]",
		"brokers 3\ntopic t rf=4\n":                               "f.txt:2: rf=\"4\": want a number in [1, 3]",
		"brokers 3\ntopic t partition=2\n":                        "f.txt:2: topic t: unknown key \"partition\" (allowed: partitions, rf, assignment, or a Kafka topic config, with or without config.: ",
		"brokers 3\ntopic t min.insync.replica=2\n":               "did you mean \"min.insync.replicas\"?",
		"brokers 3\ntopic t rf=2 min.insync.replicas=3\n":         "f.txt:2: topic t: min.insync.replicas=3 above rf=2",
		"brokers 3\ntopic t max.message.bytes=big\n":              "f.txt:2: topic t: config: max.message.bytes = \"big\": not an integer",
		"brokers 3\ntopic t compression.type=brotli\n":            "allowed: uncompressed, zstd (2.1+), lz4, snappy, gzip, producer",
		"brokers 3\ntopic t/0\n":                                  "f.txt:2: topic name \"t/0\": Kafka allows only ASCII letters, digits, '.', '_' and '-'",
		"brokers 3\ntopic ..\n":                                   "f.txt:2: topic name \"..\": Kafka refuses",
		"brokers 3\ntopic " + long + "\n":                         "f.txt:2: topic name of 250 characters: Kafka allows at most 249",
		"brokers 3\ntopic t\ntopic t\n":                           "f.txt:3: topic t defined twice",
		"topic t rf=2\nbrokers 3\n":                               "f.txt:1: topic t: no 'brokers N' line before it",
		"brokers 3\ntopic t rf=3\nbrokers 1\n":                    "f.txt:3: brokers: given twice",
		"brokers 65\n":                                            "f.txt:1: brokers \"65\": want a number in [1, 64]",
		"brokers 3\ntopic t\nrun 9223372036854h\n":                "f.txt:3: duration \"9223372036854h\": at most 1000h of simulated time",
		"brokers 3\ntopic t\nrun 99999999999999999999ms\n":        "f.txt:3: duration \"99999999999999999999ms\": at most 1000h",
		"brokers 3\ntopic t\nlimit 1001h\n":                       "f.txt:3: duration \"1001h\": at most 1000h",
		"brokers 3\ntopic t\nrun 1s\npause b0 3600001s\n":         "f.txt:4: duration \"3600001s\": at most 1000h",
		"brokers 3\ntopic t\nrun +5s\n":                           "f.txt:3: duration \"+5s\": want a non-negative integer",
	} {
		_, err := Parse("f.txt", "f", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("script %q:\n got %v\nwant it to contain %q", src, err, want)
		}
	}
}

// TestTopicLineWithinBounds: the bounds themselves are allowed.
func TestTopicLineWithinBounds(t *testing.T) {
	src := "brokers 3\ntopic t partitions=10000 rf=3\ntopic u.v_w-1 partitions=2 rf=2 assignment=2,0;0,1\nlimit 1000h\nrun 1000h\n"
	s, err := Parse("f.txt", "f", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := []TopicSpec{{Name: "t", Partitions: 10000, ReplicationFactor: 3, Line: 2}, {Name: "u.v_w-1", Partitions: 2, ReplicationFactor: 2, Assignment: [][]int32{{2, 0}, {0, 1}}, Line: 3}}
	if diff := cmp.Diff(want, s.Topics); diff != "" {
		t.Errorf("topics (-want +got):\n%s", diff)
	}
	if s.Limit != MaxDuration || s.Steps[0].Dur != 1000*sim.Hour {
		t.Errorf("limit %v, run %v: want 1000h each", s.Limit, s.Steps[0].Dur)
	}
}

// TestScriptLineTooLong: a line past the scanner's bound is named by
// file:line, not bufio's bare "token too long".
func TestScriptLineTooLong(t *testing.T) {
	src := "brokers 2\ntopic t\n# " + strings.Repeat("x", 100_000) + "\nrun 1s\n"
	_, err := Parse("long.txt", "long", strings.NewReader(src))
	if err == nil || !strings.Contains(err.Error(), "long.txt:3: line longer than 65536 bytes") {
		t.Fatalf("error = %v", err)
	}
}

// TestTopicLineConfigs: a topic line's topic properties are the topic's
// own configs.
func TestTopicLineConfigs(t *testing.T) {
	src := "brokers 3\ntopic t rf=3 min.insync.replicas=2 unclean.leader.election.enable=true cleanup.policy=compact max.message.bytes=2000\ntopic u\n"
	s, err := Parse("f.txt", "f", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"min.insync.replicas": "2", "unclean.leader.election.enable": "true", "cleanup.policy": "compact", "max.message.bytes": "2000"}
	if diff := cmp.Diff(want, s.Topics[0].Config); diff != "" {
		t.Errorf("topic t's configs (-want +got):\n%s", diff)
	}
	if s.Topics[1].Config != nil {
		t.Errorf("topic u: configs %v, want none", s.Topics[1].Config)
	}
}

// TestTopicLineTakesKafkaTopicConfigs: a topic line takes Kafka's topic
// configs, with or without kafka-topics' config. prefix; those kafkasim
// models go to Config, the others (checked against the run's release
// later) to Unmodelled; an unknown one is refused with the nearest name.
func TestTopicLineTakesKafkaTopicConfigs(t *testing.T) {
	s, err := Parse("f.txt", "f", strings.NewReader("brokers 3\ntopic t rf=3 config.max.message.bytes=2000000 min.insync.replicas=2 config.max.compaction.lag.ms=60000 message.timestamp.type=LogAppendTime\nrun 1s\n"))
	if err != nil {
		t.Fatal(err)
	}
	tp := s.Topics[0]
	if tp.Config["max.message.bytes"] != "2000000" || tp.Config["min.insync.replicas"] != "2" || len(tp.Config) != 2 {
		t.Errorf("Config = %v", tp.Config)
	}
	if tp.Unmodelled["max.compaction.lag.ms"] != "60000" || tp.Unmodelled["message.timestamp.type"] != "LogAppendTime" || len(tp.Unmodelled) != 2 {
		t.Errorf("Unmodelled = %v", tp.Unmodelled)
	}
	if tp.Line != 2 {
		t.Errorf("Line = %d, want 2", tp.Line)
	}
	_, err = Parse("f.txt", "f", strings.NewReader("brokers 3\ntopic t rf=3 config.max.compactoin.lag.ms=1\nrun 1s\n"))
	if err == nil || !strings.Contains(err.Error(), `f.txt:2: topic t: unknown key "config.max.compactoin.lag.ms"`) || !strings.Contains(err.Error(), `did you mean "max.compaction.lag.ms"?`) {
		t.Errorf("misspelt topic config: %v", err)
	}
}
